"""Side-by-side `respond` latency of two checkouts: `python -m scripts.bench_turn --base B --new N`.

Each round starts one worker process per checkout (its own agent, built from
that checkout's code, on the same catalog) and plays every session of the
dataset with the evaluator's own `run_session` (one worker, as
`scripts.bench` does), timing every `respond` call (wall time, as the
evaluator does, and the thread's CPU time, which machine load disturbs
less).  Only one worker plays at a time.  The checkouts alternate by whole
passes over the dataset (who goes first alternates by round), or with
`--interleave session` session by session.  A fresh pair of processes each
round keeps every pass a first pass, as in a contest run (no memo is warmed
by an earlier round).  Prints median / p95 / max per round and pooled for
each checkout, the ratios base / new, and whether the two checkouts'
sessions were identical (transcripts without latency).
"""
from __future__ import annotations


import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any


def _worker(repo: str, dataset: str | None, catalog: str | None) -> None:
    """Serve sessions on stdin/stdout: a line with a session index in, its latencies and transcript out."""
    sys.path.insert(0, repo)
    from evaluator.data import load_catalog_view, read_jsonl, resolve_catalog, resolve_dataset
    from evaluator.local_evaluator import run_session
    from starter.agent import Agent

    catalog_path = resolve_catalog(catalog)
    rows = read_jsonl(resolve_dataset(dataset))
    view = load_catalog_view(catalog_path, {r["ground_truth"]["parent_asin"] for r in rows})
    agent = Agent(str(catalog_path))
    freeze = getattr(agent, "freeze_for_serving", None)     # an older checkout froze in its constructor
    if callable(freeze):
        freeze()
    cpu: list[float] = []
    respond = agent.respond

    def timed(*args: Any) -> Any:
        t0 = time.thread_time()
        try:
            return respond(*args)
        finally:
            cpu.append((time.thread_time() - t0) * 1000.0)

    agent.respond = timed      # CPU time of the same calls (the evaluator's figure is wall time)
    out = sys.stdout
    out.write(json.dumps({"ready": len(rows)}) + "\n")
    out.flush()
    for line in sys.stdin:
        i = int(line)
        cpu.clear()
        rec = run_session(agent, rows[i], i, view, transcripts=True)
        latencies = rec.pop("_latencies")
        for t in rec["transcript"]:
            t.pop("latency_ms")
        out.write(json.dumps({"latencies": latencies, "cpu": cpu, "record": rec}, sort_keys=True) + "\n")
        out.flush()


class Worker:
    """One checkout's agent in its own process."""

    def __init__(self, repo: Path, dataset: str | None, catalog: str | None) -> None:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(repo)]
        if dataset:
            cmd += ["--dataset", dataset]
        if catalog:
            cmd += ["--catalog", catalog]
        env = dict(os.environ, PYTHONPATH=str(repo))
        self.proc = subprocess.Popen(cmd, cwd=repo, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)

    def ready(self) -> int:
        return int(self._read()["ready"])

    def play(self, i: int) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{i}\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("worker ended early")
        return json.loads(line)


def _stats(xs: list[float]) -> tuple[float, float, float]:
    s = sorted(xs)
    return statistics.median(s), s[min(len(s) - 1, int(round(0.95 * (len(s) - 1))))], s[-1]


def _compare(label: str, base: list[float], new: list[float]) -> list[str]:
    """Lines: each checkout's median / p95 / max / mean and the ratios base / new."""
    out = []
    for n, xs in (("base", base), ("new", new)):
        med, p95, mx = _stats(xs)
        out.append(f"  {label} {n:<4} median {med:.3f} ms  p95 {p95:.3f} ms  max {mx:.1f} ms  "
                   f"mean {statistics.fmean(xs):.3f} ms")
    b, m = _stats(base), _stats(new)
    out.append(f"  {label} ratio base/new: median {b[0] / m[0]:.2f}x  p95 {b[1] / m[1]:.2f}x  max {b[2] / m[2]:.2f}x  "
               f"mean {statistics.fmean(base) / statistics.fmean(new):.2f}x")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench_turn", description=__doc__)
    ap.add_argument("--base", required=False, help="checkout of the old code (e.g. a git worktree of the old commit)")
    ap.add_argument("--new", default=str(Path(__file__).resolve().parents[1]), help="checkout of the new code")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--interleave", choices=("round", "session"), default="round",
                    help="alternate the checkouts by whole passes over the dataset (as two evaluator runs "
                         "would meet the machine), or session by session")
    ap.add_argument("--dataset")
    ap.add_argument("--catalog")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(args.worker, args.dataset, args.catalog)
        return 0
    # Imported here: a worker runs this file with another checkout first on its path.
    from scripts.checkouts import HOW, checkout

    if not args.base:
        ap.error(f"--base is required: {HOW}")

    names = ("base", "new")
    repos = {"base": checkout(ap, args.base), "new": checkout(ap, args.new, "--new")}
    pooled: dict[tuple[str, str], list[float]] = {(n, m): [] for n in names for m in ("latencies", "cpu")}
    differing: set[int] = set()
    lines = [f"base {repos['base']}", f"new  {repos['new']}",
             f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; rounds {args.rounds}; "
             f"dataset {args.dataset or 'public set'}; interleaved by {args.interleave}; "
             "wall = the evaluator's latency, cpu = thread CPU time"]
    print("\n".join(lines), flush=True)
    for rnd in range(1, args.rounds + 1):
        workers = {n: Worker(repos[n], args.dataset, args.catalog) for n in names}   # built in parallel
        sessions = {n: workers[n].ready() for n in names}
        assert sessions["base"] == sessions["new"], sessions
        this: dict[tuple[str, str], list[float]] = {k: [] for k in pooled}
        t0 = time.perf_counter()
        if args.interleave == "session":
            plays = [(n, i) for i in range(sessions["base"])
                     for n in (names if (i + rnd) % 2 == 0 else names[::-1])]
        else:
            plays = [(n, i) for n in (names if rnd % 2 else names[::-1]) for i in range(sessions["base"])]
        records: dict[tuple[str, int], Any] = {}
        for n, i in plays:
            got = workers[n].play(i)
            for m in ("latencies", "cpu"):
                this[(n, m)] += got[m]
            records[(n, i)] = got["record"]
        differing.update(i for i in range(sessions["base"]) if records[("base", i)] != records[("new", i)])
        for w in workers.values():
            w.close()
        for k in pooled:
            pooled[k] += this[k]
        b, m = _stats(this[("base", "latencies")]), _stats(this[("new", "latencies")])
        lines.append(f"round {rnd} ({time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.2f}): wall "
                     f"base median {b[0]:.3f} p95 {b[1]:.3f}; new median {m[0]:.3f} p95 {m[1]:.3f} ms; "
                     f"ratio median {b[0] / m[0]:.2f}x p95 {b[1] / m[1]:.2f}x")
        print(lines[-1], flush=True)
    lines.append(f"pooled over {args.rounds} rounds ({len(pooled[('base', 'latencies')])} respond calls each):")
    lines += _compare("wall", pooled[("base", "latencies")], pooled[("new", "latencies")])
    lines += _compare("cpu ", pooled[("base", "cpu")], pooled[("new", "cpu")])
    lines.append("  sessions identical (transcripts without latency): "
                 + ("all" if not differing else f"NO, {len(differing)} differ: {sorted(differing)[:20]}"))
    print("\n".join(lines[-8:]))
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
