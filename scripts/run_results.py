"""Run the results table: `python -m scripts.run_results [--only NAME ...] [--workers 2]`.

Every row is one evaluator run (`python -m evaluator.local_evaluator`), its
summary JSON kept under `OUT/runs/`, and the table written to `OUT/results.md`
(`--out OUT`; a new temporary folder by default, `--out evaluation_results` to
update the committed table).  Panels come from `scripts/make_panels.py`
(generated first when missing); the phone-typed copies of the confirm halves
from `scripts/typo_cards.py` (written afresh for each run of them).  Nothing
here is hand-typed: each figure in the table is read from the run's own
results file.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


from evaluator.data import PROJECT_ROOT, SHARED_DIR, resolve_dataset
from scripts.persona_split import HALVED_SETS, half_name

OUT = PROJECT_ROOT / "evaluation_results"
PANELS = PROJECT_ROOT / "data" / "panels"
OURS = "starter.agent:Agent"
WEAK = "evaluator.baselines:WeakBaselineAgent"
FLOOR = "evaluator.baselines:PopularityFloorAgent"
CUMULATIVE = "evaluator.baselines:CumulativeBM25Agent"
PERSONAS = PROJECT_ROOT / "data" / "personas"
SUBSET = str(SHARED_DIR / "catalog_subset.jsonl")


@dataclass(frozen=True)
class Run:
    name: str
    agent: str
    dataset: str          # "public" or a panel name
    perturb: str = "none"
    catalog: str | None = None
    env: tuple[tuple[str, str], ...] = ()


def default_runs() -> list[Run]:
    runs = []
    for label, agent in (("ours", OURS), ("weak-bm25", WEAK), ("popularity-floor", FLOOR)):
        for ds in ("public", "popmatched", "uniform", "realrows"):
            runs.append(Run(f"{label}.{ds}", agent, ds))
        runs.append(Run(f"{label}.public.subset-catalog", agent, "public", catalog=SUBSET))
    for mode in ("para", "drop", "catdamage", "hideclue", "para+drop+catdamage"):
        runs.append(Run(f"ours.public.{mode}", OURS, "public", mode))
    for mode in ("para", "drop"):
        runs.append(Run(f"ours.popmatched.{mode}", OURS, "popmatched", mode))
    # Persona sessions (PERSONAS.md): our development cards, both halves, a second and a third wording of the
    # same targets by other writers (never tuned on), the long-tail and terse halves, and the scripted
    # conversations' halves, the second, third and fourth waves of each by other writers, terse cards for the
    # public targets, and a fifth wave of openings that name only the kind of product (data/personas/README.md).
    halves = [half_name(card_set, half) for card_set in HALVED_SETS for half in ("tune", "confirm")]
    for half in halves[:2] + ["wording2", "wording3"] + halves[2:]:
        for label, agent in (("ours", OURS), ("weak-bm25", WEAK), ("cumulative-bm25", CUMULATIVE)):
            runs.append(Run(f"{label}.persona-{half}", agent, f"persona-{half}"))
    # The confirm halves typed on a phone (`scripts.typo_cards` at its rate, `RATE`): robustness to typing slips.
    for half in halves[1::2]:
        runs.append(Run(f"ours.persona-typed-{half}", OURS, f"typed-{half}"))
    return runs


def dataset_path(name: str) -> str:
    if name == "public":
        return str(resolve_dataset(None))
    if name.startswith("persona-"):
        return str(PERSONAS / f"{name[len('persona-'):]}.jsonl")
    if name.startswith("typed-"):
        return str(PANELS / "typed" / f"{name[len('typed-'):]}.jsonl")
    return str(PANELS / f"{name}.jsonl")


def ensure_panels(runs: Iterable[Run] = ()) -> None:
    if not all((PANELS / f"{n}.jsonl").is_file() for n in ("popmatched", "uniform", "realrows")):
        subprocess.run([sys.executable, "-m", "scripts.make_panels", "--all"], cwd=PROJECT_ROOT, check=True)
    typed = [r.dataset[len("typed-"):] for r in runs if r.dataset.startswith("typed-")]
    if typed:           # rewritten every time: a seeded copy of the cards as they are now
        from scripts.typo_cards import main as typo_cards
        typo_cards(["--out", str(PANELS / "typed"), *typed])


def execute(run: Run, workers: int, out_dir: Path = OUT) -> dict:
    out = out_dir / "runs" / f"{run.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "evaluator.local_evaluator", "--agent", run.agent, "--dataset",
           dataset_path(run.dataset), "--perturb", run.perturb, "--workers", str(workers), "--output", str(out),
           "--quiet"]
    if run.catalog:
        cmd += ["--catalog", run.catalog]
    import os
    env = dict(os.environ, **dict(run.env))
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{run.name} failed:\n{proc.stderr[-2000:]}")
    summary = json.loads(out.read_text())
    stats_line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("respond latency")), "")
    return {"run": run, "summary": summary, "seconds": time.perf_counter() - t0, "stats": stats_line}


def table(rows: list[dict]) -> str:
    head = ("| run | agent | dataset | catalog | perturb | n | Hit@10 | MRR | MTTC | TechnicalScore | tokens |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for r in rows:
        run, s = r["run"], r["summary"]
        tok = s["reported_token_usage"]
        lines.append(
            f"| {run.name} | `{run.agent.split(':')[1]}` | {run.dataset} | "
            f"{'subset (real rows)' if run.catalog else 'proxy'} | {run.perturb} | {s['sample_count']} | "
            f"{s['hit_rate_at_10']:.4f} | {s['mrr']:.6f} | {s['mttc']:.3f} | "
            f"**{s['recommended_technical_score']:.6f}** | {tok['prompt_tokens'] + tok['completion_tokens']} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.run_results", description=__doc__)
    ap.add_argument("--only", nargs="*", help="run names (or prefixes) to run; the table keeps earlier results")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, help="folder for runs/ and results.md (default: a new temporary folder; "
                                             "the committed table is evaluation_results/)")
    args = ap.parse_args(argv)
    if args.out is None:
        import tempfile
        args.out = Path(tempfile.mkdtemp(prefix="run_results-"))
    print(f"writing to {args.out}", file=sys.stderr, flush=True)
    runs = default_runs()
    if args.only:
        runs = [r for r in runs if any(r.name == o or r.name.startswith(o) for o in args.only)]
    ensure_panels(runs)
    try:
        from tqdm import tqdm
        it = tqdm(runs, unit="run", file=sys.stderr)
    except ImportError:  # pragma: no cover
        it = runs
    for run in it:
        res = execute(run, args.workers, args.out)
        print(f"{run.name}: {res['summary']['recommended_technical_score']:.6f} ({res['seconds']:.0f} s) "
              f"{res['stats']}", file=sys.stderr)
    # The table is rebuilt from every results file present, in the canonical order.
    rows = []
    for run in default_runs():
        path = args.out / "runs" / f"{run.name}.json"
        if path.is_file():
            rows.append({"run": run, "summary": json.loads(path.read_text())})
    text = ("# Results\n\nMade by `python -m scripts.run_results`; each row is one evaluator run whose summary is "
            "in `evaluation_results/runs/<run>.json`.\n\n" + table(rows) + "\n")
    (args.out / "results.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
