"""Each term's rows and per-column counts, stored once when the index is built.

BM25 from arrays needs, for each query term, the rows holding it and its count
in each column.  FTS5 gives them through its `fts5vocab` instance view, one
instance at a time as text: 4 ms for "black" and 70 ms for "women" on the
50,000-row proxy, most of a cold free-text turn.  The build reads that view
once for every term and stores the answer as two little-endian blobs per
(table, term): the sorted (row << 4 | column) places and each place's count.
A query reads a term's blob in well under a millisecond.

Only single terms are stored: a phrase of several terms ("3.5" is "3" then
"5") needs token offsets, which stay with `fts5vocab`.  An index built
without this table is still read the old way.
"""
from __future__ import annotations

import sqlite3

import numpy as np

from starter.index.arrays import runs

TABLE = "term_counts"
# (row << COLUMN_BITS | column): up to 16 columns, 2^27 rows.
COLUMN_BITS = 4
# Terms read and written at a time by the build (a bound on its memory, not a tuning knob).
BATCH_TERMS = 2000


def store_term_counts(db: sqlite3.Connection, columns: dict[str, tuple[str, ...]]) -> None:
    """Every term's places and counts in each FTS table of `columns`, read from FTS5's own index a
    batch of terms at a time (a million rows hold 200 million instances: never all in memory)."""
    db.execute(f"CREATE TABLE {TABLE} (name TEXT, term TEXT, places BLOB, counts BLOB, "
               "PRIMARY KEY (name, term)) WITHOUT ROWID")
    for table, names in columns.items():
        view = f"temp.{table}_build_instances"
        db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {view} USING fts5vocab(main, '{table}', 'instance')")
        cases = " ".join(f"WHEN '{c}' THEN {k}" for k, c in enumerate(names))
        read = db.execute(f"SELECT term, group_concat((doc << {COLUMN_BITS}) + CASE col {cases} END) "
                          f"FROM {view} GROUP BY term")
        while batch := read.fetchmany(BATCH_TERMS):
            db.executemany(f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?)",
                           [(table, term, *_packed(instances)) for term, instances in batch])
        db.execute(f"DROP TABLE {view}")


def _packed(instances: str) -> tuple[bytes, bytes]:
    """One term's instances (a place per instance, comma-separated) as distinct places and counts."""
    places = np.fromstring(instances, dtype=np.int64, sep=",")
    places.sort(kind="stable")
    distinct_places, counts = runs(places)
    return distinct_places.astype("<i4").tobytes(), counts.astype("<i4").tobytes()


def has_term_counts(db: sqlite3.Connection) -> bool:
    """Whether the index stores term counts (an index built by older code does not)."""
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (TABLE,)).fetchone() is not None


def read_term_counts(db: sqlite3.Connection, table: str, term: str) -> tuple[np.ndarray, np.ndarray]:
    """The term's sorted places (row << COLUMN_BITS | column) and its count in each; empty when no
    row holds it."""
    got = db.execute(f"SELECT places, counts FROM {TABLE} WHERE name = ? AND term = ?", (table, term)).fetchone()
    if got is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return (np.frombuffer(got[0], dtype="<i4").astype(np.int64),
            np.frombuffer(got[1], dtype="<i4").astype(np.int64))
