"""The FTS5 tables filled in batches by a second thread (starter/fts_tables.py) hold exactly what
row-by-row inserts would, and a bad row still fails the build with a clear message."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from starter.catalog import CatalogError, CatalogIndex
from starter.config import TUNABLES
from starter.fts_tables import FTS_COLUMNS, FtsFiller, create_tables

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
    reference = _by_rows(rows)
    for table in FTS_COLUMNS:
        got = _instances(db, table)
        assert got and got == _instances(reference, table)
        query = f"SELECT rowid, bm25({table}) FROM {table} WHERE {table} MATCH 'leather OR w3 OR crème' " \
                "ORDER BY 2, rowid"
        assert db.execute(query).fetchall() == reference.execute(query).fetchall()


@pytest.mark.parametrize("field", ["description", "title", "parent_asin"])
def test_a_row_that_cannot_be_stored_fails_the_build_naming_its_line(tmp_path: Path, field: str) -> None:
    # A JSON escape of a lone surrogate parses to a str that SQLite cannot take as UTF-8; a valid
    # pair (an emoji) and a lone surrogate in a field the build does not store are fine.
    good = {"parent_asin": "A1", "title": "Leather boots \ud83d\ude00", "categories": ["Shoes"], "price": 10.0,
            "images": ["x \ud800"]}
    bad = {"parent_asin": "A2", "title": "Boots", "categories": ["Shoes"], "description": "plain"}
    bad[field] = bad[field] + " \ud800 y" if field in bad else "x \ud800 y"
    path = tmp_path / "catalog.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in (good, bad)) + "\n", encoding="utf-8")   # \\udXXX escapes
    with pytest.raises(CatalogError, match=r"catalog.jsonl:2: a \\u escape of a lone UTF-16 surrogate"):
        CatalogIndex(path, TUNABLES)
    path.write_text(json.dumps(good) + "\n", encoding="utf-8")
    assert len(CatalogIndex(path, TUNABLES).products) == 1


def test_a_failed_read_stops_the_filler_thread(tmp_path: Path) -> None:
    path = tmp_path / "catalog.jsonl"
    rows = [{"parent_asin": f"P{i}", "title": f"Boot {i}", "categories": ["Shoes"]} for i in range(12)]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(CatalogError, match=r"catalog.jsonl:13"):
        CatalogIndex(path, TUNABLES)
    import threading
    assert not [t for t in threading.enumerate() if t.name.startswith("fts-fill")]
