"""Load and faults against the web service on N workers with sessions in PostgreSQL.

    python -m scripts.bench_service --out evaluation_results/service/fault_run.txt
    python -m scripts.bench_service --scaling 1,2,4 --template-only --no-faults --conversations 400 --out ...

A throwaway PostgreSQL cluster (`scripts/pg_cluster.py`) holds the sessions;
`python -m demo.web --workers N` serves them.  `--conversations` conversations
of `--turns` turns (template sessions of the public set and, unless
`--template-only`, one persona card in four) are played by `--clients`
concurrent clients (`scripts/load_client.py`).  With faults (the default):
when 30% of the turns are answered one worker is killed with SIGKILL (its
supervisor starts another), at 60% the database is restarted.  Reported:
turns served, errors by kind (each retried), p50/p95/p99 latency of a turn
as its client saw it (retries included), throughput, the memory of every
worker (RSS counts pages shared with the other workers in each of them; PSS
divides them among the sharers, so its sum is what the workers take
together), and how many conversations were lost or differ from the same
conversation played alone against an in-process agent.  With `--scaling`,
the run is repeated for each worker count on a fresh server.  The report is
written to `--out` (never over an existing file without `--force`) and a JSON
of the figures beside it.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from evaluator.data import PROJECT_ROOT, load_catalog_view, read_jsonl, resolve_catalog, resolve_dataset
from scripts.load_client import Conversation, play_alone, run_all
from scripts.pg_cluster import PgCluster
from scripts.proc_stats import (children, cpu_s, machine_busy_s, machine_scaling, memory_kb, postgres_cpu_s,
                                wait_for_quiet)


def conversations(count: int, template_only: bool, dataset: str | None = None) -> list[Conversation]:
    public = read_jsonl(resolve_dataset(dataset))
    cards = read_jsonl(PROJECT_ROOT / "data" / "personas" / "cards.jsonl")
    out = []
    for k in range(count):
        persona = not template_only and k % 4 == 3
        row = cards[(k // 4) % len(cards)] if persona else public[k % len(public)]
        out.append(Conversation(f"c{k:05d}", row, "persona" if persona else "template"))
    return out


class Server:
    """`python -m demo.web --workers N` on a free port, sessions in `store`."""

    def __init__(self, workers: int, store: str, catalog: Path, log: Path, max_queue: int) -> None:
        self.workers = workers
        self.log = open(log, "w")
        cmd = [sys.executable, "-m", "demo.web", "--port", "0", "--catalog", str(catalog), "--workers", str(workers),
               "--session-store", store, "--max-queue", str(max_queue)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=self.log, text=True, cwd=PROJECT_ROOT)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        if not first.startswith("serving http://"):
            raise RuntimeError(f"the server did not start: {first!r}")
        self.port = int(first.split()[1].rstrip("/").rsplit(":", 1)[1])
        threading.Thread(target=self._drain, daemon=True).start()
        deadline = time.monotonic() + 180
        while not self.ready() and time.monotonic() < deadline:
            time.sleep(0.2)
        if not self.ready():
            raise RuntimeError("the server did not get ready in 180 s")

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.log.write(line)

    def worker_pids(self) -> list[int]:
        return children(self.proc.pid) if self.workers > 1 else [self.proc.pid]

    def ready(self) -> bool:
        import urllib.request
        if self.workers > 1 and len(children(self.proc.pid)) < self.workers:
            return False
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/readyz", timeout=5) as r:
                return r.status == 200
        except OSError:
            return False

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(60)
        self.log.close()
        return code


class Faults:
    """Kill a worker at `kill_at` of the turns, restart the database at `db_at`; memory sampled meanwhile."""

    def __init__(self, server: Server, cluster: PgCluster, total: int, kill_at: float | None,
                 db_at: float | None) -> None:
        self.server, self.cluster, self.total = server, cluster, total
        self.plan = sorted([(kill_at, "kill"), (db_at, "db")] if kill_at is not None else [])
        self.done = 0
        self.events: list[str] = []
        self.t0 = time.perf_counter()
        self.peak: dict[int, int] = {}

    def progress(self) -> None:
        self.done += 1
        while self.plan and self.done >= self.plan[0][0] * self.total:
            _, what = self.plan.pop(0)
            threading.Thread(target=self._fault, args=(what, self.done), daemon=True).start()
        if self.done % 100 == 0:
            for pid in self.server.worker_pids():
                self.peak[pid] = max(self.peak.get(pid, 0), memory_kb(pid)["rss"])

    def _fault(self, what: str, at: int) -> None:
        t = time.perf_counter() - self.t0
        if what == "kill":
            victim = self.server.worker_pids()[0]
            os.kill(victim, signal.SIGKILL)
            self.events.append(f"{t:6.1f} s, turn {at}: worker {victim} killed with SIGKILL")
        else:
            self.cluster.restart()
            self.events.append(f"{t:6.1f} s, turn {at}: database restarted (pg_ctl restart -m fast, "
                               f"{time.perf_counter() - self.t0 - t:.1f} s)")


def run_once(args: argparse.Namespace, workers: int, faults: bool, catalog: Path, out_dir: Path) -> dict:
    idle = wait_for_quiet(args.quiet_wait) if args.quiet_wait else None
    cluster = PgCluster().start()
    try:
        store = cluster.create_database("sessions")
        server = Server(workers, store, catalog, out_dir / f"{Path(args.out).stem}.server_{workers}w.log",
                        args.max_queue or args.clients)
        convs = conversations(args.conversations, args.template_only, args.dataset)
        targets = load_catalog_view(catalog, {c.row["ground_truth"]["parent_asin"] for c in convs})
        fault = Faults(server, cluster, len(convs) * args.turns, 0.3 if faults else None, 0.6 if faults else None)
        t0, busy0, mine0, pg0 = time.perf_counter(), machine_busy_s(), sum(os.times()[:2]), postgres_cpu_s()
        workers0 = {pid: cpu_s(pid) for pid in server.worker_pids()}
        errors = asyncio.run(run_all(server.port, convs, targets, args.turns, args.clients, fault.progress))
        wall = time.perf_counter() - t0
        cpu = {"machine": machine_busy_s() - busy0, "client": sum(os.times()[:2]) - mine0,
               "postgres": postgres_cpu_s() - pg0,
               "workers": sum(cpu_s(pid) - workers0.get(pid, 0.0) for pid in server.worker_pids())}
        memory = {pid: memory_kb(pid) for pid in server.worker_pids()}
        supervisor = memory_kb(server.proc.pid) if workers > 1 else None
        code = server.stop()
    finally:
        cluster.remove()
    return {"workers": workers, "faults": fault.events, "wall_s": wall, "cpu": cpu, "busy_before": idle, "errors": errors, "convs": convs,
            "targets": targets, "memory": memory, "supervisor": supervisor, "peak_rss": fault.peak,
            "exit_code": code}


def compare_alone(run: dict, catalog: Path, turns: int) -> tuple[int, int, list[str]]:
    """(lost, differing, first few differing ids): each conversation against an in-process agent."""
    os.environ.pop("AGENT_SESSION_STORE", None)
    from starter.agent import Agent
    agent = Agent(str(catalog))
    lost = differing = 0
    examples: list[str] = []
    for conv in run["convs"]:
        if conv.lost is not None or len(conv.transcript) != turns:
            lost += 1
            continue
        target = run["targets"][conv.row["ground_truth"]["parent_asin"]]
        if play_alone(agent, conv, target, turns, run["targets"]) != conv.transcript:
            differing += 1
            examples.append(conv.session)
    return lost, differing, examples[:5]


def _pct(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1] if len(xs) > 1 else (xs[0] if xs else 0.0)


def report(run: dict, lost: int, differing: int, examples: list[str], turns: int) -> tuple[list[str], dict]:
    convs = run["convs"]
    lat = [ms for c in convs for ms in c.latencies_ms]
    served = len(lat)
    mem = run["memory"]
    rss = [m["rss"] / 1024 for m in mem.values()]
    pss = [m["pss"] / 1024 for m in mem.values()]
    sup = run["supervisor"]
    figures = {
        "workers": run["workers"], "conversations": len(convs), "turns_per_conversation": turns,
        "turns_served": served, "turns_expected": len(convs) * turns, "wall_s": round(run["wall_s"], 2),
        "turns_per_s": round(served / run["wall_s"], 1),
        "template_turns_per_s": round(sum(len(c.latencies_ms) for c in convs if c.kind == "template")
                                      / run["wall_s"], 1),
        "latency_ms": {"p50": round(_pct(lat, 50), 1), "p95": round(_pct(lat, 95), 1), "p99": round(_pct(lat, 99), 1),
                       "max": round(max(lat), 1) if lat else 0.0},
        "errors_retried": dict(sorted(run["errors"].items())), "retried_turns": sum(c.retried_turns for c in convs),
        "conversations_lost": lost, "conversations_differing": differing, "differing_examples": examples,
        "worker_rss_mb": [round(x, 1) for x in rss], "worker_pss_mb": [round(x, 1) for x in pss],
        "worker_uss_mb": [round(m["uss"] / 1024, 1) for m in mem.values()],
        "total_rss_mb": round(sum(rss), 1),
        "total_pss_mb_with_supervisor": round(sum(pss) + (sup["pss"] / 1024 if sup else 0), 1),
        "supervisor_rss_mb": round(sup["rss"] / 1024, 1) if sup else None,
        "peak_worker_rss_mb": round(max(run["peak_rss"].values()) / 1024, 1) if run["peak_rss"] else None,
        "faults": run["faults"], "server_exit_code": run["exit_code"],
        "cpu_ms_per_turn": {k: round(v * 1000 / max(served, 1), 2) for k, v in run["cpu"].items()},
        "cores_busy": round(run["cpu"]["machine"] / run["wall_s"], 2),
        "cores_busy_before": None if run["busy_before"] is None else round(run["busy_before"], 2),
    }
    f = figures
    lines = [f"{f['workers']} worker(s), {f['conversations']} conversations x {turns} turns "
             f"({sum(c.kind == 'persona' for c in convs)} persona), {f['turns_served']}/{f['turns_expected']} "
             f"turns served in {f['wall_s']} s: {f['turns_per_s']} turns/s (template turns {f['template_turns_per_s']}/s)",
             f"latency of a turn as its client saw it (retries included): p50 {f['latency_ms']['p50']} ms, "
             f"p95 {f['latency_ms']['p95']} ms, p99 {f['latency_ms']['p99']} ms, max {f['latency_ms']['max']} ms",
             f"errors answered and retried, by kind: {f['errors_retried'] or 'none'}; turns retried: {f['retried_turns']}",
             f"conversations lost: {lost}; differing from the same conversation played alone: {differing}"
             + (f" (e.g. {', '.join(examples)})" if examples else ""),
             f"memory per worker at the end, MB: RSS {f['worker_rss_mb']}, PSS {f['worker_pss_mb']}, "
             f"private {f['worker_uss_mb']}; total RSS {f['total_rss_mb']}, total PSS with the supervisor "
             f"{f['total_pss_mb_with_supervisor']} (supervisor RSS {f['supervisor_rss_mb']}); "
             f"peak worker RSS sampled {f['peak_worker_rss_mb']}"]
    c = f["cpu_ms_per_turn"]
    rest = c["machine"] - c["workers"] - c["client"] - c["postgres"]
    lines.append(f"CPU per turn served, ms: workers {c['workers']}, this client {c['client']}, PostgreSQL "
                 f"{c['postgres']}, everything else busy on the machine meanwhile (the kernel, other "
                 f"users' processes) {round(rest, 2)}; "
                 f"cores busy on average {f['cores_busy']} of {os.cpu_count()}")
    lines += [f"fault at {e}" for e in run["faults"]]
    return lines, figures


CLEAN_MS = 1.5     # CPU ms per turn served that the machine spent on work not ours: above it, a round is noisy


def _others(f: dict) -> float:
    c = f["cpu_ms_per_turn"]
    return c["machine"] - c["workers"] - c["client"] - c["postgres"]


def scaling_summary(runs: list[dict]) -> list[str]:
    """Per worker count: the median template turns/s over rounds and its ratio to the smallest count's,
    and the memory totals against one worker's RSS."""
    by: dict[int, list[dict]] = {}
    for f in runs:
        by.setdefault(f["workers"], []).append(f)
    counts = sorted(by)
    clean = {n: [f for f in by[n] if _others(f) < CLEAN_MS] for n in counts}
    if all(clean.values()):      # rounds in which nobody else computed, when every count has one
        by = clean
    tps = {n: statistics.median(f["template_turns_per_s"] for f in by[n]) for n in counts}
    rss1 = statistics.median(f["total_rss_mb"] for f in by[counts[0]])
    lines = [f"median over {'the rounds with under ' + str(CLEAN_MS) + ' ms of other CPU per turn' if by is clean else 'all rounds'}"
             " (each round's figures above):"]
    for n in counts:
        other = statistics.median(_others(f) for f in by[n])
        rss = statistics.median(f["total_rss_mb"] for f in by[n])
        pss = statistics.median(f["total_pss_mb_with_supervisor"] for f in by[n])
        lines.append(f"  {n} worker(s): template turns/s {tps[n]:.1f} ({tps[n] / tps[counts[0]]:.2f}x "
                     f"of {counts[0]}; rounds {[f['template_turns_per_s'] for f in by[n]]}); total RSS {rss:.0f} MB "
                     f"({rss / rss1:.2f}x of {counts[0]} worker(s)), total PSS with the supervisor {pss:.0f} MB "
                     f"({pss / rss1:.2f}x); CPU per turn not ours {other:.1f} ms")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench_service", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="report path (a .json of the figures is written beside it)")
    ap.add_argument("--force", action="store_true", help="replace an existing report")
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--catalog", help="catalog JSONL (default: as the evaluator resolves it)")
    ap.add_argument("--dataset", help="template sessions JSONL (default: the public set)")
    ap.add_argument("--scaling", help="comma-separated worker counts, one run each (e.g. 1,2,4)")
    ap.add_argument("--conversations", type=int, default=1000)
    ap.add_argument("--turns", type=int, default=4)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--template-only", action="store_true")
    ap.add_argument("--max-queue", type=int, help="each worker's turns waiting or running before 503 busy "
                    "(default: --clients, so that only faults cause errors)")
    ap.add_argument("--rounds", type=int, default=1, help="repeat the --scaling runs (order alternating)")
    ap.add_argument("--quiet-wait", type=float, default=0.0,
                    help="before each run, wait up to this many seconds for the machine to be idle")
    ap.add_argument("--noisy-retries", type=int, default=0,
                    help="run a round again (up to this many times) while other work disturbs it")
    ap.add_argument("--no-faults", action="store_true")
    ap.add_argument("--no-compare", action="store_true", help="skip the played-alone comparison")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if out.exists() and not args.force:
        print(f"error: {out} exists (use --force to replace it)", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    catalog = resolve_catalog(args.catalog)
    counts = [int(x) for x in args.scaling.split(",")] if args.scaling else [args.workers]
    # Rounds alternate the order (1,2,4 then 4,2,1 ...): a machine whose load drifts favours no count.
    counts = [c for r in range(args.rounds) for c in (counts if r % 2 == 0 else counts[::-1])]
    head = (f"python -m scripts.bench_service {' '.join(argv if argv is not None else sys.argv[1:])}\n"
            f"catalog {catalog}; {os.cpu_count()} cores; PostgreSQL sessions; faults "
            f"{'none' if args.no_faults else 'worker SIGKILL at 30%, database restart at 60%'}")
    lines, all_figures = [head], []
    for workers in counts:
        for attempt in range(1 + args.noisy_retries):   # a round another user's work disturbed is run again
            run = run_once(args, workers, not args.no_faults, catalog, out.parent)
            lost, differing, examples = (0, 0, []) if args.no_compare else compare_alone(run, catalog, args.turns)
            text, figures = report(run, lost, differing, examples, args.turns)
            lines += ["", *text]
            all_figures.append(figures)
            print("\n".join(text), flush=True)
            if _others(figures) < CLEAN_MS:
                break
    if len(set(counts)) > 1:
        if args.quiet_wait:
            wait_for_quiet(args.quiet_wait)
        ceiling = machine_scaling()
        lines += ["", *scaling_summary(all_figures),
                  f"this machine: two processes of pure-Python work do {ceiling:.2f}x the work of one"]
    out.write_text("\n".join(lines) + "\n")
    out.with_suffix(".json").write_text(json.dumps(all_figures, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
