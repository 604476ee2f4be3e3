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

Threads of one process may share a store: the journal's reads and writes
run outside the store's compute lock, so one thread's round trip to the
server overlaps another thread's turn.  Everything that touches live states
or the agent's shared memos (playing, replaying, the LRU) runs under that
lock, and the whole of one session's operation holds that session's lock
(one of a fixed set, chosen by a stable hash), so the turns of one session
never interleave.
"""
from __future__ import annotations

import json
import logging
import threading
import zlib
from collections import OrderedDict
from typing import Any, Callable, NamedTuple

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
SESSION_LOCKS = 64       # one session's operations in order; sessions that share a lock merely wait


class Synced(NamedTuple):
    """A session's state as brought up to date, what was stored of it then, and its last answer."""

    state: SessionState
    generation: int
    length: int                               # inputs stored (and applied to `state`)
    last: tuple[Entry, Any] | None            # the last input and its answer (None: no input yet)


class SessionStore:
    """Live states (LRU) backed by a journal of each session's inputs; safe to share between threads."""

    def __init__(self, max_live: int, journal: Journal | str = ":memory:") -> None:
        self.max_live = max(1, max_live)
        self.live: OrderedDict[str, SessionState] = OrderedDict()
        self.journal = journal if isinstance(journal, Journal) else SQLiteJournal(journal)
        self.position: dict[str, tuple[int, int]] = {}     # live session -> (generation, inputs applied)
        self.last: dict[str, tuple[Entry, Any]] = {}        # live session -> its last input and answer
        self.compute = threading.Lock()                     # live states, and every turn played or replayed
        self._session_locks = tuple(threading.RLock() for _ in range(SESSION_LOCKS))
        self.evicted = 0
        self.rebuilt = 0
        self.caught_up = 0       # inputs another worker stored, replayed on a live state
        self.conflicts = 0

    def __contains__(self, session_id: str) -> bool:
        return self.journal.read(session_id, _END) is not None

    def session_lock(self, session_id: str) -> Any:
        """The (re-entrant) lock that keeps one session's operations in order; every method below holds it."""
        return self._session_locks[zlib.crc32(session_id.encode("utf-8", "replace")) % SESSION_LOCKS]

    def reset(self, session_id: str, profile: dict) -> SessionState:
        """A fresh session (its journal restarts)."""
        with self.session_lock(session_id):
            return self._reset(session_id, profile)[0]

    def open_session(self, session_id: str, profile: dict) -> None:
        """A new session when the journal does not know it; else nothing changes (a worker that opens
        a session another has just opened and played leaves its inputs stored)."""
        with self.session_lock(session_id):
            self.journal.open_session(session_id, dict(profile))

    def sync(self, session_id: str, replay: Replay) -> SessionState | None:
        """The live state with every stored input applied (None: the journal does not know the session)."""
        with self.session_lock(session_id):
            synced = self._sync(session_id, replay)
            return None if synced is None else synced.state

    def stored(self, session_id: str, replay: Replay) -> int | None:
        """How many inputs the journal holds for the session (None: unknown), its live state synced."""
        with self.session_lock(session_id):
            synced = self._sync(session_id, replay)
            return None if synced is None else synced.length

    def play(self, session_id: str, live: Live, replay: Replay, expect: int | None = None) -> Any:
        """Play one input on the session's up-to-date state and store it; its answer.

        `expect`: the input's sequence number as the caller knows it; a journal that holds
        another count, or a concurrent store of the same number, is a SequenceConflict.
        StoreError leaves nothing stored and no live state played past the journal.
        """
        with self.session_lock(session_id):
            for _ in range(CONFLICT_RETRIES):
                synced = self._sync(session_id, replay)
                if synced is None:
                    if expect:                    # the caller knows inputs that the journal does not
                        raise SequenceConflict(f"session {session_id} is unknown here")
                    synced = self._reset(session_id, {})
                if expect is not None and expect != synced.length:
                    raise SequenceConflict(f"session {session_id} has {synced.length} stored inputs, not {expect}")
                played = self._play_once(session_id, synced, live, expect)
                if played is not None:
                    return played[0]
            raise SequenceConflict(f"session {session_id} kept changing; try again")

    def last_answer(self, session_id: str, replay: Replay) -> tuple[int, Entry, Any] | None:
        """(inputs stored, the last input, its answer) of a session, or None (unknown, or no input yet)."""
        with self.session_lock(session_id):
            synced = self._sync(session_id, replay)
            if synced is None or synced.last is None:
                return None
            return synced.length, synced.last[0], synced.last[1]

    def close(self, session_id: str) -> None:
        """Forget a session entirely (live state and journal)."""
        with self.session_lock(session_id):
            with self.compute:
                self._drop(session_id)
            self.journal.forget(session_id)

    # ---- internals (the caller holds the session's lock) --------------------------------
    def _reset(self, session_id: str, profile: dict) -> Synced:
        generation = self.journal.reset(session_id, dict(profile))
        state = SessionState(session_id=session_id, profile=dict(profile))
        with self.compute:
            self.last.pop(session_id, None)
            self._keep(session_id, state, (generation, 0))
        return Synced(state, generation, 0, None)

    def _sync(self, session_id: str, replay: Replay) -> Synced | None:
        """The session's live state brought up to date, and its position (None: unknown session)."""
        while True:
            with self.compute:
                state = self.live.get(session_id)
                generation, applied = self.position.get(session_id, (0, 0)) if state is not None else (0, 0)
            snap = self.journal.read(session_id, applied)                  # outside the compute lock
            if snap is not None and state is not None and snap.generation != generation and applied:
                snap = self.journal.read(session_id, 0)          # reset elsewhere: start over
            with self.compute:
                if snap is None:
                    self._drop(session_id)
                    return None
                if state is not None and self.live.get(session_id) is not state:
                    continue      # evicted by another session's turn meanwhile, its last answer too: from 0
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
                return Synced(state, snap.generation, snap.length, self.last.get(session_id))

    def _play_once(self, session_id: str, synced: Synced, live: Live, expect: int | None) -> tuple[Any] | None:
        """The live turn played on the synced state and stored as its next input: (answer,), or None
        when another worker stored that input first (the state is dropped; the caller reads again)."""
        state, generation, n = synced.state, synced.generation, synced.length
        try:
            with self.compute:
                answer, stored = live(state)
            self.journal.append(session_id, generation, n, stored)      # outside the compute lock
        except SequenceConflict:
            with self.compute:
                self._drop(session_id)        # played past the journal: rebuilt by the next read
                self.conflicts += 1
            if expect is not None:
                raise
            return None
        except BaseException:
            with self.compute:
                self._drop(session_id)
            raise
        with self.compute:
            if self.live.get(session_id) is state:    # else evicted meanwhile: rebuilt when next used
                self.position[session_id] = (generation, n + 1)
                self.last[session_id] = (stored, answer)
        return (answer,)

    # ---- internals (the caller holds the compute lock) ----------------------------------
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
