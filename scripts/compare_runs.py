"""Are two sets of evaluator runs the same session for session?  `python -m scripts.compare_runs OLD NEW`

OLD and NEW are folders of results JSON written by `evaluator.local_evaluator`
(best with `--transcripts`, so every turn's list and question is compared).
Latencies are left out; everything else of each session must be equal.
When a run differs, its TechnicalScore (the mean of the sessions' rewards) is
given for both, with a 95% paired bootstrap interval of the change: a 50-card
half moves by about 0.01 when a few sessions change, and the interval says
whether a change is more than that.
Exit status 1 when any file differs or is missing; 2 (with a one-line error) when
a folder does not exist or holds no results.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from contest.rules import hit_reward

RESAMPLES = 2000          # bootstrap resamples of the sessions (seeded: the same runs give the same interval)


def sessions(path: Path) -> list[dict]:
    """A run's sessions without their timings."""
    out = json.loads(path.read_text(encoding="utf-8"))["sessions"]
    for s in out:
        for t in s.get("transcript", []):
            t.pop("latency_ms", None)
    return out


def rewards(runs: list[dict]) -> np.ndarray:
    """Each session's TechnicalScore: hit_reward of its first hit, 0 for a miss."""
    return np.array([hit_reward(s["rank"], s["turn"]) if s.get("hit") else 0.0 for s in runs], dtype=np.float64)


def paired_change(old: list[dict], new: list[dict], seed: int = 0) -> tuple[float, float, float, float]:
    """(old score, new score, low, high): the 95% bootstrap interval of the mean change over sessions
    paired by sample id (sessions present in only one run are left out)."""
    ids = [s["sample_id"] for s in old]
    by_id = {s["sample_id"]: s for s in new}
    pairs = [(a, by_id[i]) for a, i in zip(old, ids) if i in by_id]
    a = rewards([p for p, _ in pairs])
    b = rewards([q for _, q in pairs])
    diff = b - a
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(RESAMPLES, len(diff)))].mean(axis=1) if len(diff) else np.zeros(1)
    low, high = np.quantile(means, [0.025, 0.975])
    return float(a.mean()) if len(a) else 0.0, float(b.mean()) if len(b) else 0.0, float(low), float(high)


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
            if all("sample_id" in x for x in a + b):
                before, after, low, high = paired_change(a, b)
                print(f"     score {before:.6f} -> {after:.6f} ({after - before:+.6f}; 95% paired bootstrap "
                      f"{low:+.6f} to {high:+.6f})")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
