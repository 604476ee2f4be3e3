"""Speed and memory benchmark: `python -m scripts.bench [--dataset P] [--catalog P] [--agent M:C]`.

Runs a full evaluator pass in ONE process (evaluator + agent, as a contest
run would) and prints agent construction seconds, `respond` latency
(median / p95 / max), the score, and the process's peak RSS.  Timings are
printed, never asserted: they depend on the machine and its load.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

from contest.paths import add_no_cache_argument
from evaluator.data import load_catalog_view, read_jsonl, resolve_catalog, resolve_dataset
from evaluator.local_evaluator import DEFAULT_AGENT, build_summary, evaluate


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench", description=__doc__)
    ap.add_argument("--catalog")
    ap.add_argument("--dataset")
    ap.add_argument("--agent", default=DEFAULT_AGENT)
    ap.add_argument("--perturb", default="none")
    ap.add_argument("--json", dest="json_out", help="also write the figures as JSON here")
    add_no_cache_argument(ap)
    args = ap.parse_args(argv)

    from evaluator.perturb import parse_modes
    catalog_path = resolve_catalog(args.catalog)
    rows = read_jsonl(resolve_dataset(args.dataset))
    t0 = time.perf_counter()
    view = load_catalog_view(catalog_path, {r["ground_truth"]["parent_asin"] for r in rows})
    load_s = time.perf_counter() - t0
    records, stats = evaluate(args.agent, str(catalog_path), rows, view, workers=1,
                              modes=parse_modes(args.perturb), progress=sys.stderr.isatty())
    summary = build_summary(records)
    lat = stats["latency_ms"]
    figures = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "loadavg_1m_at_end": round(os.getloadavg()[0], 2),
        "catalog": str(catalog_path), "sessions": len(rows), "perturb": args.perturb, "agent": args.agent,
        "evaluator_catalog_load_s": round(load_s, 2),
        "construction_s": round(stats["construct_seconds"], 2),
        "respond_calls": lat["count"],
        "respond_median_ms": round(lat["median"], 3),
        "respond_p95_ms": round(lat["p95"], 3),
        "respond_max_ms": round(lat["max"], 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "technical_score": summary["recommended_technical_score"],
    }
    width = max(len(k) for k in figures)
    for k, v in figures.items():
        print(f"{k:<{width}}  {v}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
