"""Are the people model's probabilities calibrated?  Predicted against observed, on held-out turns.

    python -m scripts.people_reliability      # -> evaluation_results/people/reliability.md (+ .png)

Every people-path turn of the confirm halves (public, long tail, terse, scripts)
is played with the committed model (weights and trees); per turn, the model's probability that its
first candidate is the target and the probability mass of its first ten are
set against what happened (the first is the target; the target is among the
ten).  Turns are put in deciles of the prediction.  The temperature that would
best rescale the tune halves' turns (maximum likelihood) is reported too: 1.0
means the fitted weights need no rescaling.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from contest.jsonl import read_jsonl
from contest.paths import PROJECT_ROOT
from scripts.fit_people import PERSONAS, TUNE_SETS, Turns, collect
from scripts.persona_split import HALVED_SETS, half_name

CONFIRM_SETS = tuple(half_name(card_set, "confirm") for card_set in HALVED_SETS)
OUT = PROJECT_ROOT / "evaluation_results" / "people" / "reliability.md"


def predictions(turns: Turns, w: np.ndarray, temperature: float = 1.0) -> tuple[np.ndarray, ...]:
    """Per turn: P(first), first is target, P(first ten), target in first ten."""
    p1, h1, p10, h10 = [], [], [], []
    for x, off, y in zip(turns.features, turns.offsets, turns.targets):
        z = (x @ w + off) / temperature
        p = np.exp(z - z.max())
        p /= p.sum()
        order = np.argsort(-p, kind="stable")
        p1.append(p[order[0]])
        h1.append(order[0] == y)
        p10.append(p[order[:10]].sum())
        h10.append(y in order[:10])
    return np.array(p1), np.array(h1, float), np.array(p10), np.array(h10, float)


def best_temperature(turns: Turns, w: np.ndarray) -> float:
    """The temperature of least negative log-likelihood on `turns` (a grid of 0.5..2 by 0.01)."""
    def nll(t: float) -> float:
        total = 0.0
        for x, off, y in zip(turns.features, turns.offsets, turns.targets):
            z = (x @ w + off) / t
            total -= z[y] - z.max() - np.log(np.exp(z - z.max()).sum())
        return total
    grid = np.round(np.arange(0.5, 2.0001, 0.01), 2)
    return float(grid[int(np.argmin([nll(t) for t in grid]))])


def deciles(pred: np.ndarray, hit: np.ndarray) -> list[tuple[float, float, int]]:
    """(mean prediction, observed rate, turns) per decile of the prediction."""
    order = np.argsort(pred, kind="stable")
    return [(float(pred[c].mean()), float(hit[c].mean()), len(c)) for c in np.array_split(order, 10) if len(c)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.people_reliability", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    from starter.people.correction import load_correction
    from starter.people.ranking import load_weights

    w, trees = load_weights(), load_correction()
    held = collect(w, [c for n in CONFIRM_SETS for c in read_jsonl(PERSONAS / f"{n}.jsonl")], trees)
    tune = collect(w, [c for n in TUNE_SETS for c in read_jsonl(PERSONAS / f"{n}.jsonl")], trees)
    temperature = best_temperature(tune, w)
    p1, h1, p10, h10 = predictions(held, w)
    lines = ["# People model: reliability on the confirm halves", "",
             f"`python -m scripts.people_reliability`: {len(held.targets)} people turns of "
             f"{', '.join(CONFIRM_SETS)} with the target in the pool ({held.missed} without).", "",
             f"Maximum-likelihood temperature on the tune halves' turns: {temperature:.2f} (1.00: no rescaling).",
             "", f"Mean predicted P(first is the target) {p1.mean():.3f}, observed {h1.mean():.3f}; "
             f"mean predicted P(target in the first ten) {p10.mean():.3f}, observed {h10.mean():.3f}.", ""]
    for label, pred, hit in (("first candidate", p1, h1), ("first ten", p10, h10)):
        lines += [f"## {label}", "", "| decile | mean predicted | observed | turns |", "|---|---|---|---|"]
        lines += [f"| {k} | {m:.3f} | {o:.3f} | {n} |" for k, (m, o, n) in enumerate(deciles(pred, hit), 1)]
        lines.append("")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines), encoding="utf-8")
    _plot(args.out.with_suffix(".png"), deciles(p1, h1), deciles(p10, h10))
    print("\n".join(lines))
    return 0


def _plot(path: Path, first: list, ten: list) -> None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], color="grey", lw=1, ls="--", label="calibrated")
    for label, rows, marker in (("first candidate", first, "o"), ("first ten", ten, "s")):
        ax.plot([m for m, _, _ in rows], [o for _, o, _ in rows], marker=marker, label=label)
    ax.set_xlabel("predicted probability (decile mean)")
    ax.set_ylabel("observed rate")
    ax.set_title("People model, confirm halves")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    sys.exit(main())
