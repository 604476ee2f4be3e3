"""Are two sets of evaluator runs the same session for session?  `python -m scripts.compare_runs OLD NEW`

OLD and NEW are folders of results JSON written by `evaluator.local_evaluator`
(best with `--transcripts`, so every turn's list and question is compared).
Latencies are left out; everything else of each session must be equal.
Exit status 1 when any file differs or is missing; 2 (with a one-line error) when
a folder does not exist or holds no results.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def sessions(path: Path) -> list[dict]:
    """A run's sessions without their timings."""
    out = json.loads(path.read_text(encoding="utf-8"))["sessions"]
    for s in out:
        for t in s.get("transcript", []):
            t.pop("latency_ms", None)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.compare_runs", description=__doc__)
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    args = ap.parse_args(argv)
    for folder in (args.old, args.new):
        if not folder.is_dir():
            ap.error(f"{folder}: no such folder (runs made with `python -m scripts.identity_suite --out DIR`)")
    if not any(args.old.glob("*.json")):
        ap.error(f"{args.old}: no results JSON to compare")
    bad = 0
    for old in sorted(args.old.glob("*.json")):
        new = args.new / old.name
        if not new.is_file():
            print(f"missing {old.name}")
            bad += 1
            continue
        a, b = sessions(old), sessions(new)
        if a == b:
            print(f"same {old.name} ({len(a)} sessions)")
        else:
            differ = [x.get("sample_id") for x, y in zip(a, b) if x != y] + ["(count)"] * abs(len(a) - len(b))
            print(f"DIFF {old.name}: {len(differ)} sessions differ, e.g. {differ[:5]}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
