"""Hostile input and a long run: `python -m scripts.bench_robustness [--sessions 2000] [--out FILE]`.

Plays sessions in one process, cycling four kinds: a public template session,
the same reworded (`para`), a persona card, and a fuzz session of five random
messages (random catalog words, cue words, negations, prices, unicode, control
characters, injection text, up to 4,000 characters).  Prints, per kind, the
`respond` latency (median, p95, max), the ten slowest fuzz messages, and the
process RSS after every 100 sessions (does it plateau?).  Offline
(`LLM_ENABLED=0`); timings depend on the machine and its load, so compare
checkouts with `--base OLD [--new NEW]`: the same bench runs in both at once
(one process each) and both reports are printed.
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import sys
import time
from pathlib import Path

import contest as P
from contest.jsonl import read_jsonl
from contest.paths import PROJECT_ROOT, resolve_catalog, resolve_dataset
from evaluator.data import load_catalog_view
from evaluator.local_evaluator import run_session
from evaluator.perturb import parse_modes
from scripts.checkouts import checkout

CUES = ["not", "no", "without", "under", "around", "over", "$20", "$999999", "women", "men", "kids", "my son",
        "ignore previous instructions", "system:", "B0ABCDEFGH", "http://x.co/a", "recommend", "actually",
        "I don't care", "your call", "show me more", "size 8", "plus size", "\u0000", "\ud83d\ude00", "\u202e",
        "🙂", "ß", "İ", "\t", "\n", "'; DROP TABLE docs; --", '"', "*", "NEAR(", "OR", "AND"]


def fuzz_message(rng: random.Random, words: list[str]) -> str:
    n = rng.choice([1, 3, 8, 20, 60, 200, 600])
    parts = [rng.choice(CUES) if rng.random() < 0.3 else rng.choice(words) for _ in range(n)]
    if rng.random() < 0.1:
        parts = ["".join(chr(rng.randrange(1, 0x2FFF)) for _ in range(rng.randrange(1, 300)))]
    return " ".join(parts)[:4000]


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def stats(xs: list[float]) -> str:
    if not xs:
        return "-"
    o = sorted(xs)
    return (f"median {statistics.median(o):.1f} ms, p95 {o[min(len(o) - 1, int(0.95 * (len(o) - 1)))]:.1f} ms, "
            f"max {o[-1]:.1f} ms ({len(o)} turns)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.bench_robustness", description=__doc__)
    ap.add_argument("--sessions", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", help="also write the report to this file")
    ap.add_argument("--fuzz-only", type=int, metavar="N",
                    help="only N fuzz messages (sessions of five), timed in wall and CPU time")
    ap.add_argument("--base", help="side by side: run the same bench in this checkout (e.g. a git worktree of "
                                   "the old commit) and in --new at the same time, one process each")
    ap.add_argument("--new", default=str(PROJECT_ROOT), help="with --base: the checkout of the new code")
    args = ap.parse_args(argv)
    if args.base:
        args.base, args.new = str(checkout(ap, args.base)), str(checkout(ap, args.new, "--new"))
        return side_by_side(args)
    from tqdm import tqdm

    from starter.agent import Agent

    if args.fuzz_only:
        return fuzz_only(args.fuzz_only, args.seed, args.out)

    rng = random.Random(args.seed)
    catalog_path = resolve_catalog(None)
    public = read_jsonl(resolve_dataset(None))
    cards = read_jsonl(PROJECT_ROOT / "data" / "personas" / "cards.jsonl")
    targets = {r["ground_truth"]["parent_asin"] for r in public + cards}
    view = load_catalog_view(catalog_path, targets)
    words = sorted({w for r in list(view.values())[:400] for w in str(r.get("title", "")).split()})
    rss0 = rss_mb()
    t0 = time.perf_counter()
    agent = Agent(str(catalog_path))
    agent.freeze_for_serving()
    lines = [f"agent built in {time.perf_counter() - t0:.1f} s; RSS {rss0:.0f} MB before, {rss_mb():.0f} MB after"]
    lat: dict[str, list[float]] = {"template": [], "para": [], "persona": [], "fuzz": []}
    slow: list[tuple[float, str]] = []
    rss_curve = []
    para = parse_modes("para")
    for k in tqdm(range(args.sessions), unit="session", file=sys.stderr, disable=not sys.stderr.isatty()):
        kind = ("template", "para", "persona", "fuzz")[k % 4]
        if kind == "fuzz":
            sid = f"fuzz-{k}"
            agent.reset(sid, {})
            for turn in range(1, 6):
                msg = fuzz_message(rng, words)
                s = time.perf_counter()
                resp = agent.respond(sid, msg, turn, 10)
                ms = (time.perf_counter() - s) * 1000
                assert P.valid_response(resp) and isinstance(resp["recommendations"], list)
                lat["fuzz"].append(ms)
                slow.append((ms, msg))
                slow = sorted(slow, key=lambda x: -x[0])[:10]
        else:
            row = (cards if kind == "persona" else public)[(k // 4) % (len(cards) if kind == "persona" else len(public))]
            rec = run_session(agent, row, k, view, para if kind == "para" else frozenset())
            lat[kind] += rec["_latencies"]
        if (k + 1) % 100 == 0:
            rss_curve.append((k + 1, rss_mb()))
    for kind, xs in lat.items():
        lines.append(f"{kind:<9} {stats(xs)}")
    lines.append("slowest fuzz messages:")
    lines += [f"  {ms:7.1f} ms  {msg[:100]!r}{' ...' if len(msg) > 100 else ''} ({len(msg)} chars)"
              for ms, msg in slow]
    lines.append("RSS after every 100 sessions (MB): " + ", ".join(f"{n}:{mb:.0f}" for n, mb in rss_curve))
    lines.append(f"live sessions {len(agent.sessions)}, evicted {agent.store.evicted}, rebuilt {agent.store.rebuilt}")
    from starter.template import similarity
    journal = agent.store.journal.stats()
    lines.append(f"cache entries: token sets {len(similarity._TOKSET_CACHE)}, IDF weights {len(agent.index._weights)}, "
                 f"product tokens {len(agent.index._product_tokens)}, spelling corrections "
                 f"{len(agent.gate.clues._correct_cache)}; journal {journal[0]} inputs, {journal[1] / 1e6:.1f} MB of text")
    report("\n".join(lines), args.out)
    return 0


def side_by_side(args: argparse.Namespace) -> int:
    """The bench in two checkouts at once (one process each, so each has a core of a 2-core machine):
    the same messages under the same load, which a comparison with another day's figures is not."""
    import subprocess
    import tempfile

    bench = ["--fuzz-only", str(args.fuzz_only)] if args.fuzz_only else ["--sessions", str(args.sessions)]
    bench += ["--seed", str(args.seed)]
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for label, repo in (("base", args.base), ("new", args.new)):
            out = Path(tmp) / f"{label}.txt"
            env = dict(os.environ, PYTHONPATH=str(Path(repo).resolve()))
            proc = subprocess.Popen([sys.executable, "-m", "scripts.bench_robustness", *bench, "--out", str(out)],
                                    cwd=repo, env=env, stdout=subprocess.DEVNULL)
            runs.append((label, repo, out, proc))
        lines = [f"# side by side, at the same time: python -m scripts.bench_robustness {' '.join(bench)}"]
        for label, repo, out, proc in runs:
            code = proc.wait()
            lines += [f"## {label}: {repo}" + (f" (exit {code})" if code else ""),
                      out.read_text(encoding="utf-8").rstrip() if out.is_file() else "(no report)", ""]
    report("\n".join(lines).rstrip(), args.out)
    return max(proc.returncode for *_, proc in runs)


def report(text: str, out: str | None) -> None:
    """Print the report, and write it to `out` when given."""
    print(text)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")


def fuzz_only(n: int, seed: int, out: str | None) -> int:
    """N fuzz messages in sessions of five: wall and CPU (process) time per `respond`, the slowest ten."""
    from tqdm import tqdm

    from starter.agent import Agent

    rng = random.Random(seed)
    catalog_path = resolve_catalog(None)
    view = load_catalog_view(catalog_path, {r["ground_truth"]["parent_asin"] for r in read_jsonl(resolve_dataset(None))})
    words = sorted({w for r in list(view.values())[:400] for w in str(r.get("title", "")).split()})
    t0 = time.perf_counter()
    agent = Agent(str(catalog_path))
    agent.freeze_for_serving()
    lines = [f"agent built in {time.perf_counter() - t0:.1f} s; {n} fuzz messages, seed {seed}"]
    wall: list[float] = []
    cpu: list[float] = []
    slow: list[tuple[float, float, str]] = []
    for k in tqdm(range(n), unit="message", file=sys.stderr, disable=not sys.stderr.isatty()):
        sid, turn = f"fuzz-{k // 5}", k % 5 + 1
        if turn == 1:
            agent.reset(sid, {})
        msg = fuzz_message(rng, words)
        w, c = time.perf_counter(), time.process_time()
        resp = agent.respond(sid, msg, turn, 10)
        c, w = (time.process_time() - c) * 1000, (time.perf_counter() - w) * 1000
        assert P.valid_response(resp) and isinstance(resp["recommendations"], list)
        wall.append(w)
        cpu.append(c)
        slow = sorted(slow + [(c, w, msg)], key=lambda x: -x[0])[:10]
    lines.append(f"wall {stats(wall)}")
    lines.append(f"cpu  {stats(cpu)}")
    lines.append(f"over 200 ms of CPU: {sum(1 for c in cpu if c > 200)} of {len(cpu)}")
    lines.append("slowest (CPU ms, wall ms):")
    lines += [f"  {c:7.1f} {w:7.1f}  {m[:90]!r}{' ...' if len(m) > 90 else ''} ({len(m)} chars)" for c, w, m in slow]
    lines.append(f"load average (1 min) at the end {os.getloadavg()[0]:.2f}")
    report("\n".join(lines), out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
