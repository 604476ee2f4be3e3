"""Start-up and scale benchmark: `python -m scripts.bench_scale [--catalog NAME=PATH ...] [--out DIR]`.

For each catalog, in fresh processes (so nothing is shared between runs):
- cold construction: `Agent(catalog)` with an empty index cache directory
  (builds the index and stores it), its seconds, the process's peak RSS and
  the largest peak RSS of its helper processes (the parsing workers and the
  FTS5 filling process, which run beside it);
- warm construction, `--warm` times: the same with that cache filled, the
  constructor's seconds and the whole process from spawn to exit (interpreter
  start, imports, construction), median of the repeats;
- the 200 public sessions on the warm agent (`scripts.bench`): `respond`
  median / p95 / max, peak RSS, TechnicalScore.

Prints a table and writes `scale.json` and `scale.md` (and `scale.png` when
matplotlib is installed) to `--out`.  Timings depend on the machine and its
load; the figures are printed, never asserted.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from contest.paths import PROJECT_ROOT, resolve_catalog

_CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
from starter.agent import Agent
t1 = time.perf_counter()
agent = Agent(sys.argv[1])
agent.freeze_for_serving()
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "construct_s": t2 - t1, "state": agent.index.cache_state,
                  "products": len(agent.index.products),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "helper_peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def _child(catalog: Path, cache_dir: Path) -> dict:
    env = dict(os.environ, AGENT_INDEX_CACHE=str(cache_dir), PYTHONPATH=str(PROJECT_ROOT), LLM_ENABLED="0")
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _CHILD, str(catalog)], env=env, capture_output=True, text=True,
                         check=True, cwd=PROJECT_ROOT)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    got["process_s"] = time.perf_counter() - t0
    return got


def _sessions(catalog: Path, cache_dir: Path, workdir: Path) -> dict:
    env = dict(os.environ, AGENT_INDEX_CACHE=str(cache_dir), PYTHONPATH=str(PROJECT_ROOT), LLM_ENABLED="0")
    out = workdir / "bench.json"
    subprocess.run([sys.executable, "-m", "scripts.bench", "--catalog", str(catalog), "--json", str(out)],
                   env=env, check=True, cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text(encoding="utf-8"))


def measure(name: str, catalog: Path, warm: int, sessions: bool) -> dict:
    """Every figure of one catalog."""
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        cache_dir = Path(tmp) / "cache"
        cold = _child(catalog, cache_dir)
        warms = [_child(catalog, cache_dir) for _ in range(warm)]
        assert cold["state"] == "built" and all(w["state"] == "loaded" for w in warms), (cold, warms)
        row = {
            "catalog": name, "path": str(catalog), "products": cold["products"],
            "catalog_mb": round(catalog.stat().st_size / 1e6, 1),
            "cache_mb": round(sum(p.stat().st_size for p in cache_dir.iterdir()) / 1e6, 1),
            "cold_construct_s": round(cold["construct_s"], 2), "cold_peak_rss_mb": round(cold["peak_rss_mb"]),
            "cold_helper_peak_rss_mb": round(cold["helper_peak_rss_mb"]),
            "warm_construct_s": round(statistics.median(w["construct_s"] for w in warms), 2),
            "warm_process_s": round(statistics.median(w["process_s"] for w in warms), 2),
            "warm_peak_rss_mb": round(statistics.median(w["peak_rss_mb"] for w in warms)),
        }
        if sessions:
            b = _sessions(catalog, cache_dir, Path(tmp))
            row.update({"respond_median_ms": b["respond_median_ms"], "respond_p95_ms": b["respond_p95_ms"],
                        "respond_max_ms": b["respond_max_ms"], "sessions_peak_rss_mb": b["peak_rss_mb"],
                        "technical_score": b["technical_score"]})
    return row


COLUMNS = ["catalog", "products", "catalog_mb", "cache_mb", "cold_construct_s", "cold_peak_rss_mb",
           "cold_helper_peak_rss_mb", "warm_construct_s", "warm_process_s", "warm_peak_rss_mb", "respond_median_ms",
           "respond_p95_ms", "respond_max_ms", "sessions_peak_rss_mb", "technical_score"]


def table(rows: list[dict]) -> str:
    head = "| " + " | ".join(COLUMNS) + " |"
    lines = [head, "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(r.get(c, "-")) for c in COLUMNS) + " |" for r in rows]
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> bool:
    """Cost against catalog size (log-log), when matplotlib is there."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    xs = [r["products"] for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for key, label in (("cold_construct_s", "cold construction"), ("warm_construct_s", "warm construction"),
                       ("warm_process_s", "warm process")):
        axes[0].plot(xs, [r[key] for r in rows], marker="o", label=label)
    axes[0].set_ylabel("seconds")
    for key, label in (("cold_peak_rss_mb", "cold build"), ("warm_peak_rss_mb", "warm start"),
                       ("sessions_peak_rss_mb", "200 sessions")):
        if all(key in r for r in rows):
            axes[1].plot(xs, [r[key] for r in rows], marker="o", label=label)
    axes[1].set_ylabel("peak RSS, MB")
    for key, label in (("respond_median_ms", "respond median"), ("respond_p95_ms", "respond p95")):
        if all(key in r for r in rows):
            axes[2].plot(xs, [r[key] for r in rows], marker="o", label=label)
    axes[2].set_ylabel("ms per turn")
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("catalog rows")
        ax.legend(fontsize=8)
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle("Cost against catalog size (template sessions: the 200 public targets)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench_scale", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--catalog", action="append", default=[], metavar="NAME=PATH",
                    help="a catalog to measure (repeatable; default: the resolved catalog as 50k)")
    ap.add_argument("--warm", type=int, default=3, help="warm constructions per catalog (median reported)")
    ap.add_argument("--no-sessions", action="store_true", help="construction only (no public sessions)")
    ap.add_argument("--out", type=Path, help="folder for scale.json / .md / .png (default: a new temporary folder; "
                                             "the committed results are evaluation_results/scale)")
    args = ap.parse_args(argv)
    if args.out is None:
        import tempfile
        args.out = Path(tempfile.mkdtemp(prefix="bench_scale-"))
    print(f"writing to {args.out}", file=sys.stderr, flush=True)
    specs = args.catalog or [f"50k={resolve_catalog(None)}"]
    rows = []
    for spec in specs:
        name, _, path = spec.partition("=")
        print(f"measuring {name} ({path}) ...", file=sys.stderr, flush=True)
        rows.append(measure(name, Path(path), args.warm, not args.no_sessions))
        print(table(rows[-1:]).splitlines()[-1], file=sys.stderr, flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"machine": f"{os.uname().machine}, {os.cpu_count()} cores, Python {sys.version.split()[0]}",
            "loadavg_1m_at_end": round(os.getloadavg()[0], 2)}
    (args.out / "scale.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n", encoding="utf-8")
    text = table(rows) + f"\n\n{meta['machine']}; load average (1 min) at the end {meta['loadavg_1m_at_end']}\n"
    (args.out / "scale.md").write_text(text, encoding="utf-8")
    print(text)
    if len(rows) > 1 and plot(rows, args.out / "scale.png"):
        print(f"wrote {args.out / 'scale.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
