"""The two FTS5 tables, and how a cold build fills them beside the catalog read.

Tokenising for FTS5 is a third of a cold build's work, so it runs beside the
catalog read, in one of two ways, both inserting the same rows in the same
order with the same rowids (so the same index and the same BM25):

- `ProcessFiller`, for a build into a file when a process may be forked: a
  forked process with its own connection to the file inserts the rows sent to
  it, row by row.  It shares no GIL with the reading process and needs no JSON
  (at a million rows the thread below spent 104 s writing for 74 s of CPU, and
  encoding its batches cost the reader 14 s).
- `FtsFiller`, otherwise (an in-memory database, or no fork): a second thread.
  FTS5 tokenises in C inside `sqlite3_step`, which releases the GIL, but after
  each step the thread must win the GIL back, and a busy main thread gives it up
  only every switch interval (5 ms), which would throttle row inserts to a crawl.
  So each batch goes in as one JSON array through one `INSERT ... SELECT ...
  FROM json_each(?)`: one step tokenises the whole batch, in the batch's order.

Either way, closing the filler also stores each table's row lengths
(`postings.store_row_lengths`) and each term's counts (`term_counts`), which
BM25 reads from arrays; the filling process works them out while the building
process derives the rest.

Text SQLite cannot store (a lone UTF-16 surrogate) fails the build with the
row's line (`unstorable`).
"""
from __future__ import annotations

import json
import multiprocessing
import queue
import signal
import sqlite3
import threading
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Protocol

from starter.index.postings import store_row_lengths
from starter.index.term_counts import store_term_counts

# The template path's table (what a template names) and the people path's (every field,
# porter-stemmed: "sneakers", "pajamas").  BM25 weights are per column, in this order (config).
FTS_COLUMNS = {"docs": ("title", "categories", "body"),
               "full": ("title", "categories", "features", "details", "store", "description")}
FTS_TOKENIZERS = {"docs": "unicode61 remove_diacritics 2", "full": "porter unicode61 remove_diacritics 2"}
# The row fields the build stores (indexed or kept): text in them must be valid Unicode.
STORED_FIELDS = ("parent_asin", "title", "categories", "features", "details", "description", "store", "price")


def fast_writes(db: sqlite3.Connection) -> None:
    """A build writes a fresh file that is published only once complete: no journal, no syncs."""
    db.execute("PRAGMA journal_mode=OFF")
    db.execute("PRAGMA synchronous=OFF")


def fts_phrase(word: str) -> str:
    """A word as one quoted FTS5 phrase (its quotes doubled), so no text is read as query syntax."""
    return '"' + word.replace('"', '""') + '"'


def store_bm25_tables(db: sqlite3.Connection) -> None:
    """What BM25 from arrays reads, worked out once the FTS5 tables are full: each table's row lengths
    and each term's counts (both fillers close with it)."""
    store_row_lengths(db, list(FTS_COLUMNS))
    store_term_counts(db, FTS_COLUMNS)


def create_tables(db: sqlite3.Connection, hash_bytes: int | None = None) -> None:
    """Both FTS5 tables, contentless (the texts are only indexed, never read back), each holding up to
    `hash_bytes` of pending index data in memory (FTS5's 'hashsize'; None keeps SQLite's default,
    and so does an SQLite without the option)."""
    for table, columns in FTS_COLUMNS.items():
        db.execute(f"CREATE VIRTUAL TABLE {table} USING fts5({', '.join(columns)}, content='', "
                   f"tokenize='{FTS_TOKENIZERS[table]}')")
        if hash_bytes:
            try:
                db.execute(f"INSERT INTO {table}({table}, rank) VALUES('hashsize', ?)", (int(hash_bytes),))
            except sqlite3.OperationalError:
                pass


class Filler(Protocol):
    """What a build hands its FTS rows to: `add` per product, then `close` (or `abort` on failure)."""

    def add(self, rows: dict[str, tuple]) -> None: ...

    def close(self) -> None: ...

    def abort(self) -> None: ...


def _values_sql(table: str) -> str:
    columns = FTS_COLUMNS[table]
    return f"INSERT INTO {table}(rowid, {', '.join(columns)}) VALUES ({', '.join('?' * (len(columns) + 1))})"


def _insert_sql(table: str) -> str:
    columns = FTS_COLUMNS[table]
    picks = ", ".join(f"json_extract(value, '$[{k}]')" for k in range(len(columns) + 1))
    return f"INSERT INTO {table}(rowid, {', '.join(columns)}) SELECT {picks} FROM json_each(?)"


class _Batches:
    """Both tables' rows gathered in batches of `batch_rows`, handed on by `_flush` in the order added."""

    def __init__(self, batch_rows: int) -> None:
        self.batch_rows = batch_rows
        self._rows: dict[str, list[tuple]] = {table: [] for table in FTS_COLUMNS}

    def add(self, rows: dict[str, tuple]) -> None:
        """One product's row for each table: (rowid, column texts...) in `FTS_COLUMNS` order."""
        for table, row in rows.items():
            self._rows[table].append(row)
        if len(self._rows["docs"]) >= self.batch_rows:
            self._flush()

    def _take(self) -> dict[str, list[tuple]] | None:
        """The rows gathered since the last batch (None when there are none)."""
        if not self._rows["docs"]:
            return None
        batch, self._rows = self._rows, {table: [] for table in FTS_COLUMNS}
        return batch

    def _flush(self) -> None:
        raise NotImplementedError


class FtsFiller(_Batches):
    """Rows for both tables, written by one background thread in batches, in the order added.

    The connection belongs to the filler from the first `add` until `close` (or `abort`)
    returns: the caller must not use it in between.  At most `pending` batches wait, so memory
    stays bounded whatever the catalog's size."""

    def __init__(self, db: sqlite3.Connection, batch_rows: int = 5000, pending: int = 2) -> None:
        super().__init__(batch_rows)
        self.db = db
        self.pending = pending
        self._sql = {table: _insert_sql(table) for table in FTS_COLUMNS}
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fts-fill")
        self._waiting: deque[Future] = deque()

    def close(self) -> None:
        """Write what is left, wait for every batch and store the row lengths; a batch's error is raised here."""
        try:
            self._flush()
            while self._waiting:
                self._waiting.popleft().result()
        finally:
            self._pool.shutdown(wait=True)
        store_bm25_tables(self.db)

    def abort(self) -> None:
        """Stop after the batches already handed over (their errors are dropped: the build failed)."""
        for future in self._waiting:
            future.cancel()
        self._pool.shutdown(wait=True)
        self._waiting.clear()

    def _flush(self) -> None:
        batch = self._take()
        if batch is None:
            return
        while len(self._waiting) >= self.pending:
            self._waiting.popleft().result()
        payloads = {table: json.dumps(rows, ensure_ascii=False) for table, rows in batch.items()}
        self._waiting.append(self._pool.submit(self._write, payloads))

    def _write(self, payloads: dict[str, str]) -> None:
        for table, payload in payloads.items():
            self.db.execute(self._sql[table], (payload,))


class ProcessFiller(_Batches):
    """Rows for both tables, sent in batches to a forked process that inserts them into the database
    file at `db_path` over its own connection, in the order added.

    The filling process creates the tables.  Fork it before this process opens the file (SQLite's
    file locks are per process, and a connection must not cross a fork) and while this process has
    no other thread (`catalog_rows.can_fork`); this process must not touch the file until `close` (or
    `abort`) returns.  At most `pending` batches wait in the filling process (and one in the pipe),
    so memory stays bounded."""

    def __init__(self, db_path: Path, batch_rows: int = 5000, pending: int = 2, hash_bytes: int | None = None) -> None:
        super().__init__(batch_rows)
        context = multiprocessing.get_context("fork")
        self._pipe, theirs = context.Pipe()
        self._process = context.Process(target=_fill_file, args=(str(db_path), theirs, pending, hash_bytes),
                                        name="fts-fill", daemon=True)
        self._process.start()
        theirs.close()

    def close(self) -> None:
        """Send what is left, wait until every row is committed; the filling process's error is raised here."""
        try:
            self._flush()
            self._put(None)
            try:
                error = self._pipe.recv()
            except (EOFError, OSError):
                error = self._died()
        finally:
            self._process.join()
            self._pipe.close()
        if error is not None:
            raise error

    def abort(self) -> None:
        """Stop the filling process (what it wrote is dropped with the failed build)."""
        self._process.kill()
        self._process.join()
        self._pipe.close()

    def _flush(self) -> None:
        batch = self._take()
        if batch is not None:
            self._put(batch)

    def _put(self, batch: dict[str, list[tuple]] | None) -> None:
        try:
            self._pipe.send(batch)
        except OSError:                      # a broken pipe: the filling process is gone
            raise self._died() from None

    def _died(self) -> RuntimeError:
        self._process.join(timeout=5)
        return RuntimeError(f"the FTS5 filling process died (exit code {self._process.exitcode})")


def _fill_file(db_path: str, pipe: Connection, pending: int, hash_bytes: int | None = None) -> None:
    """The filling process: a thread receives the batches (so the pipe keeps flowing while rows are
    tokenised), this thread inserts them and commits after the last; then it reports None or the
    first error (and drains the rest, so the sender never blocks)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # an interrupt is the building process's to handle
    inbox: queue.Queue = queue.Queue(maxsize=pending)

    def receive() -> None:
        while True:
            try:
                batch = pipe.recv()
            except (EOFError, OSError):
                batch = None
            inbox.put(batch)
            if batch is None:
                return

    threading.Thread(target=receive, daemon=True).start()
    error: BaseException | None = None
    db: sqlite3.Connection | None = None
    sql = {table: _values_sql(table) for table in FTS_COLUMNS}
    try:
        db = sqlite3.connect(db_path)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        create_tables(db, hash_bytes)
    except Exception as exc:                   # reported to the building process, which fails the build
        error = exc
    while (batch := inbox.get()) is not None:
        if error is None and db is not None:
            try:
                for table, rows in batch.items():
                    db.executemany(sql[table], rows)
            except Exception as exc:
                error = exc
    if db is not None:
        try:
            if error is None:
                store_bm25_tables(db)     # here, beside the building process's own work
                db.commit()
        except Exception as exc:
            error = exc
        finally:
            db.close()
    try:
        pipe.send(error)
    except Exception:                          # an error that does not pickle: its text
        pipe.send(RuntimeError(f"{type(error).__name__}: {error}"))


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
