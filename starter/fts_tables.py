"""The two FTS5 tables, and how a cold build fills them beside the catalog read.

FTS5 tokenises in C inside `sqlite3_step`, which releases the GIL, so the
tables can be filled by a second thread while the main thread parses the next
catalog rows.  Not one row per step, though: after each step the filling thread
must win the GIL back, and a busy main thread gives it up only every switch
interval (5 ms), which would throttle the inserts to a crawl.  Each batch goes
in as one JSON array through one `INSERT ... SELECT ... FROM json_each(?)`:
one step tokenises the whole batch, in the batch's order, with the same rowids
and texts as row-by-row inserts (so the same index and the same BM25).
Text SQLite cannot store (a lone UTF-16 surrogate) fails the build with the
row's line (`unstorable`).
"""
from __future__ import annotations

import json
import sqlite3
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

# The template path's table (what a template names) and the people path's (every field,
# porter-stemmed: "sneakers", "pajamas").  BM25 weights are per column, in this order (config).
FTS_COLUMNS = {"docs": ("title", "categories", "body"),
               "full": ("title", "categories", "features", "details", "store", "description")}
FTS_TOKENIZERS = {"docs": "unicode61 remove_diacritics 2", "full": "porter unicode61 remove_diacritics 2"}
# The row fields the build stores (indexed or kept): text in them must be valid Unicode.
STORED_FIELDS = ("parent_asin", "title", "categories", "features", "details", "description", "store", "price")


def create_tables(db: sqlite3.Connection) -> None:
    """Both FTS5 tables, contentless (the texts are only indexed, never read back)."""
    for table, columns in FTS_COLUMNS.items():
        db.execute(f"CREATE VIRTUAL TABLE {table} USING fts5({', '.join(columns)}, content='', "
                   f"tokenize='{FTS_TOKENIZERS[table]}')")


def _insert_sql(table: str) -> str:
    columns = FTS_COLUMNS[table]
    picks = ", ".join(f"json_extract(value, '$[{k}]')" for k in range(len(columns) + 1))
    return f"INSERT INTO {table}(rowid, {', '.join(columns)}) SELECT {picks} FROM json_each(?)"


class FtsFiller:
    """Rows for both tables, written by one background thread in batches, in the order added.

    The connection belongs to the filler from the first `add` until `close` (or `abort`)
    returns: the caller must not use it in between.  At most `pending` batches wait, so memory
    stays bounded whatever the catalog's size."""

    def __init__(self, db: sqlite3.Connection, batch_rows: int = 5000, pending: int = 2) -> None:
        self.db = db
        self.batch_rows = batch_rows
        self.pending = pending
        self._rows: dict[str, list[tuple]] = {table: [] for table in FTS_COLUMNS}
        self._sql = {table: _insert_sql(table) for table in FTS_COLUMNS}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fts-fill")
        self._waiting: deque[Future] = deque()

    def add(self, rows: dict[str, tuple]) -> None:
        """One product's row for each table: (rowid, column texts...) in `FTS_COLUMNS` order."""
        for table, row in rows.items():
            self._rows[table].append(row)
        if len(self._rows["docs"]) >= self.batch_rows:
            self._submit()

    def close(self) -> None:
        """Write what is left and wait for every batch; a batch's error is raised here."""
        try:
            self._submit()
            while self._waiting:
                self._waiting.popleft().result()
        finally:
            self._pool.shutdown(wait=True)

    def abort(self) -> None:
        """Stop after the batches already handed over (their errors are dropped: the build failed)."""
        for future in self._waiting:
            future.cancel()
        self._pool.shutdown(wait=True)
        self._waiting.clear()

    def _submit(self) -> None:
        if not self._rows["docs"]:
            return
        while len(self._waiting) >= self.pending:
            self._waiting.popleft().result()
        payloads = {table: json.dumps(rows, ensure_ascii=False) for table, rows in self._rows.items()}
        self._rows = {table: [] for table in FTS_COLUMNS}
        self._waiting.append(self._pool.submit(self._write, payloads))

    def _write(self, payloads: dict[str, str]) -> None:
        for table, payload in payloads.items():
            self.db.execute(self._sql[table], (payload,))


def unstorable(path: Path) -> str:
    """The message for text SQLite cannot store: a \\u escape of a lone UTF-16 surrogate parses to a
    string that is no Unicode text.  Its line is found by a second read, on this failure path only."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            if b"\\ud" not in raw.lower():      # such strings only come from escapes
                continue
            try:
                row = json.loads(raw)
                json.dumps([row.get(k) for k in STORED_FIELDS], ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError:
                return (f"malformed catalog: {path}:{lineno}: a \\u escape of a lone UTF-16 surrogate is no "
                        "character; fix or remove that row")
            except (ValueError, AttributeError):
                continue
    return f"malformed catalog: {path}: text that is not valid Unicode"
