"""What a benchmark reads of this machine from /proc: processes' CPU and memory, the machine's busy time.

The machine may be shared: `wait_for_quiet` waits for other work to stop,
and `machine_scaling` measures how much two processes gain over one here.
"""
from __future__ import annotations

import os
import time
from pathlib import Path


def children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_s() -> float:
    """CPU seconds all cores spent busy since boot (/proc/stat: everything but idle and iowait)."""
    ticks = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")


def postgres_cpu_s() -> float:
    """CPU seconds of every PostgreSQL process alive now (its backends live as long as their workers)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() == "postgres":
                    total += cpu_s(int(entry.name))
            except OSError:
                continue
    return total


def memory_kb(pid: int) -> dict[str, int]:
    """RSS, PSS and USS (private pages) of a process, in kB, from /proc."""
    out = {"rss": 0, "pss": 0, "uss": 0}
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            name, _, rest = line.partition(":")
            value = int(rest.split()[0]) if rest.strip() and rest.split()[0].isdigit() else 0
            if name == "Rss":
                out["rss"] = value
            elif name == "Pss":
                out["pss"] = value
            elif name in ("Private_Clean", "Private_Dirty"):
                out["uss"] += value
    except OSError:
        pass
    return out


def wait_for_quiet(limit_s: float, cores: float = 0.25) -> float:
    """Wait (up to `limit_s`) until the machine's other work keeps under `cores` busy over 3 s: the
    machine may be shared, and a figure of throughput is worth little while someone else computes.
    Returns the busy cores of the last 3 s."""
    deadline = time.monotonic() + limit_s
    while True:
        before = machine_busy_s()
        time.sleep(3)
        busy = (machine_busy_s() - before) / 3
        if busy < cores or time.monotonic() > deadline:
            return busy


def _spin(n: int) -> int:
    x = 0
    for i in range(n):
        x += i * i % 7
    return x


def machine_scaling(n: int = 4_000_000) -> float:
    """How much more pure-Python work two processes do than one on this machine (2.0 on two free
    cores): the ceiling of any 2-worker speed-up here, before the client and the database take their share."""
    import multiprocessing
    rates = []
    for procs in (1, 2):
        with multiprocessing.get_context("fork").Pool(procs) as pool:
            t0 = time.perf_counter()
            pool.map(_spin, [n] * procs)
            rates.append(procs / (time.perf_counter() - t0))
    return rates[1] / rates[0]
