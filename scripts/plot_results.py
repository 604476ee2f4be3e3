"""Figures from evaluator results files (the JSON written by `--output`).

    python -m scripts.plot_results \\
        --result "public/ours=results.json" --result "public/weak baseline=weak.json" \\
        --result "public para/ours=para.json" --result "uniform/ours=uniform.json" \\
        --baseline "organizer BM25 (official)=0.10671"

A label is `GROUP/SERIES` (e.g. the panel or perturbation, then the agent) or
just a name.  Writes to evaluation_results/ (or --out-dir):

- first_hit_turn.png  share of sessions whose first hit came on turn 1..10, or
                      missed, one panel per scenario, one bar colour per result;
- scores.png          TechnicalScore per group and series, with HitRate@10 and
                      MRR beside it and the --baseline scores as dashed lines;
- latency.png         distribution of respond() latency per turn (needs runs made
                      with --transcripts; skipped when no result has any).

Needs matplotlib (the `plots` extra); uses the Agg backend, no display.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "evaluation_results"
SCENARIO_ORDER = ("buying", "browsing", "intent_override", "boundary")
TURN_LABELS = [str(t) for t in range(1, 11)] + ["miss"]


@dataclass
class Run:
    label: str
    group: str
    series: str
    path: Path
    summary: dict = field(repr=False)

    @property
    def sessions(self) -> list[dict]:
        return [s for s in self.summary.get("sessions", []) if isinstance(s, dict)]


def load_runs(specs: list[str]) -> list[Run]:
    """`LABEL=PATH` specs -> runs; LABEL may be `GROUP/SERIES`."""
    runs = []
    for spec in specs:
        label, sep, path = spec.rpartition("=")
        if not sep or not label.strip():
            raise ValueError(f"--result wants LABEL=PATH, got {spec!r}")
        p = Path(path)
        summary = json.loads(p.read_text(encoding="utf-8"))
        if not isinstance(summary, dict) or "sessions" not in summary:
            raise ValueError(f"{p}: not an evaluator results file (no 'sessions')")
        group, _, series = label.partition("/")
        if not series:
            group, series = label, ""
        runs.append(Run(label.strip(), group.strip(), series.strip(), p, summary))
    return runs


def first_hit_counts(sessions: list[dict]) -> dict[str, list[int]]:
    """scenario -> 11 counts: first hit on turn 1..10, then misses."""
    out: dict[str, list[int]] = {}
    for s in sessions:
        counts = out.setdefault(str(s.get("scenario_type")), [0] * 11)
        turn = s.get("turn")
        if s.get("hit") and isinstance(turn, int) and 1 <= turn <= 10:
            counts[turn - 1] += 1
        else:
            counts[10] += 1
    return out


def latencies(sessions: list[dict]) -> list[float]:
    return [float(t["latency_ms"]) for s in sessions for t in s.get("transcript") or []
            if isinstance(t, dict) and isinstance(t.get("latency_ms"), (int, float))]


def _score(run: Run, key: str) -> float:
    v = run.summary.get(key)
    return float(v) if isinstance(v, (int, float)) else 0.0


def _plt():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def plot_first_hit(runs: list[Run], out: Path) -> Path:
    plt = _plt()
    per_run = [first_hit_counts(r.sessions) for r in runs]
    scenarios = [s for s in SCENARIO_ORDER if any(s in c for c in per_run)]
    scenarios += sorted({s for c in per_run for s in c} - set(scenarios))
    cols = min(2, len(scenarios)) or 1
    rows = (len(scenarios) + cols - 1) // cols or 1
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 3.6 * rows), squeeze=False)
    width = 0.8 / max(1, len(runs))
    for k, scenario in enumerate(scenarios):
        ax = axes[k // cols][k % cols]
        for j, (run, counts) in enumerate(zip(runs, per_run)):
            c = counts.get(scenario)
            if not c:
                continue
            n = sum(c)
            xs = [x + (j - (len(runs) - 1) / 2) * width for x in range(11)]
            ax.bar(xs, [100.0 * v / n for v in c], width=width, label=run.label)
        sizes = list(dict.fromkeys(sum(c[scenario]) for c in per_run if scenario in c))
        ax.set_title(f"{scenario} (n={'/'.join(map(str, sizes))})")
        ax.set_xticks(range(11), TURN_LABELS)
        ax.set_xlabel("turn of the first counted hit")
        ax.set_ylabel("% of sessions")
        ax.grid(axis="y", alpha=0.3)
    for k in range(len(scenarios), rows * cols):
        axes[k // cols][k % cols].axis("off")
    fig.suptitle("When the target is first found, by scenario (share of the scenario's sessions)")
    handles, labels = [], []
    for row in axes:
        for ax in row:
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if lab not in labels:
                    handles.append(h)
                    labels.append(lab)
    fig.legend(handles, labels, loc="lower center", ncol=min(4, len(runs)),
               fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    path = out / "first_hit_turn.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_scores(runs: list[Run], baselines: dict[str, float], out: Path) -> Path:
    plt = _plt()
    groups = list(dict.fromkeys(r.group for r in runs))
    series = list(dict.fromkeys(r.series for r in runs))
    fig, ax = plt.subplots(figsize=(max(6.5, 1.9 * len(groups) * max(1, len(series)) ** 0.5 + 2), 4.6))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    labelled: set[str] = set()
    for g, group in enumerate(groups):
        present = [(j, r) for j, name in enumerate(series)
                   for r in runs if r.group == group and r.series == name][:len(series)]
        width = 0.8 / max(1, len(series))
        for k, (j, run) in enumerate(present):
            x = g + (k - (len(present) - 1) / 2) * width
            score = _score(run, "recommended_technical_score")
            name = run.series or run.label
            ax.bar(x, score, width=width * 0.95, color=colours[j % len(colours)],
                   label=None if name in labelled else name)
            labelled.add(name)
            ax.text(x, score + 0.012, f"{score:.3f}", ha="center", va="bottom", fontsize=8)
            ax.text(x, 0.02, f"hit {_score(run, 'hit_rate_at_10'):.2f}\nmrr {_score(run, 'mrr'):.2f}",
                    ha="center", va="bottom", fontsize=6.5, color="white")
    for k, (name, value) in enumerate(baselines.items()):
        ax.axhline(value, linestyle="--", linewidth=1, color=f"C{(k + len(series)) % 10}", label=f"{name} ({value:.3f})")
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("TechnicalScore")
    ax.set_title("TechnicalScore per panel / perturbation")
    ax.grid(axis="y", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=min(4, len(handles)),
                  frameon=False)
    fig.tight_layout()
    path = out / "scores.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_latency(runs: list[Run], out: Path) -> Path | None:
    data = [(r, latencies(r.sessions)) for r in runs]
    data = [(r, xs) for r, xs in data if xs]
    if not data:
        return None
    plt = _plt()
    import numpy as np
    lo = max(1e-3, min(min(xs) for _, xs in data))
    hi = max(max(xs) for _, xs in data)
    bins = np.logspace(np.log10(lo), np.log10(hi * 1.01 if hi > lo else lo * 10), 40)
    fig, ax = plt.subplots(figsize=(8.5, 4.2 + 0.22 * len(data)))
    for r, xs in data:
        ordered = sorted(xs)
        p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
        ax.hist(xs, bins=bins, histtype="step", linewidth=1.6, weights=[100.0 / len(xs)] * len(xs),
                label=f"{r.label}: median {statistics.median(xs):.3g} ms, p95 {p95:.3g} ms, n={len(xs)}")
    ax.set_xscale("log")
    ax.set_xlabel("respond() latency per turn (ms, log scale)")
    ax.set_ylabel("% of the run's turns")
    ax.set_title("respond() latency distribution")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2 if len(data) > 3 else 1,
              frameon=False)
    fig.tight_layout()
    path = out / "latency.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> list[Path]:
    ap = argparse.ArgumentParser(prog="python -m scripts.plot_results", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--result", action="append", required=True, metavar="LABEL=PATH",
                    help="an evaluator results JSON; LABEL may be GROUP/SERIES (repeatable)")
    ap.add_argument("--baseline", action="append", default=[], metavar="NAME=SCORE",
                    help="a reference TechnicalScore drawn as a dashed line (repeatable)")
    ap.add_argument("--out-dir", default=str(DEFAULT_OUT), help="where the PNGs go (default %(default)s)")
    args = ap.parse_args(argv)
    try:
        runs = load_runs(args.result)
        baselines = {}
        for spec in args.baseline:
            name, sep, value = spec.rpartition("=")
            if not sep or not name:
                raise ValueError(f"--baseline wants NAME=SCORE, got {spec!r}")
            baselines[name] = float(value)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [plot_first_hit(runs, out), plot_scores(runs, baselines, out)]
    lat = plot_latency(runs, out)
    if lat is None:
        print("no latency figure: no result has transcripts (run the evaluator with --transcripts)", file=sys.stderr)
    else:
        written.append(lat)
    for p in written:
        print(f"wrote {p}")
    return written


if __name__ == "__main__":
    main()
