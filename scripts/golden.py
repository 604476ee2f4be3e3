"""The golden transcripts: a fixed set of sessions whose every turn (list, question, message) is committed,
so a test can tell that a change kept behaviour without keeping copies of old code.

    python -m scripts.golden --check      # play them and compare (what tests/test_golden.py does)
    python -m scripts.golden --write      # after a change meant to alter behaviour: rewrite the file

The set: the first sessions of the public set (every scenario), two of its
perturbations, and persona cards of every development set (public-target
halves, long-tail and terse), on the proxy catalog with `LLM_ENABLED=0`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Iterator

from contest.jsonl import read_jsonl
from contest.paths import PROJECT_ROOT, resolve_catalog, resolve_dataset

GOLDEN = PROJECT_ROOT / "tests" / "golden" / "transcripts.jsonl"
PERSONAS = PROJECT_ROOT / "data" / "personas"
# (label, dataset, perturbation, how many sessions from the start)
SETS: tuple[tuple[str, str, str, int], ...] = (
    ("public", "public", "", 60), ("public-para", "public", "para", 15), ("public-drop", "public", "drop", 15),
    ("persona-tune", "tune", "", 20), ("persona-confirm", "confirm", "", 20), ("longtail", "longtail", "", 20),
    ("terse", "terse", "", 20),
)


def sessions() -> Iterator[tuple[str, dict, frozenset[str]]]:
    """(label, dataset row, perturbation modes) of every golden session, in order."""
    for label, dataset, perturb, n in SETS:
        path = resolve_dataset(None) if dataset == "public" else PERSONAS / f"{dataset}.jsonl"
        modes = frozenset(perturb.split("+")) if perturb else frozenset()
        for row in read_jsonl(path)[:n]:
            yield label, row, modes


def play(agent: Any, catalog: dict[str, dict]) -> list[dict]:
    """Every golden session's transcript (latencies left out)."""
    from evaluator.local_evaluator import run_session

    out = []
    for k, (label, row, modes) in enumerate(sessions()):
        rec = run_session(agent, row, k, catalog, modes, transcripts=True)
        turns = [{key: t[key] for key in ("turn", "customer", "agent", "ask_attribute", "recommendations")}
                 for t in rec["transcript"]]
        out.append({"set": label, "sample_id": rec["sample_id"], "hit": rec["hit"], "turn": rec["turn"],
                    "rank": rec["rank"], "transcript": turns})
    return out


def targets() -> set[str]:
    return {row["ground_truth"]["parent_asin"] for _, row, _ in sessions()}


def differences(got: list[dict], want: list[dict]) -> list[str]:
    """Which sessions differ from the golden file, with the first turn that does."""
    out = []
    if len(got) != len(want):
        out.append(f"{len(got)} sessions against {len(want)} golden")
    for g, w in zip(got, want):
        if g != w:
            turn = next((a["turn"] for a, b in zip(g["transcript"], w["transcript"]) if a != b), "end")
            out.append(f"{w['set']} {w['sample_id']}: differs from turn {turn}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.golden", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--check", action="store_true")
    which.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    from evaluator.data import load_catalog_view
    from starter.agent import Agent

    catalog_path = resolve_catalog(None)
    got = play(Agent(str(catalog_path)), load_catalog_view(catalog_path, targets()))
    if args.write:
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in got), encoding="utf-8")
        print(f"wrote {GOLDEN} ({len(got)} sessions)", file=sys.stderr)
        return 0
    diff = differences(got, read_jsonl(GOLDEN))
    print("\n".join(diff) or f"all {len(got)} golden sessions identical")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
