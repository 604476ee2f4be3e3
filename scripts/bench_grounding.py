"""Measure the grounding gate on a catalog: build time and memory, and
`match_fragments` latency and top-3 recall on damaged real card values.

    .venv/bin/python scripts/bench_grounding.py [catalog.jsonl] [--n 200] [--seed 7]

Damaged values are real clue strings (card values) with >= 3 content words,
damaged one of three ways: a content word dropped, words reordered (two
comma/semicolon parts swapped, else two words swapped), or a typo (one letter
dropped from the longest word).  Each is matched alone and inside a wrapper
sentence ("Hi, I'm looking for <shelf>. What matters is: <damaged>").  A hit
is the original clue in the top 3; an "equivalent" hit also accepts a clue
with the same lower-cased token sequence (case / punctuation variants of the
same card value are separate clue strings).
"""
from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
import tracemalloc
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from grounding import Gate, Proposal  # noqa: E402
from grounding.words import content_tokens, is_content, tokens  # noqa: E402
from starter.index.catalog import CatalogIndex  # noqa: E402
from starter.settings import GROUNDING, SETTINGS  # noqa: E402

DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared" / "techjam" / "catalog_proxy.jsonl"


def drop_word(value: str, rng: random.Random) -> str:
    words = value.split()
    idx = [i for i, w in enumerate(words) if any(is_content(t) for t in tokens(w))]
    if len(idx) < 2:
        return value
    del words[rng.choice(idx)]
    return " ".join(words)


def reorder(value: str, rng: random.Random) -> str:
    for sep in (", ", "; ", ","):
        parts = [p for p in value.split(sep) if p.strip()]
        if len(parts) >= 2:
            i, j = rng.sample(range(len(parts)), 2)
            parts[i], parts[j] = parts[j], parts[i]
            return sep.join(parts)
    words = value.split()
    if len(words) >= 2:
        i = rng.randrange(len(words) - 1)
        words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


def typo(value: str, rng: random.Random) -> str:
    words = value.split()
    cands = [i for i, w in enumerate(words) if w.isalpha() and len(w) >= 6]
    if not cands:
        return value
    i = max(cands, key=lambda k: (len(words[k]), -k))
    w = words[i]
    k = rng.randrange(1, len(w) - 1)
    words[i] = w[:k] + w[k + 1:]
    return " ".join(words)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("catalog", nargs="?", default=str(DEFAULT))
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    t0 = time.perf_counter()
    index = CatalogIndex(args.catalog, SETTINGS.index)
    print(f"CatalogIndex: {time.perf_counter() - t0:.2f} s, {len(index.products)} products, "
          f"{len(index.clues)} clues")
    gc.collect()
    t0 = time.perf_counter()
    gate = Gate(index, GROUNDING)
    build = time.perf_counter() - t0
    del gate
    gc.collect()
    tracemalloc.start()
    gate = Gate(index, GROUNDING)
    gate.match_shelf("boots")   # the lazily built shelf strings too
    cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"Gate build: {build:.3f} s; memory {cur / 2**20:.1f} MiB (peak during build {peak / 2**20:.1f} MiB)")

    rng = random.Random(args.seed)
    pool = sorted(c for c in index.clues if len(content_tokens(c)) >= 3)
    sample = rng.sample(pool, min(args.n, len(pool)))
    norm = {}

    def key(s: str) -> tuple[str, ...]:
        k = norm.get(s)
        if k is None:
            k = norm[s] = tuple(tokens(s))
        return k

    for name, damage in (("drop a word", drop_word), ("reorder", reorder), ("typo", typo)):
        for wrapped in (False, True):
            lat, hits, eq_hits, top1, nwords, ambiguous = [], 0, 0, 0, [], 0
            for clue in sample:
                dmg = damage(clue, random.Random(zlib.crc32(clue.encode()) ^ args.seed))
                if wrapped:
                    shelf = index.products[index.clues[clue][0]].shelf
                    msg = f"Hi, I'm looking for {shelf}. What matters is: {dmg}"
                else:
                    msg = dmg
                nwords.append(len(msg.split()))
                t0 = time.perf_counter()
                res = gate.match_fragments(msg, limit=10)
                lat.append((time.perf_counter() - t0) * 1000)
                top = [c for c, _ in res[:3]]
                hits += clue in top
                top1 += bool(res) and res[0][0] == clue
                eq_hits += clue in top or any(key(c) == key(clue) for c in top)
                if clue not in top and res:
                    # Ambiguous miss: every damaged word is in the top clue as well.
                    ambiguous += set(content_tokens(dmg)) <= set(content_tokens(res[0][0]))
            lat.sort()
            n = len(sample)
            print(f"{name:12s} {'wrapped' if wrapped else 'alone  '}: top-3 recall {hits / n:.3f} "
                  f"(equivalent {eq_hits / n:.3f}, top-1 {top1 / n:.3f}, ambiguous misses {ambiguous}); latency median {statistics.median(lat):.2f} ms, "
                  f"p95 {lat[int(0.95 * n) - 1]:.2f} ms, max {lat[-1]:.2f} ms; "
                  f"words median {statistics.median(nwords):.0f}, max {max(nwords)}")

    # Grounding a dropped-word value proposed by a model: does it map to its clue?
    lat, hits = [], 0
    for clue in sample:
        dmg = drop_word(clue, random.Random(zlib.crc32(clue.encode()) ^ args.seed))
        msg = f"I'd like something with {dmg}, not too pricey"
        props = [Proposal("feature", dmg), Proposal("budget", "cheap"), Proposal("material", "silk")]
        t0 = time.perf_counter()
        acc, _rej = gate.ground(props, msg)
        lat.append((time.perf_counter() - t0) * 1000)
        hits += any(a.value == dmg and clue in a.clue_matches[:3] for a in acc)
    lat.sort()
    print(f"ground (3 proposals, dropped-word value): clue in top-3 clue_matches {hits / len(sample):.3f}; "
          f"latency median {statistics.median(lat):.2f} ms, p95 {lat[int(0.95 * len(lat)) - 1]:.2f} ms")

    # 30-word messages specifically.
    lat = []
    long_pool = [c for c in pool if len(c.split()) >= 26]
    for clue in rng.sample(long_pool, min(200, len(long_pool))):
        msg = " ".join(drop_word(clue, rng).split()[:30])
        t0 = time.perf_counter()
        gate.match_fragments(msg)
        lat.append((time.perf_counter() - t0) * 1000)
    lat.sort()
    print(f"30-word messages: median {statistics.median(lat):.2f} ms, p95 {lat[int(0.95 * len(lat)) - 1]:.2f} ms, "
          f"max {lat[-1]:.2f} ms")


if __name__ == "__main__":
    main()
