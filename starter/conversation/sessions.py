"""Sessions: a bounded set of live states, and a journal from which an evicted one is rebuilt.

A session's state holds a track per candidate (thousands on the free-text
path), so only `max_live` states are kept in memory, least recently used
evicted first.  What a session received -- its profile and every
(message, turn, top_k) -- is written to a small SQLite journal (in memory,
or a file with `AGENT_SESSION_DB`), so an evicted session is never lost: on its
next message its state is rebuilt by replaying those inputs, which gives the
same state (the agent is deterministic offline).
"""
from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections import OrderedDict
from typing import Any, Callable

from starter.conversation.state import SessionState

log = logging.getLogger(__name__)

Replay = Callable[[SessionState, Any, Any, Any], Any]


class SessionStore:
    """Live states (LRU) backed by a journal of each session's inputs."""

    def __init__(self, max_live: int, journal_path: str = ":memory:") -> None:
        self.max_live = max(1, max_live)
        self.live: OrderedDict[str, SessionState] = OrderedDict()
        self._lock = threading.Lock()
        self.db = sqlite3.connect(journal_path, check_same_thread=False)
        self.db.execute("CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, profile TEXT NOT NULL)")
        self.db.execute("CREATE TABLE IF NOT EXISTS inputs (id TEXT NOT NULL, n INTEGER NOT NULL, "
                        "message TEXT NOT NULL, turn TEXT NOT NULL, top_k TEXT NOT NULL, PRIMARY KEY (id, n))")
        self.evicted = 0
        self.rebuilt = 0

    def __contains__(self, session_id: str) -> bool:
        return session_id in self.live or self._profile(session_id) is not None

    def reset(self, session_id: str, profile: dict) -> SessionState:
        """A fresh session (its journal restarts)."""
        with self._lock:
            self.db.execute("DELETE FROM inputs WHERE id = ?", (session_id,))
            self.db.execute("INSERT OR REPLACE INTO sessions (id, profile) VALUES (?, ?)",
                            (session_id, json.dumps(profile, sort_keys=True, default=str)))
            self.db.commit()
        state = SessionState(session_id=session_id, profile=dict(profile))
        self._keep(session_id, state)
        return state

    def state_for(self, session_id: str, replay: Replay) -> SessionState:
        """The live state of a session: kept, rebuilt from its journal, or new (unknown id)."""
        state = self.live.get(session_id)
        if state is not None:
            self.live.move_to_end(session_id)
            return state
        profile = self._profile(session_id)
        if profile is None:
            return self.reset(session_id, {})
        state = SessionState(session_id=session_id, profile=profile)
        for message, turn, top_k in self._inputs(session_id):
            replay(state, message, turn, top_k)
        self.rebuilt += 1
        log.info("session %s rebuilt from its journal (%d messages)", session_id, state.turn)
        self._keep(session_id, state)
        return state

    def record(self, session_id: str, message: Any, turn: Any, top_k: Any) -> None:
        """Journal one input of a session (as received, so a replay sees exactly the same)."""
        with self._lock:
            n = self.db.execute("SELECT COUNT(*) FROM inputs WHERE id = ?", (session_id,)).fetchone()[0]
            self.db.execute("INSERT INTO inputs (id, n, message, turn, top_k) VALUES (?, ?, ?, ?, ?)",
                            (session_id, n, json.dumps(_plain(message)), json.dumps(_plain(turn)),
                             json.dumps(_plain(top_k))))
            self.db.commit()

    def close(self, session_id: str) -> None:
        """Forget a session entirely (live state and journal)."""
        self.live.pop(session_id, None)
        with self._lock:
            self.db.execute("DELETE FROM inputs WHERE id = ?", (session_id,))
            self.db.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            self.db.commit()

    # ---- internals ------------------------------------------------------------------
    def _keep(self, session_id: str, state: SessionState) -> None:
        self.live.pop(session_id, None)
        self.live[session_id] = state
        while len(self.live) > self.max_live:
            old, _ = self.live.popitem(last=False)
            self.evicted += 1
            log.info("session %s evicted from memory (%d live); kept in the journal", old, self.max_live)

    def _profile(self, session_id: str) -> dict | None:
        with self._lock:
            row = self.db.execute("SELECT profile FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return json.loads(row[0]) if row else None

    def _inputs(self, session_id: str) -> list[tuple[Any, Any, Any]]:
        with self._lock:
            rows = self.db.execute("SELECT message, turn, top_k FROM inputs WHERE id = ? ORDER BY n",
                                   (session_id,)).fetchall()
        return [(json.loads(m), json.loads(t), json.loads(k)) for m, t, k in rows]


def _plain(value: Any) -> Any:
    """An input as JSON can hold it: str, numbers, None, lists and dicts as they are; anything else
    as the text the agent would read (`str`), bytes decoded."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, (list, dict)):
        try:
            json.dumps(value)
            return value
        except (TypeError, ValueError):
            return str(value)
    return str(value)
