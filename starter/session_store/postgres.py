"""The PostgreSQL journal: sessions shared by workers on any number of machines.

A few connections per process, one for each thread that is in a call at
once (a thread's round trip then never waits behind another's), each opened
on first use (an agent starts while the server is down); any connection error
drops them all, so a restarted server is reached again by the next call.  Every write is one transaction; an append
share-locks the session's row (a reset's update waits for it), so an input
is never stored under a generation that a reset has ended.
"""
from __future__ import annotations

import threading
from typing import Any

from starter.session_store import (READ_SQL, Entry, Journal, SequenceConflict, Snapshot, StoreUnavailable,
                                   profile_text, snapshot_of)

CONNECT_TIMEOUT = 3           # seconds to reach the server before the call fails (and may be retried)
STATEMENT_TIMEOUT_MS = 10_000
SCHEMA_LOCK = 724_2401        # advisory lock: workers starting together create the tables once
SCHEMA = ("CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, profile TEXT NOT NULL, "
          "generation BIGINT NOT NULL DEFAULT 1)",
          "CREATE TABLE IF NOT EXISTS inputs (id TEXT NOT NULL, n INTEGER NOT NULL, message TEXT NOT NULL, "
          "turn TEXT NOT NULL, top_k TEXT NOT NULL, tape TEXT, PRIMARY KEY (id, n))")

# One statement, so one round trip: the input is inserted only while the session's row holds the
# generation the turn was played on, and that row is share-locked meanwhile, so a concurrent reset
# (an update of the row) waits for it or makes it insert nothing.
APPEND_SQL = ("INSERT INTO inputs (id, n, message, turn, top_k, tape) SELECT %s, %s, %s, %s, %s, %s "
              "WHERE EXISTS (SELECT 1 FROM sessions WHERE id = %s AND generation = %s FOR SHARE)")


class PostgresJournal(Journal):
    """Sessions in a PostgreSQL database named by a libpq URL."""

    def __init__(self, url: str) -> None:
        try:
            import psycopg   # imported here: only this store needs the driver
        except ImportError:
            raise ValueError("a postgresql:// session store needs psycopg 3: pip install -e '.[postgres]'") from None
        self._pg = psycopg
        self.url = url
        self._lock = threading.Lock()        # the idle connections
        self._idle: list[Any] = []
        self._closed = False

    # ---- connections --------------------------------------------------------------------
    def _take(self) -> Any:
        """An idle connection, or a new one (made outside the lock: reaching a server takes time)."""
        with self._lock:
            while self._idle:
                conn = self._idle.pop()
                if not conn.closed:
                    return conn
        conn = self._pg.connect(self.url, autocommit=True, connect_timeout=CONNECT_TIMEOUT,
                                options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}")
        try:
            with conn.transaction():      # on every new connection: the server may be a new one
                self._create_schema(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _give(self, conn: Any) -> None:
        with self._lock:
            if not self._closed and not conn.closed:
                self._idle.append(conn)
                return
        conn.close()

    def _run(self, work: Any, single: bool = False) -> Any:
        """`work(conn)` in one transaction (`single`: one statement, its own transaction: one round trip
        instead of three); a lost server or failed statement -> StoreUnavailable."""
        conn = None
        try:
            conn = self._take()
            if single:
                result = work(conn)
            else:
                with conn.transaction():
                    result = work(conn)
        except SequenceConflict:
            self._give(conn)
            raise
        except self._pg.errors.UniqueViolation as exc:
            self._give(conn)
            raise SequenceConflict(str(exc).splitlines()[0]) from None
        except self._pg.Error as exc:
            self._drop(conn)
            raise StoreUnavailable(f"session store: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") \
                from exc
        except BaseException:
            self._drop(conn)
            raise
        self._give(conn)
        return result

    def _drop(self, conn: Any) -> None:
        """Close a connection that failed, and the idle ones with it: the server was likely restarted,
        and each would fail one more turn."""
        with self._lock:
            stale, self._idle = self._idle, []
        for c in [conn, *stale] if conn is not None else stale:
            try:
                c.close()
            except self._pg.Error:
                pass

    @staticmethod
    def _create_schema(conn: Any) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        for statement in SCHEMA:
            conn.execute(statement)

    # ---- journal ------------------------------------------------------------------------
    def reset(self, session_id: str, profile: dict) -> int:
        def work(conn: Any) -> int:
            row = conn.execute(
                "INSERT INTO sessions (id, profile, generation) VALUES (%s, %s, 1) ON CONFLICT (id) DO UPDATE "
                "SET profile = EXCLUDED.profile, generation = sessions.generation + 1 RETURNING generation",
                (session_id, profile_text(profile))).fetchone()
            conn.execute("DELETE FROM inputs WHERE id = %s", (session_id,))
            return int(row[0])
        return self._run(work)

    def open_session(self, session_id: str, profile: dict) -> int:
        def work(conn: Any) -> int:
            conn.execute("INSERT INTO sessions (id, profile, generation) VALUES (%s, %s, 1) "
                         "ON CONFLICT (id) DO NOTHING", (session_id, profile_text(profile)))
            return int(conn.execute("SELECT generation FROM sessions WHERE id = %s", (session_id,)).fetchone()[0])
        return self._run(work)

    def read(self, session_id: str, start: int = 0) -> Snapshot | None:
        def work(conn: Any) -> list[tuple]:
            return conn.execute(READ_SQL.format(p="%s"), (start, session_id)).fetchall()
        return snapshot_of(self._run(work, single=True), start)

    def append(self, session_id: str, generation: int, n: int, entry: Entry) -> None:
        def work(conn: Any) -> None:
            cur = conn.execute(APPEND_SQL, (session_id, n, *entry.columns(), session_id, generation))
            if cur.rowcount != 1:
                raise SequenceConflict(f"session {session_id} was reset or forgotten meanwhile")
        self._run(work, single=True)

    def forget(self, session_id: str) -> None:
        def work(conn: Any) -> None:
            conn.execute("DELETE FROM inputs WHERE id = %s", (session_id,))
            conn.execute("DELETE FROM sessions WHERE id = %s", (session_id,))
        self._run(work)

    def stats(self) -> tuple[int, int]:
        def work(conn: Any) -> tuple:
            return conn.execute("SELECT COUNT(*), COALESCE(SUM(LENGTH(message)), 0) FROM inputs").fetchone()
        row = self._run(work)
        return int(row[0]), int(row[1])

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._drop(None)
