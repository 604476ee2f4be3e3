"""The SQLite journal: in memory for one process, or one file shared by the processes of one machine.

A file is opened in WAL mode (readers never wait for the writer) with a busy
timeout (a writer waits for another instead of failing at once); every write
is one `BEGIN IMMEDIATE` transaction, so two processes never interleave the
check of a session's generation with another's insert.
"""
from __future__ import annotations

import sqlite3
import threading
import time

from starter.session_store import (READ_SQL, Entry, Journal, SequenceConflict, Snapshot, StoreUnavailable,
                                   profile_text, snapshot_of)

BUSY_TIMEOUT_MS = 10_000      # a writer waits this long for another process's write to end
SCHEMA = ("CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, profile TEXT NOT NULL, "
          "generation INTEGER NOT NULL DEFAULT 1)",
          "CREATE TABLE IF NOT EXISTS inputs (id TEXT NOT NULL, n INTEGER NOT NULL, message TEXT NOT NULL, "
          "turn TEXT NOT NULL, top_k TEXT NOT NULL, tape TEXT, PRIMARY KEY (id, n))")


def _to_wal(db: sqlite3.Connection) -> None:
    """Put the file in WAL mode.  Two processes that open a new file at once both ask for the switch, and
    SQLite answers one of them "database is locked" at once, without its busy handler: the switch is tried
    again, a little later each time, for as long as a write would wait."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.005
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                raise
            time.sleep(pause)
            pause = min(2 * pause, 0.2)


class SQLiteJournal(Journal):
    """Sessions in one SQLite database (`:memory:` or a file path)."""

    def __init__(self, path: str = ":memory:") -> None:
        self.url = "memory" if path == ":memory:" else f"sqlite:///{path}"
        self._lock = threading.Lock()
        try:
            self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None,
                                      timeout=BUSY_TIMEOUT_MS / 1000)
            if path != ":memory:":
                _to_wal(self.db)
                self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            with self._write():
                for statement in SCHEMA:
                    self.db.execute(statement)
                self._add_new_columns()
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"cannot open the session journal {path}: {exc}") from exc

    def _add_new_columns(self) -> None:
        """A journal file written before generations and tapes existed gets their columns."""
        have = {row[1] for row in self.db.execute("PRAGMA table_info(sessions)")}
        if "generation" not in have:
            self.db.execute("ALTER TABLE sessions ADD COLUMN generation INTEGER NOT NULL DEFAULT 1")
        if "tape" not in {row[1] for row in self.db.execute("PRAGMA table_info(inputs)")}:
            self.db.execute("ALTER TABLE inputs ADD COLUMN tape TEXT")

    def _write(self) -> _Transaction:
        return _Transaction(self.db)

    def reset(self, session_id: str, profile: dict) -> int:
        with self._lock, _errors(), self._write():
            self.db.execute("DELETE FROM inputs WHERE id = ?", (session_id,))
            row = self.db.execute(
                "INSERT INTO sessions (id, profile, generation) VALUES (?, ?, 1) ON CONFLICT (id) DO UPDATE "
                "SET profile = excluded.profile, generation = sessions.generation + 1 RETURNING generation",
                (session_id, profile_text(profile))).fetchone()
        return int(row[0])

    def open_session(self, session_id: str, profile: dict) -> int:
        with self._lock, _errors(), self._write():
            self.db.execute("INSERT INTO sessions (id, profile, generation) VALUES (?, ?, 1) "
                            "ON CONFLICT (id) DO NOTHING", (session_id, profile_text(profile)))
            row = self.db.execute("SELECT generation FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return int(row[0])

    def read(self, session_id: str, start: int = 0) -> Snapshot | None:
        with self._lock, _errors():
            rows = self.db.execute(READ_SQL.format(p="?"), (start, session_id)).fetchall()
        return snapshot_of(rows, start)

    def append(self, session_id: str, generation: int, n: int, entry: Entry) -> None:
        with self._lock, _errors(), self._write():
            row = self.db.execute("SELECT generation FROM sessions WHERE id = ?", (session_id,)).fetchone()
            if row is None or int(row[0]) != generation:
                raise SequenceConflict(f"session {session_id} was reset or forgotten meanwhile")
            try:
                self.db.execute("INSERT INTO inputs (id, n, message, turn, top_k, tape) VALUES (?, ?, ?, ?, ?, ?)",
                                (session_id, n, *entry.columns()))
            except sqlite3.IntegrityError:
                raise SequenceConflict(f"input {n} of session {session_id} is already stored") from None

    def forget(self, session_id: str) -> None:
        with self._lock, _errors(), self._write():
            self.db.execute("DELETE FROM inputs WHERE id = ?", (session_id,))
            self.db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def stats(self) -> tuple[int, int]:
        with self._lock, _errors():
            row = self.db.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(message)), 0) FROM inputs").fetchone()
        return int(row[0]), int(row[1])

    def close(self) -> None:
        with self._lock:
            self.db.close()


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception (nothing half written)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if kind is None:
            self.db.execute("COMMIT")
        elif self.db.in_transaction:
            self.db.execute("ROLLBACK")


class _errors:
    """SQLite's own errors (locked past the timeout, disk I/O) as StoreUnavailable."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if isinstance(exc, sqlite3.Error):
            raise StoreUnavailable(f"session journal: {exc}") from exc
