"""Replay one evaluator session and show every decision of every turn.

    python -m demo.replay --sample-id public_0099
    python -m demo.replay --sample-id pop_0007 --dataset data/panels/popmatched.jsonl --perturb para
    python -m demo.replay --sample-id public_0099 --json > session.json

The session is played by the evaluator's own `run_session` (same simulated
customer, same perturbations, same hit rule: it stops at the first counted
hit), so the outcome printed here is the one the evaluator records.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from contest.paths import add_no_cache_argument
from demo.render import Style, render_session, use_color
from demo.session import DEFAULT_AGENT, ProductLookup, SessionError, build_agent, find_row, play_evaluator_session
from evaluator.data import read_jsonl, resolve_catalog, resolve_dataset
from evaluator.perturb import parse_modes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m demo.replay", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample-id", required=True, help="the session to replay, e.g. public_0099")
    ap.add_argument("--dataset", help="sessions JSONL (default: the public set)")
    ap.add_argument("--catalog", help="catalog JSONL (default: as the evaluator resolves it)")
    ap.add_argument("--agent", default=DEFAULT_AGENT, help="module:Class (default %(default)s)")
    ap.add_argument("--perturb", default="none", help="none | para | drop | catdamage | hideclue, or a '+' mix")
    ap.add_argument("--drop-rate", type=float, default=0.35, help="share of value words dropped by --perturb drop")
    ap.add_argument("--json", action="store_true", help="print the outcome, transcript and raw debug snapshots as JSON")
    ap.add_argument("--no-color", action="store_true", help="no ANSI colours (also off when stdout is not a tty)")
    add_no_cache_argument(ap)
    args = ap.parse_args(argv)
    try:
        catalog_path = resolve_catalog(args.catalog)
        dataset_path = resolve_dataset(args.dataset)
        modes = parse_modes(args.perturb)
        rows = read_jsonl(dataset_path)
        index, row = find_row(rows, args.sample_id)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    lookup = ProductLookup(catalog_path)
    agent = build_agent(catalog_path, args.agent)
    print(f"catalog {catalog_path} ({len(lookup)} products), agent ready in {time.perf_counter() - t0:.1f} s; "
          f"dataset {dataset_path}", file=sys.stderr)
    try:
        result = play_evaluator_session(agent, lookup, row, 0, modes, args.drop_rate,
                                        "+".join(sorted(modes)) or "none")
    except SessionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(result.to_dict(raw=True), sys.stdout, indent=1, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        print(render_session(result, Style(use_color(sys.stdout, args.no_color))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
