"""Local TechJam Track 4 evaluator: `python -m evaluator.local_evaluator`.

Plays every session of a dataset against an agent with the protocol's
simulated customer and writes the official summary JSON.  It knows nothing
about any agent: the class is imported from `--agent module:Class`.
"""
from __future__ import annotations

import argparse
import importlib
import json
import logging
import multiprocessing as mp
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import contest as P
from contest.paths import add_no_cache_argument, load_env_file, missing_data_help
from evaluator.data import load_catalog, load_catalog_view, read_jsonl, resolve_catalog, resolve_dataset
from evaluator.perturb import make_phrasing, parse_modes

log = logging.getLogger("evaluator")
DEFAULT_AGENT = "starter.agent:Agent"


def load_agent_class(spec: str) -> Callable[[str], Any]:
    """Import `module:Class`."""
    module_name, _, class_name = spec.partition(":")
    if not class_name:
        raise ValueError(f"--agent must look like module:Class, got {spec!r}")
    return getattr(importlib.import_module(module_name), class_name)


def construct_agent(spec: str, catalog_path: str) -> Any:
    """The agent, constructed; then, as this process owns its interpreter, its optional
    `freeze_for_serving` hook (an agent may settle its garbage collector there: a library constructor
    must not change the whole interpreter)."""
    agent = load_agent_class(spec)(catalog_path)
    hook = getattr(agent, "freeze_for_serving", None)
    if callable(hook):
        hook()
    return agent


def scenario_of(row: dict) -> Any:
    """A session's scenario: the row's own, or "human" for a persona card (PERSONAS.md)."""
    if P.is_persona_card(row):
        return str(row.get("scenario_type", P.persona.DEFAULT_SCENARIO))
    return row.get("scenario_type")


def build_customer(row: dict, target: dict, modes: frozenset[str],
                   drop_rate: float) -> P.Customer | P.PersonaCustomer:
    """The simulated shopper of one session: a persona card's person, or the template
    shopper of PROTOCOL.md, optionally with a perturbed voice."""
    if P.is_persona_card(row):
        if modes:
            raise ValueError("--perturb rewords the template shopper; persona cards speak for themselves")
        if P.persona.is_script_card(row):
            return P.persona.ScriptedCustomer.from_card(row)
        return P.PersonaCustomer.from_card(row)
    card, behavior = P.card_from_row(row, target)
    customer = P.Customer(
        scenario_type=str(row.get("scenario_type", "")),
        category=P.coarse_category(target.get("categories")),
        card=card,
        behavior=behavior,
    )
    if modes:
        sample_id = str(row.get("sample_id", ""))
        customer.phrasing = make_phrasing(modes, sample_id, drop_rate)
        if "hideclue" in modes and card.constraints:
            customer.hidden = frozenset({card.constraints[-1]})
    return customer


def run_session(agent: Any, row: dict, index: int, catalog: dict[str, dict],
                modes: frozenset[str] = frozenset(), drop_rate: float = 0.35,
                transcripts: bool = False) -> dict:
    """Play one session; return its record (hit, turn, rank, tokens, latencies)."""
    sample_id = str(row.get("sample_id", f"row_{index}"))
    target_id = row["ground_truth"]["parent_asin"]
    customer = build_customer(row, catalog[target_id], modes, drop_rate)
    session_id = f"session-{index:05d}-{sample_id}"
    agent.reset(session_id, row.get("user_profile") or {})
    message = customer.opening()
    record: dict[str, Any] = {
        "sample_id": sample_id,
        "scenario_type": scenario_of(row),
        "target_parent_asin": target_id,
        "hit": False, "turn": None, "rank": None,
    }
    if P.persona.is_script_card(row) and isinstance(row.get("moves"), list):
        record["moves"] = [str(m) for m in row["moves"]]
    turns: list[dict] = []
    latencies: list[float] = []
    prompt_tokens = completion_tokens = 0
    for turn in range(1, P.MAX_TURNS + 1):
        start = time.perf_counter()
        try:
            resp = agent.respond(session_id, message, turn, P.TOP_K)
        except Exception as exc:  # the protocol counts it as an empty response
            log.debug("agent raised on %s turn %d: %r", sample_id, turn, exc)
            resp = None
        latencies.append((time.perf_counter() - start) * 1000.0)
        if not P.valid_response(resp):
            resp = {"message": "", "ask_attribute": None, "recommendations": []}
        pt, ct = P.token_counts(resp)
        prompt_tokens += pt
        completion_tokens += ct
        recs = P.normalize_recommendations(resp.get("recommendations"), catalog)
        ask = resp.get("ask_attribute")
        if transcripts:
            turns.append({"turn": turn, "customer": message, "agent": resp.get("message"),
                          "ask_attribute": ask if isinstance(ask, (str, type(None))) else repr(ask),
                          "recommendations": recs, "latency_ms": round(latencies[-1], 3)})
        if target_id in recs and customer.hits_count():
            record.update(hit=True, turn=turn, rank=recs.index(target_id) + 1)
            break
        if turn == P.MAX_TURNS:
            break
        message = customer.override_message() if customer.is_override_turn(turn + 1) else customer.reply(ask, turn + 1)
    record["prompt_tokens"] = prompt_tokens
    record["completion_tokens"] = completion_tokens
    if transcripts:
        record["transcript"] = turns
    record["_latencies"] = latencies
    return record


# ---- worker processes -------------------------------------------------------
_W: dict[str, Any] = {}


def _worker_init(agent_spec: str, catalog_path: str, modes: frozenset[str], drop_rate: float,
                 transcripts: bool) -> None:
    t0 = time.perf_counter()
    _W["agent"] = construct_agent(agent_spec, catalog_path)
    _W["construct_s"] = time.perf_counter() - t0
    if "catalog" not in _W:  # spawn start method: nothing inherited
        _W["catalog"] = load_catalog(catalog_path)
    _W["opts"] = (modes, drop_rate, transcripts)


def _worker_run(job: tuple[int, dict]) -> dict:
    index, row = job
    modes, drop_rate, transcripts = _W["opts"]
    rec = run_session(_W["agent"], row, index, _W["catalog"], modes, drop_rate, transcripts)
    rec["_construct_s"] = _W["construct_s"]
    rec["_rss_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rec


def _progress(total: int, enabled: bool, initial: int = 0):
    """A progress bar on stderr, only when stderr is a terminal.  Without tqdm's monitor thread: it
    outlives the bar, and an index built later in a process with another thread is built without
    its helper processes (a fork copies one thread only)."""
    try:
        from tqdm import tqdm
        tqdm.monitor_interval = 0
        return tqdm(total=total, initial=initial, disable=not (enabled and sys.stderr.isatty()), unit="session",
                    file=sys.stderr, dynamic_ncols=True)
    except ImportError:  # pragma: no cover - tqdm is a dependency
        class _Null:
            def update(self, n: int = 1) -> None: ...
            def close(self) -> None: ...
        return _Null()


def evaluate(agent_spec: str, catalog_path: str, rows: list[dict], catalog: dict[str, dict],
             workers: int = 1, modes: frozenset[str] = frozenset(), drop_rate: float = 0.35,
             transcripts: bool = False, progress: bool = True) -> tuple[list[dict], dict]:
    """Run all sessions; return (records in input order, run statistics)."""
    jobs = list(enumerate(rows))
    records: list[dict] = []
    if workers <= 1:
        t0 = time.perf_counter()
        agent = construct_agent(agent_spec, catalog_path)
        construct = time.perf_counter() - t0
        bar = _progress(len(jobs), progress)          # after construction: the bar times sessions only
        for index, row in jobs:
            records.append(run_session(agent, row, index, catalog, modes, drop_rate, transcripts))
            bar.update(1)
        constructs = [construct]
        rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    else:
        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
        # An agent that keeps a built index on disk builds it once, in a process of its own (so this
        # one, which the workers copy, stays small), before the workers start, instead of in every
        # worker (`prepare_catalog`, optional); its time counts as construction.
        t0 = time.perf_counter()
        prepare = getattr(load_agent_class(agent_spec), "prepare_catalog", None)
        if callable(prepare):
            builder = ctx.Process(target=prepare, args=(catalog_path,))
            builder.start()
            builder.join()
        prepared = time.perf_counter() - t0
        _W["catalog"] = catalog  # inherited by forked workers; reloaded under spawn
        bar = None
        with ctx.Pool(workers, initializer=_worker_init,
                      initargs=(agent_spec, catalog_path, modes, drop_rate, transcripts)) as pool:
            for rec in pool.imap(_worker_run, jobs, chunksize=1):
                records.append(rec)
                if bar is None:   # the workers' agents are built: the bar starts with the first session
                    bar = _progress(len(jobs), progress, initial=1)
                else:
                    bar.update(1)
        constructs = sorted({prepared + r.pop("_construct_s") for r in records})
        rss_kb = max([r.pop("_rss_kb") for r in records] + [resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                                                            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss])
    if bar is not None:
        bar.close()
    latencies = [x for r in records for x in r.pop("_latencies")]
    stats = {
        "construct_seconds": max(constructs) if constructs else 0.0,
        "latency_ms": _latency_stats(latencies),
        "peak_rss_mb": rss_kb / 1024.0,
    }
    return records, stats


def _latency_stats(latencies: list[float]) -> dict:
    if not latencies:
        return {"median": 0.0, "p95": 0.0, "max": 0.0, "count": 0}
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"median": statistics.median(ordered), "p95": p95, "max": ordered[-1], "count": len(ordered)}


def build_summary(records: list[dict]) -> dict:
    """The official results JSON (6-decimal rounding, scenario metrics, sessions)."""
    overall = P.summarize([{"hit": r["hit"], "turn": r["turn"], "rank": r["rank"]} for r in records])
    scenario_metrics: dict[str, dict] = {}
    for scenario in dict.fromkeys(r["scenario_type"] for r in records):
        sub = P.summarize([r for r in records if r["scenario_type"] == scenario])
        scenario_metrics[scenario] = {k: sub[k] for k in ("sample_count", "hit_rate_at_10", "mrr", "mttc")}
    sessions = []
    for r in records:
        s = {k: v for k, v in r.items() if k not in ("prompt_tokens", "completion_tokens")}
        sessions.append(s)
    prompt = sum(r["prompt_tokens"] for r in records)
    completion = sum(r["completion_tokens"] for r in records)
    return {
        "sample_count": overall["sample_count"],
        "hit_rate_at_10": overall["hit_rate_at_10"],
        "mrr": overall["mrr"],
        "mttc": overall["mttc"],
        "efficiency": overall["efficiency"],
        "recommended_technical_score": overall["recommended_technical_score"],
        "reported_token_usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                                 "total_tokens": prompt + completion},
        "scenario_metrics": scenario_metrics,
        **({"move_metrics": move_metrics(records)} if any("moves" in r for r in records) else {}),
        "sessions": sessions,
    }


def move_metrics(records: list[dict]) -> dict[str, dict]:
    """Scripted conversations: per move (PERSONAS.md), the scores of the sessions whose script contains it."""
    out: dict[str, dict] = {}
    moves = sorted({m for r in records for m in r.get("moves", [])})
    for move in moves:
        sub = P.summarize([r for r in records if move in r.get("moves", [])])
        out[move] = {k: sub[k] for k in ("sample_count", "hit_rate_at_10", "mrr", "mttc",
                                         "recommended_technical_score")}
    return out


def format_table(summary: dict, stats: dict | None = None) -> str:
    """Per-scenario table, the overall line, and run statistics."""
    lines = [f"{'scenario':<16}{'n':>5}{'hit@10':>9}{'mrr':>10}{'mttc':>8}"]
    for name, m in summary["scenario_metrics"].items():
        lines.append(f"{name:<16}{m['sample_count']:>5}{m['hit_rate_at_10']:>9.4f}{m['mrr']:>10.6f}{m['mttc']:>8.3f}")
    lines.append(
        f"{'overall':<16}{summary['sample_count']:>5}{summary['hit_rate_at_10']:>9.4f}{summary['mrr']:>10.6f}"
        f"{summary['mttc']:>8.3f}  efficiency {summary['efficiency']:.6f}  "
        f"TechnicalScore {summary['recommended_technical_score']:.6f}"
    )
    for move, m in summary.get("move_metrics", {}).items():
        lines.append(f"{'move ' + move:<16}{m['sample_count']:>5}{m['hit_rate_at_10']:>9.4f}{m['mrr']:>10.6f}"
                     f"{m['mttc']:>8.3f}  TechnicalScore {m['recommended_technical_score']:.6f}")
    tok = summary["reported_token_usage"]
    lines.append(f"tokens: prompt {tok['prompt_tokens']}, completion {tok['completion_tokens']}")
    if stats:
        lat = stats["latency_ms"]
        lines.append(
            f"respond latency ms: median {lat['median']:.3f}, p95 {lat['p95']:.3f}, max {lat['max']:.3f}"
            f" ({lat['count']} calls); construction {stats['construct_seconds']:.2f} s;"
            f" peak RSS {stats['peak_rss_mb']:.0f} MB"
        )
    return "\n".join(lines)


def select_rows(rows: list[dict], sample_ids: list[str] | None, limit: int | None) -> list[dict]:
    if sample_ids:
        wanted = set(sample_ids)
        rows = [r for r in rows if r.get("sample_id") in wanted]
        missing = wanted - {r.get("sample_id") for r in rows}
        if missing:
            raise SystemExit(f"unknown --sample-id: {', '.join(sorted(missing))}")
    if limit is not None:
        rows = rows[:limit]
    return rows


def check_targets(rows: list[dict], catalog: dict[str, dict]) -> None:
    """Fail before the run when a session's target is not in the catalog."""
    missing = []
    for r in rows:
        try:
            pid = r["ground_truth"]["parent_asin"]
        except (KeyError, TypeError):
            raise SystemExit(f"session {r.get('sample_id')!r} has no ground_truth.parent_asin") from None
        if pid not in catalog:
            missing.append(f"{r.get('sample_id')} -> {pid}")
    if missing:
        raise SystemExit(f"{len(missing)} target(s) missing from the catalog: " + "; ".join(missing[:10]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evaluator.local_evaluator", description=__doc__)
    ap.add_argument("--catalog", help="catalog JSONL (default: $CATALOG_PATH, data/catalog.jsonl, "
                                      "../shared/techjam/catalog_proxy.jsonl)")
    ap.add_argument("--dataset", help="sessions JSONL (default: data/public_set.jsonl, ../shared/techjam/public_set.jsonl)")
    ap.add_argument("--agent", default=DEFAULT_AGENT, help="module:Class of the agent (default %(default)s)")
    ap.add_argument("--output", default="results.json",
                    help="summary JSON path (default %(default)s; an existing file is replaced)")
    ap.add_argument("--workers", type=int, default=1, help="processes, each with its own agent")
    ap.add_argument("--limit", type=int, help="only the first N sessions")
    ap.add_argument("--sample-id", action="append", dest="sample_ids", help="only this session (repeatable)")
    ap.add_argument("--transcripts", action="store_true", help="record every turn in the sessions")
    ap.add_argument("--perturb", default="none", help="none | para | drop | catdamage | hideclue, or a '+' combination")
    ap.add_argument("--drop-rate", type=float, default=0.35, help="share of value words dropped by --perturb drop")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    add_no_cache_argument(ap)
    args = ap.parse_args(argv)

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    load_env_file()
    found: list[Path] = []
    problems = []
    for resolve, given in ((resolve_catalog, args.catalog), (resolve_dataset, args.dataset)):
        try:
            found.append(resolve(given))
        except FileNotFoundError as exc:
            problems.append(str(exc))
    if problems:    # both files checked at once, and what to do said once
        print(missing_data_help(problems), file=sys.stderr)
        return 2
    catalog_path, dataset_path = found
    try:
        modes = parse_modes(args.perturb)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        rows = select_rows(read_jsonl(dataset_path), args.sample_ids, args.limit)
        wanted = {r.get("ground_truth", {}).get("parent_asin") for r in rows
                  if isinstance(r.get("ground_truth"), dict)}
        catalog = load_catalog_view(catalog_path, wanted)
    except ValueError as exc:   # bad UTF-8, bad JSON: one line with file:line
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if modes and any(P.is_persona_card(r) for r in rows):
        print("error: --perturb rewords the template shopper; persona cards speak for themselves", file=sys.stderr)
        return 2
    check_targets(rows, catalog)
    print(f"catalog {catalog_path} ({len(catalog)} products); dataset {dataset_path} ({len(rows)} sessions); "
          f"agent {args.agent}; perturb {args.perturb}", file=sys.stderr)
    try:
        records, stats = evaluate(args.agent, str(catalog_path), rows, catalog, max(1, args.workers), modes,
                                  args.drop_rate, args.transcripts, progress=not args.quiet)
    except ValueError as exc:   # e.g. the agent refused the catalog (CatalogError is a ValueError)
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = build_summary(records)
    out = Path(args.output)
    replaced = out.exists()
    out.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    print(format_table(summary, stats))
    print(f"wrote {args.output}" + (" (replacing the previous file; --output names another)" if replaced else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
