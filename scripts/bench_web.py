"""Load check of the web demo: many cheap requests, a few turns, and idle connections at once.

    python -m scripts.bench_web [--real] [--catalog PATH] [--gets 200] [--chats 20] [--idle 300]
                                [--turn-ms 50] [--url http://127.0.0.1:PORT [--pid PID]] [--out FILE]

Starts `python -m demo.web` on a free loopback port (a small stand-in agent
that burns `--turn-ms` of Python CPU per turn, holding the GIL like a real
one; `--real` builds the project's agent on the real catalog instead), or
uses an already running server with `--url`.  Then, all at once:
`--idle` connections are opened and held (half send nothing, half send an
unfinished request), `--gets` GET /api/info and `--chats` POST /api/chat are
fired, each on its own connection.  Prints p50/p95/max latency (connect to
last byte) and the answers by status, then how long the server took to close
the held connections.  Every wait is bounded; loopback only.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 60.0            # seconds for one request
IDLE_WAIT = 30.0          # seconds to wait for the server to close held connections


class StandInAgent:
    """A stand-in for the real agent: fixed CPU work per turn, three products from the catalog."""

    def __init__(self, catalog_path: str) -> None:
        self.turn_s = float(os.environ.get("BENCH_TURN_MS", "50")) / 1000
        self.ids: list[str] = []
        with open(catalog_path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip() and len(self.ids) < 3:
                    self.ids.append(json.loads(line)["parent_asin"])

    def reset(self, session_id: str, user_profile: dict) -> None:
        pass

    def respond(self, session_id: str, message: str, turn: int, top_k: int) -> dict:
        end, n = time.perf_counter() + self.turn_s, 0
        while time.perf_counter() < end:      # pure Python: holds the GIL like the real agent's ranking
            n += sum(i * i for i in range(200))
        return {"message": f"stand-in turn {turn}", "ask_attribute": None,
                "recommendations": [{"parent_asin": pid, "score": 1.0} for pid in self.ids]}


def write_small_catalog(path: Path, rows: int = 50) -> Path:
    cats = ["Clothing, Shoes & Jewelry", "Women", "Shoes", "Fashion Sneakers", "Running Sneakers"]
    with open(path, "w", encoding="utf-8") as fh:
        for k in range(rows):
            fh.write(json.dumps({"parent_asin": f"B{k:05d}", "title": f"Bench sneaker {k}", "features": [],
                                 "description": [], "price": 20 + k, "categories": cats, "details": {},
                                 "average_rating": 4.0, "rating_number": 100 + k, "store": "Bench"}) + "\n")
    return path


async def one_request(port: int, method: str, path: str, body: bytes | None = None) -> tuple[int | str, float]:
    """(status or failure name, seconds from connect to the last byte) of one request on a new connection."""
    t0 = time.perf_counter()
    writer = None
    try:
        async with asyncio.timeout(TIMEOUT):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
            if body is not None:
                head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            writer.write(head.encode() + b"\r\n" + (body or b""))
            answer = await reader.read()          # to EOF (Connection: close)
        status: int | str = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.") else "no answer"
    except TimeoutError:
        status = "timeout"
    except OSError as exc:
        status = type(exc).__name__
    finally:
        if writer is not None:
            writer.close()
    return status, time.perf_counter() - t0


async def hold_idle(port: int, send_part: bool) -> tuple[str, float]:
    """Open a connection, maybe send half a request, and wait (bounded) for the server to close it."""
    t0 = time.perf_counter()
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), TIMEOUT)
    except (OSError, TimeoutError) as exc:
        return f"connect {type(exc).__name__}", time.perf_counter() - t0
    try:
        if send_part:
            writer.write(f"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())
        async with asyncio.timeout(IDLE_WAIT):
            await reader.read()
        return "closed by server", time.perf_counter() - t0
    except TimeoutError:
        return "still open", time.perf_counter() - t0
    except OSError as exc:
        return type(exc).__name__, time.perf_counter() - t0
    finally:
        writer.close()


def summary(name: str, results: list[tuple[Any, float]]) -> str:
    lat = sorted(t for _, t in results)
    by_status: dict[str, int] = {}
    for status, _ in results:
        by_status[str(status)] = by_status.get(str(status), 0) + 1
    answered = sum(1 for s, _ in results if isinstance(s, int))
    pick = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000  # noqa: E731
    counts = ", ".join(f"{k}: {v}" for k, v in sorted(by_status.items()))
    return (f"{name:<16} {answered}/{len(results)} answered ({counts}); "
            f"latency p50 {pick(0.5):.0f} ms, p95 {pick(0.95):.0f} ms, max {lat[-1] * 1000:.0f} ms")


def threads_of(pid: int | None) -> int | None:
    """The server process's thread count (Linux /proc; None elsewhere or for --url)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Threads:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


async def max_threads(pid: int | None, stop: asyncio.Event) -> int | None:
    """The most threads the server had, sampled every 20 ms until `stop`."""
    most = None
    while not stop.is_set():
        n = threads_of(pid) if pid else None
        most = n if most is None or (n is not None and n > most) else most
        await asyncio.sleep(0.02)
    return most


async def run(port: int, args: argparse.Namespace, pid: int | None) -> list[str]:
    idle = [asyncio.create_task(hold_idle(port, send_part=i % 2 == 1)) for i in range(args.idle)]
    stop = asyncio.Event()
    sampler = asyncio.create_task(max_threads(pid, stop))
    await asyncio.sleep(0.5)                  # the held connections are open before the burst
    t0 = time.perf_counter()
    gets = [one_request(port, "GET", "/api/info") for _ in range(args.gets)]
    chats = [one_request(port, "POST", "/api/chat",
                         json.dumps({"session": f"bench{i}", "message": "I'm looking for running sneakers"}).encode())
             for i in range(args.chats)]
    results = await asyncio.gather(*gets, *chats)
    wall = time.perf_counter() - t0
    stop.set()
    threads = await sampler
    held = await asyncio.gather(*idle)
    outcomes: dict[str, int] = {}
    for outcome, _ in held:
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    closed = [t for o, t in held if o == "closed by server"]
    lines = [summary(f"GET /api/info x{args.gets}", results[:args.gets]),
             summary(f"POST /api/chat x{args.chats}", results[args.gets:]),
             f"burst wall time {wall:.2f} s; most server threads seen: {'n/a' if threads is None else threads}",
             f"held connections x{args.idle}: " + ", ".join(f"{k}: {v}" for k, v in sorted(outcomes.items()))
             + (f"; closed after {min(closed):.1f}-{max(closed):.1f} s" if closed else "")]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench_web", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--real", action="store_true", help="the project's agent on the real catalog")
    ap.add_argument("--catalog", help="catalog for --real (default: as the evaluator resolves it)")
    ap.add_argument("--url", help="bench this running server instead of starting one")
    ap.add_argument("--pid", type=int, help="with --url: the server's process id, for its thread count")
    ap.add_argument("--gets", type=int, default=200)
    ap.add_argument("--chats", type=int, default=20)
    ap.add_argument("--idle", type=int, default=300)
    ap.add_argument("--turn-ms", type=float, default=50.0, help="CPU per stand-in turn (default %(default)s)")
    ap.add_argument("--out", help="also write the report to this file")
    args = ap.parse_args(argv)
    if not all(0 <= n <= 2000 for n in (args.gets, args.chats, args.idle)):
        ap.error("--gets, --chats and --idle must be 0-2000")
    proc, pid = None, None
    with tempfile.TemporaryDirectory() as tmp:
        if args.url:
            port, pid = int(args.url.rstrip("/").rsplit(":", 1)[1]), args.pid
            label = f"server at {args.url}"
        else:
            cmd = [sys.executable, "-m", "demo.web", "--port", "0"]
            if args.real:
                from evaluator.data import resolve_catalog

                catalog = resolve_catalog(args.catalog)
                cmd += ["--catalog", str(catalog)]
                label = f"demo.web with the real agent on {catalog.name}"
            else:
                cmd += ["--catalog", str(write_small_catalog(Path(tmp) / "catalog.jsonl")),
                        "--agent", "scripts.bench_web:StandInAgent"]
                label = f"demo.web with the stand-in agent ({args.turn_ms:.0f} ms of CPU per turn)"
            env = {**os.environ, "BENCH_TURN_MS": str(args.turn_ms), "PYTHONPATH": str(ROOT)}
            proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
            pid = proc.pid
            first = proc.stdout.readline() if proc.stdout else ""
            if not first.startswith("serving http://"):
                print(f"error: the server did not start: {first.strip()}", file=sys.stderr)
                proc.kill()
                return 1
            port = int(first.split()[1].rstrip("/").rsplit(":", 1)[1])
        try:
            t0, limit = time.perf_counter(), (30 if args.url else 900)
            while asyncio.run(one_request(port, "GET", "/api/info"))[0] != 200:
                if time.perf_counter() - t0 > limit:
                    print(f"error: /api/info did not answer 200 within {limit} s", file=sys.stderr)
                    return 1
                time.sleep(0.5)
            ready = time.perf_counter() - t0
            lines = [f"bench_web: {label}; ready after {ready:.1f} s",
                     f"all at once: {args.idle} held connections (half silent, half an unfinished request), "
                     f"{args.gets} GET /api/info, {args.chats} POST /api/chat (new sessions)",
                     *asyncio.run(run(port, args, pid))]
        finally:
            if proc is not None:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
    report = "\n".join(lines)
    print(report)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(report + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
