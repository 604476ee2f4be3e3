"""Catalog rows -> what the index keeps of each, in file order; parsed by worker processes when large.

A cold build spends most of its time in pure Python, row by row (JSON, the card replay of
`contest.card`, audiences), which a second thread cannot share (the GIL).  So a large file is
parsed by forked worker processes, a span of whole lines each (read by the worker from the file:
this process only finds where the spans start), and the records are consumed here in file order:
the same records in the same order as a serial read, so the same index.  A process is forked
only from a process with no other thread (a fork copies one thread; a lock another thread held
would stay locked in the child) that is no daemon, where "fork" exists; otherwise, and for small
files, the rows are read here, one by one.
"""
from __future__ import annotations

import math
import multiprocessing
import threading
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Iterator, NamedTuple

from contest.card import CARD_SIZE, card_title, card_values, classify, coarse_category, split_card
from contest.jsonl import field_text, iter_jsonl, parse_line
from grounding.audience import product_audiences

SPAN_BYTES = 3_000_000      # about the bytes of whole lines a worker parses per task (2,000 proxy rows)
_TYPES: dict[str, str] = {}  # a worker's classify() memo (card values repeat)


class Record(NamedTuple):
    """One catalog row as the index keeps it (no index position yet: duplicates are dropped later)."""

    pid: str | None                   # None: no usable parent_asin
    title: str = ""
    shelf: str = ""
    price: float | None = None
    rating_number: int = 0
    average_rating: float = 0.0
    constraints: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    audience: frozenset[str] = frozenset()
    store: str = ""                   # the brand / store name, as written (trimmed)
    missing: tuple[bool, bool, bool] = (False, False, False)   # title, categories, numeric price
    docs: tuple[str, ...] = ()        # the template path's BM25 texts: title, category path, values + store
    full: tuple[str, ...] = ()        # the people path's: title, category path, features, details, store, description


def capped(row: dict, limit: int) -> dict:
    """The row with every text cut to `limit` characters and every list to `limit // 100` items: a
    catalog line can be arbitrarily large, what is read and indexed of it is not."""
    items = max(1, limit // 100)

    def cut(v: object, depth: int = 0) -> object:
        if isinstance(v, str):
            return v[:limit]
        if isinstance(v, list) and depth < 2:
            return [cut(x, depth + 1) for x in v[:items]]
        if isinstance(v, dict) and depth < 2:
            return {str(k)[:limit]: cut(x, depth + 1) for k, x in list(v.items())[:items]}
        return v

    out: dict = {}
    for k, v in row.items():     # the common shapes inline (cut() per string is most of a build's time)
        if isinstance(v, str):
            out[k] = v[:limit]
        elif isinstance(v, list):
            out[k] = [x[:limit] if isinstance(x, str) else cut(x, 1) for x in v[:items]]
        elif isinstance(v, dict):
            out[k] = {str(key)[:limit]: (x[:limit] if isinstance(x, str) else cut(x, 1))
                      for key, x in list(v.items())[:items]}
        else:
            out[k] = v           # a number, a boolean or null
    return out


def number(value: object) -> float | None:
    """A finite JSON number as a float (None for anything else, booleans included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


def record(row: dict, max_chars: int, types: dict[str, str]) -> Record:
    """What the index keeps of a row; `types` memoises classify() (card values repeat)."""
    pid = row.get("parent_asin")
    if not isinstance(pid, str) or not pid.strip():
        return Record(None)
    row = capped(row, max_chars)
    hard, soft = split_card(card_values(row, limit=CARD_SIZE) or [card_title(row)])
    constraints = tuple(hard + soft)
    kinds = []
    for v in constraints:
        t = types.get(v)
        if t is None:
            t = types[v] = classify(v)
        kinds.append(t)
    rn = row.get("rating_number")
    cats = row.get("categories") if isinstance(row.get("categories"), list) else None
    title = str(row.get("title") or "")
    price = number(row.get("price"))
    categories = field_text(row.get("categories"))
    store = row.get("store")
    return Record(
        pid=pid, title=title, shelf=coarse_category(cats), price=price,
        rating_number=rn if isinstance(rn, int) and not isinstance(rn, bool) and rn > 0 else 0,
        average_rating=number(row.get("average_rating")) or 0.0,
        constraints=constraints, types=tuple(kinds), audience=product_audiences(title, cats or []),
        store=store.strip() if isinstance(store, str) else "",
        missing=(not (isinstance(row.get("title"), str) and row["title"].strip()), not cats, price is None),
        # BM25 sees what a shopper names: the title, the category path, the card values and the store
        # (not the long marketing text); the people path's table sees every field.
        docs=(title, categories, " ".join(constraints) + " " + str(store or "")),
        full=(title, categories, field_text(row.get("features")), field_text(row.get("details")),
              field_text(store), field_text(row.get("description"))),
    )


def read_records(path: Path, max_chars: int, processes: int, min_bytes: int) -> Iterator[Record]:
    """Every row's record in file order: by `processes` forked workers when the file holds at least
    `min_bytes` and forking is safe (`can_fork`), else serially.  Errors name the file and line."""
    if processes < 2 or path.stat().st_size < min_bytes or not can_fork():
        types: dict[str, str] = {}
        for row in iter_jsonl(path):
            yield record(row, max_chars, types)
        return
    pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork"))
    waiting: deque = deque()
    try:
        for start, offset, size in _spans(path):
            waiting.append(pool.submit(_parse_span, str(path), start, offset, size, max_chars))
            if len(waiting) >= 2 * processes:
                yield from waiting.popleft().result()
        while waiting:
            yield from waiting.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def can_fork() -> bool:
    """Whether worker processes may be forked here: "fork" exists, this is the only thread, and this
    process is no daemon (a pool's worker, e.g. the evaluator's, may not have children)."""
    return ("fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
            and not multiprocessing.current_process().daemon)


def _spans(path: Path) -> Iterator[tuple[int, int, int]]:
    """(number of the first line, byte offset, byte size) of runs of whole lines, about `SPAN_BYTES`
    each (a longer line makes its span longer)."""
    with open(path, "rb") as fh:
        line, offset = 1, 0
        carry = b""
        while block := fh.read(SPAN_BYTES):
            data = carry + block if carry else block
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                carry = data
                continue
            yield line, offset, cut
            line += data.count(b"\n", 0, cut)
            offset += cut
            carry = data[cut:]
        if carry:
            yield line, offset, len(carry)


def _parse_span(path: str, start: int, offset: int, size: int, max_chars: int) -> list[Record]:
    """A worker's task: the records of the lines in `size` bytes at `offset`, the first being line
    `start` (blank lines give none)."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        data = fh.read(size)
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()                  # what follows the last newline is no line
    out: list[Record] = []
    for k, raw in enumerate(lines):
        row = parse_line(raw, path, start + k)
        if row is not None:
            out.append(record(row, max_chars, _TYPES))
    return out
