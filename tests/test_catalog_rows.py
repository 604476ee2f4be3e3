"""Catalog rows parsed by forked workers (starter/index/catalog_rows.py) give the serial read's records, in
order, the same index, and the same errors; a process with another thread reads serially."""
from __future__ import annotations

import dataclasses
import json
import sqlite3
import threading
from pathlib import Path

import pytest

from starter.index import catalog_rows as ROWS
from starter.index.catalog import CatalogError, CatalogIndex
from starter.settings import SETTINGS
from tests.conftest import SMALL_PRODUCTS

pytestmark = pytest.mark.skipif(not ROWS.can_fork(), reason="needs the fork start method and a single thread")


def _catalog(tmp_path: Path, extra: str = "") -> Path:
    rows = []
    for k in range(9):
        for p in SMALL_PRODUCTS:
            rows.append(json.dumps(dict(p, parent_asin=f"{p['parent_asin']}-{k}", title=f"{p['title']} {k}")))
    rows.insert(5, json.dumps(json.loads(rows[3])))                    # a duplicate id
    rows.insert(7, json.dumps({"title": "no id", "categories": ["Shoes"]}))
    rows.insert(9, "")                                                  # a blank line
    path = tmp_path / "catalog.jsonl"
    path.write_text("\n".join(rows) + "\n" + extra, encoding="utf-8")
    return path


def _parallel(monkeypatch: pytest.MonkeyPatch, path: Path) -> list[ROWS.Record]:
    monkeypatch.setattr(ROWS, "SPAN_BYTES", 1500)
    return list(ROWS.read_records(path, SETTINGS.index.max_field_chars, 2, 0))


def test_workers_give_the_serial_records_in_file_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _catalog(tmp_path)
    serial = list(ROWS.read_records(path, SETTINGS.index.max_field_chars, 1, 0))
    assert len(serial) > 3 * 7 and any(r.pid is None for r in serial)
    monkeypatch.setattr(ROWS, "SPAN_BYTES", 1500)
    assert len(list(ROWS._spans(path))) > 3
    assert _parallel(monkeypatch, path) == serial


@pytest.mark.parametrize("span_bytes", [1, 5, 64, 10_000])
@pytest.mark.parametrize("text", [b"a\nbb\n\nccc\n", b"a\r\nbb\r\n\r\nlong line " * 7 + b"tail", b"", b"\n\n", b"x"])
def test_spans_cover_the_file_in_whole_lines_with_their_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 span_bytes: int, text: bytes) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(text)
    monkeypatch.setattr(ROWS, "SPAN_BYTES", span_bytes)
    lines: list[tuple[int, bytes]] = []
    end = 0
    for start, offset, size in ROWS._spans(path):
        assert offset == end and size > 0
        end = offset + size
        chunk = text[offset:end]
        assert chunk.endswith(b"\n") or end == len(text)
        parts = chunk.split(b"\n")
        lines += [(start + k, part) for k, part in enumerate(parts[:-1] if chunk.endswith(b"\n") else parts)]
    assert end == len(text)
    with open(path, "rb") as fh:       # what reading the file line by line numbers and holds
        assert lines == [(n, raw.rstrip(b"\n")) for n, raw in enumerate(fh, 1)]


def test_a_malformed_line_names_its_line_from_a_worker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _catalog(tmp_path, extra="{not json\n")
    line = len(path.read_text(encoding="utf-8").splitlines())
    with pytest.raises(ValueError, match=rf"catalog.jsonl:{line}: invalid JSON"):
        _parallel(monkeypatch, path)
    cfg = dataclasses.replace(SETTINGS.index, build_processes=2, build_parallel_min_bytes=0)
    with pytest.raises(CatalogError, match=rf"catalog.jsonl:{line}: invalid JSON"):
        CatalogIndex(path, cfg)


def test_the_index_is_the_same_built_by_workers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _catalog(tmp_path)
    monkeypatch.setattr(ROWS, "SPAN_BYTES", 1500)
    serial = CatalogIndex(path, dataclasses.replace(SETTINGS.index, build_processes=1))
    parallel = CatalogIndex(path, dataclasses.replace(SETTINGS.index, build_processes=2, build_parallel_min_bytes=0))
    assert parallel.products == serial.products and parallel.clues == serial.clues

    def dump(db: sqlite3.Connection) -> list[tuple]:
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.v_full USING fts5vocab(main, full, instance)")
        return db.execute("SELECT * FROM temp.v_full ORDER BY 1, 2, 3, 4").fetchall()
    assert dump(parallel.db) == dump(serial.db)


def test_a_process_with_another_thread_reads_serially(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _catalog(tmp_path)

    def no_pool(*args, **kwargs):
        raise AssertionError("forked with another thread alive")
    monkeypatch.setattr(ROWS, "ProcessPoolExecutor", no_pool)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert not ROWS.can_fork()
        got = list(ROWS.read_records(path, SETTINGS.index.max_field_chars, 2, 0))
    finally:
        stop.set()
        other.join()
    assert got == list(ROWS.read_records(path, SETTINGS.index.max_field_chars, 1, 0))


def _records_in_a_daemon(path: str, out) -> None:
    out.put(len(list(ROWS.read_records(Path(path), SETTINGS.index.max_field_chars, 2, 0))))


def test_a_daemon_process_reads_serially(tmp_path: Path) -> None:
    """A pool's worker (the evaluator's) is a daemon, which may not have children."""
    import multiprocessing
    path = _catalog(tmp_path)
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    worker = ctx.Process(target=_records_in_a_daemon, args=(str(path), out), daemon=True)
    worker.start()
    got = out.get(timeout=60)
    worker.join(timeout=60)
    assert worker.exitcode == 0 and got == len(list(ROWS.read_records(path, SETTINGS.index.max_field_chars, 1, 0)))


def test_a_cache_build_with_another_thread_alive_forks_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No parsing workers and no FTS5 filling process: the rows are read here and the tables filled by a
    thread, into the same index."""
    from starter.index import catalog as CATALOG
    from starter.index.cache import IndexCache
    path = _catalog(tmp_path)
    cfg = dataclasses.replace(SETTINGS.index, build_processes=2, build_parallel_min_bytes=0)
    reference = CatalogIndex(path, cfg)

    def no_fork(*args, **kwargs):
        raise AssertionError("forked with another thread alive")
    monkeypatch.setattr(ROWS, "ProcessPoolExecutor", no_fork)
    monkeypatch.setattr(CATALOG, "ProcessFiller", no_fork)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        built = CatalogIndex(path, cfg, IndexCache(tmp_path / "cache"))
    finally:
        stop.set()
        other.join()
    assert built.cache_state == "built" and built.products == reference.products
    assert built.bm25(["cotton", "boot"], 20) == reference.bm25(["cotton", "boot"], 20)
