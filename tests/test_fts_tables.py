"""The FTS5 tables filled in batches, by a second thread or by a forked process (starter/index/fts_tables.py),
hold exactly what row-by-row inserts would, and a bad row still fails the build with a clear message."""
from __future__ import annotations

import dataclasses
import json
import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import write_rows

from starter.index import catalog as CATALOG
from starter.index.catalog import CatalogError, CatalogIndex
from starter.index.catalog_rows import can_fork
from starter.settings import SETTINGS
from starter.index.fts_tables import FTS_COLUMNS, FtsFiller, ProcessFiller, create_tables
from starter.index.postings import read_row_lengths, row_lengths
from starter.index.cache import IndexCache

needs_fork = pytest.mark.skipif(not can_fork(), reason="needs the fork start method and a single thread")
# Builds into the cache by a forked filling process, whatever the catalog's size.
BY_PROCESS = dataclasses.replace(SETTINGS.index, build_parallel_min_bytes=0)

TEXTS = ["Women's Leather Ankle Boots", "Café crème \"quoted\" 3.5 mm", "", "naïve – dash; semi,colon",
         "😀 emoji and 日本語 text", "back\\slash and\ttab\nnewline", "OR AND NOT NEAR( ) * ^ :", "19.99 $ 100%"]


def _rows(n: int) -> list[dict[str, tuple]]:
    out = []
    for i in range(n):
        t = [TEXTS[(i + k) % len(TEXTS)] + f" w{i % 7}" for k in range(6)]
        out.append({"docs": (i, t[0], t[1], t[2]), "full": (i, *t)})
    return out


def _instances(db: sqlite3.Connection, table: str) -> list[tuple]:
    db.execute(f"CREATE VIRTUAL TABLE temp.v_{table} USING fts5vocab(main, {table}, instance)")
    return db.execute(f"SELECT term, doc, col, offset FROM temp.v_{table} ORDER BY term, doc, col, offset").fetchall()


def _by_rows(rows: list[dict[str, tuple]]) -> sqlite3.Connection:
    db = sqlite3.connect(":memory:")
    create_tables(db)
    for table, columns in FTS_COLUMNS.items():
        marks = ", ".join("?" * (len(columns) + 1))
        db.executemany(f"INSERT INTO {table}(rowid, {', '.join(columns)}) VALUES ({marks})",
                       [r[table] for r in rows])
    return db


@pytest.mark.parametrize("batch_rows, pending", [(5000, 2), (3, 1), (1, 2)])
def test_batches_from_a_thread_index_exactly_what_row_inserts_do(batch_rows: int, pending: int) -> None:
    rows = _rows(40)
    db = sqlite3.connect(":memory:", check_same_thread=False)
    create_tables(db)
    filler = FtsFiller(db, batch_rows=batch_rows, pending=pending)
    for r in rows:
        filler.add(r)
    filler.close()
    _same_as_row_inserts(db, rows)


def _same_as_row_inserts(db: sqlite3.Connection, rows: list[dict[str, tuple]]) -> None:
    reference = _by_rows(rows)
    for table in FTS_COLUMNS:
        got = _instances(db, table)
        assert got and got == _instances(reference, table)
        query = f"SELECT rowid, bm25({table}) FROM {table} WHERE {table} MATCH 'leather OR w3 OR crème' " \
                "ORDER BY 2, rowid"
        assert db.execute(query).fetchall() == reference.execute(query).fetchall()
        stored, want = read_row_lengths(db, table), row_lengths(reference, table)   # stored when the filler closed
        assert stored is not None and stored[0].tolist() == want[0].tolist() and stored[1:] == want[1:]


@needs_fork
@pytest.mark.parametrize("batch_rows, pending", [(5000, 2), (3, 1), (1, 2)])
def test_batches_from_a_process_index_exactly_what_row_inserts_do(tmp_path: Path, batch_rows: int,
                                                                  pending: int) -> None:
    rows = _rows(40)
    path = tmp_path / "index.sqlite"
    filler = ProcessFiller(path, batch_rows=batch_rows, pending=pending)
    for r in rows:
        filler.add(r)
    filler.close()
    assert not multiprocessing.active_children()
    _same_as_row_inserts(sqlite3.connect(path), rows)


@needs_fork
@pytest.mark.parametrize("batch_rows", [1, 5000])
def test_a_filling_process_that_dies_fails_the_build(tmp_path: Path, batch_rows: int) -> None:
    filler = ProcessFiller(tmp_path / "index.sqlite", batch_rows=batch_rows)
    filler._process.kill()
    filler._process.join()
    with pytest.raises(RuntimeError, match=r"filling process died \(exit code -9\)"):
        for r in _rows(3):
            filler.add(r)          # with one row a batch, sending finds the process gone
        filler.close()
    filler.abort()
    assert not multiprocessing.active_children()


@needs_fork
def test_a_build_into_the_cache_fills_by_process_and_gives_the_same_tables(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "catalog.jsonl"
    rows = [{"parent_asin": f"P{i}", "title": f"{TEXTS[i % len(TEXTS)]} boot {i}", "categories": ["Shoes", "Boots"],
             "features": [TEXTS[(i + 1) % len(TEXTS)]], "description": [f"leather w{i % 5}"], "store": "Acme"}
            for i in range(30)]
    write_rows(path, rows)
    in_memory = CatalogIndex(path, BY_PROCESS)                 # no file: the thread fills

    def no_thread(*args, **kwargs):
        raise AssertionError("a build into a file filled by a thread")
    monkeypatch.setattr(CATALOG, "FtsFiller", no_thread)
    cached = CatalogIndex(path, BY_PROCESS, IndexCache(tmp_path / "cache"))
    assert cached.cache_state == "built" and cached.products == in_memory.products
    for table in FTS_COLUMNS:
        assert _instances(cached.db, table) == _instances(in_memory.db, table)
    words = ["leather", "boot", "crème", "acme"]
    assert cached.bm25(words, 50) == in_memory.bm25(words, 50)
    assert cached.fulltext(words, 50) == in_memory.fulltext(words, 50)


@pytest.mark.parametrize("field", ["description", "title", "parent_asin"])
@pytest.mark.parametrize("into_cache", [False, pytest.param(True, marks=needs_fork)])
def test_a_row_that_cannot_be_stored_fails_the_build_naming_its_line(tmp_path: Path, field: str,
                                                                     into_cache: bool) -> None:
    # A JSON escape of a lone surrogate parses to a str that SQLite cannot take as UTF-8; a valid
    # pair (an emoji) and a lone surrogate in a field the build does not store are fine.
    good = {"parent_asin": "A1", "title": "Leather boots \ud83d\ude00", "categories": ["Shoes"], "price": 10.0,
            "images": ["x \ud800"]}
    bad = {"parent_asin": "A2", "title": "Boots", "categories": ["Shoes"], "description": "plain"}
    bad[field] = bad[field] + " \ud800 y" if field in bad else "x \ud800 y"
    path = tmp_path / "catalog.jsonl"
    write_rows(path, (good, bad))   # \\udXXX escapes
    cfg, cache = (BY_PROCESS, IndexCache(tmp_path / "cache")) if into_cache else (SETTINGS.index, None)
    with pytest.raises(CatalogError, match=r"catalog.jsonl:2: a \\u escape of a lone UTF-16 surrogate"):
        CatalogIndex(path, cfg, cache)
    assert not multiprocessing.active_children()
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    assert len(CatalogIndex(path, cfg, cache).products) == 1


@pytest.mark.parametrize("into_cache", [False, pytest.param(True, marks=needs_fork)])
def test_a_failed_read_stops_the_filler(tmp_path: Path, into_cache: bool) -> None:
    path = tmp_path / "catalog.jsonl"
    rows = [{"parent_asin": f"P{i}", "title": f"Boot {i}", "categories": ["Shoes"]} for i in range(12)]
    write_rows(path, rows, "{not json\n")
    cfg, cache = (BY_PROCESS, IndexCache(tmp_path / "cache")) if into_cache else (SETTINGS.index, None)
    with pytest.raises(CatalogError, match=r"catalog.jsonl:13"):
        CatalogIndex(path, cfg, cache)
    assert not multiprocessing.active_children()
    import threading
    assert not [t for t in threading.enumerate() if t.name.startswith("fts-fill")]


def test_the_hash_size_changes_only_how_the_index_is_written(tmp_path: Path) -> None:
    """FTS5's 'hashsize' decides when pending index data becomes a segment: a tiny one (many segments,
    many merges) and a large one index the same instances and give the same BM25 scores."""
    rows = _rows(300)
    dbs = []
    for hash_bytes in (None, 1024, 64 * 1024 * 1024):
        db = sqlite3.connect(":memory:")
        create_tables(db, hash_bytes)
        for table, columns in FTS_COLUMNS.items():
            marks = ", ".join("?" * (len(columns) + 1))
            db.executemany(f"INSERT INTO {table}(rowid, {', '.join(columns)}) VALUES ({marks})",
                           [r[table] for r in rows])
        db.commit()
        if hash_bytes:
            assert db.execute("SELECT v FROM docs_config WHERE k = 'hashsize'").fetchone() == (hash_bytes,)
        dbs.append(db)
    segments = [db.execute("SELECT count(*) FROM full_data").fetchone()[0] for db in dbs]
    assert segments[1] > segments[0]                  # the tiny hash wrote (and merged) more
    for table in FTS_COLUMNS:
        want = _instances(dbs[0], table)
        query = f"SELECT rowid, bm25({table}) FROM {table} WHERE {table} MATCH ? ORDER BY bm25({table}), rowid"
        for db in dbs[1:]:
            assert _instances(db, table) == want
            for words in ("w3", "w1 OR w5", "leather", "boots OR emoji"):
                assert db.execute(query, (words,)).fetchall() == dbs[0].execute(query, (words,)).fetchall()
