"""Record every session of the identity suite, to tell whether a change kept behaviour.

    python -m scripts.identity_suite --out /tmp/identity/new [--only public persona-tune]
    python -m scripts.compare_runs /tmp/identity/old /tmp/identity/new

The suite is every template run of the results table (public, the panels, the
subset catalog and the perturbations) and every persona card set of
`data/personas/` (the tune and confirm halves, the other wordings and the
long-tail sets), each run with `--transcripts` so that
`compare_runs` compares every turn's list, question and message.  It writes
only under `--out` (never under evaluation_results/).  To compare two commits,
run it in each checkout (`git worktree add ../OLD <commit>`) into two folders.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from scripts.run_results import OURS, PANELS, PERSONAS, SUBSET, dataset_path, ensure_panels

TEMPLATE_RUNS: tuple[tuple[str, str, str, str | None], ...] = (
    # (name, dataset, perturb, catalog)
    ("public", "public", "none", None), ("popmatched", "popmatched", "none", None),
    ("uniform", "uniform", "none", None), ("realrows", "realrows", "none", None),
    ("subset", "public", "none", SUBSET),
    ("public.para", "public", "para", None), ("public.drop", "public", "drop", None),
    ("public.catdamage", "public", "catdamage", None), ("public.hideclue", "public", "hideclue", None),
    ("public.para+drop+catdamage", "public", "para+drop+catdamage", None),
    ("popmatched.para", "popmatched", "para", None), ("popmatched.drop", "popmatched", "drop", None),
)
# Whole card sets (the halves of the public-target cards, the long-tail sets whole).
PERSONA_SETS = ("tune", "confirm", "wording2", "wording3", "longtail", "terse")


def suite() -> list[tuple[str, str, str, str | None]]:
    """Every run: the template runs, then each persona card set present."""
    return list(TEMPLATE_RUNS) + [(f"persona-{n}", f"persona-{n}", "none", None) for n in PERSONA_SETS
                                  if (PERSONAS / f"{n}.jsonl").is_file()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.identity_suite", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path, help="folder for the runs' JSON (created)")
    ap.add_argument("--only", nargs="*", help="run names (or prefixes) to run")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    if any(name.startswith(("popmatched", "uniform", "realrows")) for name, *_ in suite()):
        ensure_panels()
    runs = [r for r in suite() if not args.only or any(r[0] == o or r[0].startswith(o) for o in args.only)]
    args.out.mkdir(parents=True, exist_ok=True)
    from tqdm import tqdm
    for name, dataset, perturb, catalog in tqdm(runs, unit="run", file=sys.stderr):
        cmd = [sys.executable, "-m", "evaluator.local_evaluator", "--agent", OURS, "--dataset",
               dataset_path(dataset), "--perturb", perturb, "--workers", str(args.workers), "--transcripts",
               "--quiet", "--output", str(args.out / f"{name}.json")]
        if catalog:
            cmd += ["--catalog", catalog]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=Path(__file__).resolve().parents[1], env=dict(os.environ),
                              capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{name} failed:\n{proc.stderr[-2000:]}", file=sys.stderr)
            return 1
        print(f"{name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
