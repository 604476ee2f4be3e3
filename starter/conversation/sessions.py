"""Sessions: a bounded set of live states, and a journal from which any state is rebuilt.

A session's state holds a track per candidate (thousands on the free-text
path), so only `max_live` states are kept in memory, least recently used
evicted first.  What a session received -- its profile and every
(message, turn, top_k), with the model's replies when the model ran -- is
written to a journal (`starter.session_store`: SQLite in memory by default,
a SQLite file or a PostgreSQL server shared by several workers), so an
evicted session is never lost: on its next message its state is rebuilt by
replaying those inputs, which gives the same state (the agent is
deterministic offline, and a replayed turn reads the model's recorded reply).

A live state is a cache: before it is used, the journal is read from the
position it has reached, and inputs another worker stored meanwhile are
replayed on it (a reset elsewhere rebuilds it).  A turn is played first and
stored after, as input `n` of the generation it was played on; if another
worker stored input `n` first, the played state is dropped and the turn is
played again on the re-read journal (or, when the caller pinned `n`, the
conflict is its answer).
"""
from __future__ import annotations

import json
import logging
from collections import OrderedDict
from typing import Any, Callable

from starter.conversation.state import SessionState
from starter.session_store import Entry, Journal, SequenceConflict
from starter.session_store.sqlite import SQLiteJournal

log = logging.getLogger(__name__)

# A stored input replayed on a state: (state, input) -> the answer.
Replay = Callable[[SessionState, Entry], Any]
# The live turn on a state: state -> (the answer, the input as it is to be stored).
Live = Callable[[SessionState], tuple[Any, Entry]]
CONFLICT_RETRIES = 5     # turns of one session arriving together at several workers: each is played again
_END = 2**31 - 1         # a read from here gives a session's generation and profile, no inputs


class SessionStore:
    """Live states (LRU) backed by a journal of each session's inputs."""

    def __init__(self, max_live: int, journal: Journal | str = ":memory:") -> None:
        self.max_live = max(1, max_live)
        self.live: OrderedDict[str, SessionState] = OrderedDict()
        self.journal = journal if isinstance(journal, Journal) else SQLiteJournal(journal)
        self.position: dict[str, tuple[int, int]] = {}     # live session -> (generation, inputs applied)
        self.last: dict[str, tuple[Entry, Any]] = {}        # live session -> its last input and answer
        self.evicted = 0
        self.rebuilt = 0
        self.caught_up = 0       # inputs another worker stored, replayed on a live state
        self.conflicts = 0

    def __contains__(self, session_id: str) -> bool:
        return self.journal.read(session_id, _END) is not None

    def reset(self, session_id: str, profile: dict) -> SessionState:
        """A fresh session (its journal restarts)."""
        generation = self.journal.reset(session_id, dict(profile))
        state = SessionState(session_id=session_id, profile=dict(profile))
        self.last.pop(session_id, None)
        self._keep(session_id, state, (generation, 0))
        return state

    def open_session(self, session_id: str, profile: dict) -> None:
        """A new session when the journal does not know it; else nothing changes (a worker that opens
        a session another has just opened and played leaves its inputs stored)."""
        self.journal.open_session(session_id, dict(profile))

    def state_for(self, session_id: str, replay: Replay) -> SessionState:
        """The session's state as stored: the live one brought up to date, rebuilt, or new (unknown id)."""
        state = self.sync(session_id, replay)
        return state if state is not None else self.reset(session_id, {})

    def sync(self, session_id: str, replay: Replay) -> SessionState | None:
        """The live state with every stored input applied (None: the journal does not know the session)."""
        state = self.live.get(session_id)
        generation, applied = self.position.get(session_id, (0, 0)) if state is not None else (0, 0)
        snap = self.journal.read(session_id, applied)
        if snap is not None and state is not None and snap.generation != generation and applied:
            snap = self.journal.read(session_id, 0)          # reset elsewhere: start over
        if snap is None:
            self._drop(session_id)
            return None
        if state is None or snap.generation != generation:
            state = SessionState(session_id=session_id, profile=dict(snap.profile))
            self.last.pop(session_id, None)
            if snap.entries:
                self.rebuilt += 1
        elif snap.entries:
            self.caught_up += len(snap.entries)
        for entry in snap.entries:
            self.last[session_id] = (entry, replay(state, entry))
        if snap.entries and snap.start == 0:
            log.info("session %s rebuilt from its journal (%d messages)", session_id, state.turn)
        self._keep(session_id, state, (snap.generation, snap.length))
        return state

    def play(self, session_id: str, live: Live, replay: Replay, expect: int | None = None) -> Any:
        """Play one input on the session's up-to-date state and store it; its answer.

        `expect`: the input's sequence number as the caller knows it; a journal that holds
        another count, or a concurrent store of the same number, is a SequenceConflict.
        StoreError leaves nothing stored and no live state played past the journal.
        """
        for _ in range(CONFLICT_RETRIES):
            state = self.sync(session_id, replay)
            if state is None:
                if expect:                    # the caller knows inputs that the journal does not
                    raise SequenceConflict(f"session {session_id} is unknown here")
                state = self.reset(session_id, {})
            generation, n = self.position[session_id]
            if expect is not None and expect != n:
                raise SequenceConflict(f"session {session_id} has {n} stored inputs, not {expect}")
            try:
                answer, stored = live(state)
                self.journal.append(session_id, generation, n, stored)
            except SequenceConflict:
                self._drop(session_id)        # played past the journal: rebuilt by the next read
                self.conflicts += 1
                if expect is not None:
                    raise
                continue
            except BaseException:
                self._drop(session_id)
                raise
            self.position[session_id] = (generation, n + 1)
            self.last[session_id] = (stored, answer)
            return answer
        raise SequenceConflict(f"session {session_id} kept changing; try again")

    def last_answer(self, session_id: str, replay: Replay) -> tuple[int, Entry, Any] | None:
        """(inputs stored, the last input, its answer) of a session, or None (unknown, or no input yet)."""
        state = self.sync(session_id, replay)
        if state is None or session_id not in self.last:
            return None
        entry, answer = self.last[session_id]
        return self.position[session_id][1], entry, answer

    def close(self, session_id: str) -> None:
        """Forget a session entirely (live state and journal)."""
        self._drop(session_id)
        self.journal.forget(session_id)

    # ---- internals ------------------------------------------------------------------
    def _keep(self, session_id: str, state: SessionState, position: tuple[int, int]) -> None:
        self.live.pop(session_id, None)
        self.live[session_id] = state
        self.position[session_id] = position
        while len(self.live) > self.max_live:
            old, _ = self.live.popitem(last=False)
            self.position.pop(old, None)
            self.last.pop(old, None)
            self.evicted += 1
            log.info("session %s evicted from memory (%d live); kept in the journal", old, self.max_live)

    def _drop(self, session_id: str) -> None:
        self.live.pop(session_id, None)
        self.position.pop(session_id, None)
        self.last.pop(session_id, None)


def plain_entry(message: Any, turn: Any, top_k: Any) -> Entry:
    """An input as the journal holds it (and as a replay reads it)."""
    return Entry(_plain(message), _plain(turn), _plain(top_k))


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
