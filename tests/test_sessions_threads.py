"""Threads sharing one agent: sessions played at once give what each gives alone, and the session
store's I/O never runs under the lock that orders the turns."""
from __future__ import annotations

import threading
import time
from pathlib import Path

from evaluator.data import load_catalog
from evaluator.local_evaluator import run_session
from starter.agent import Agent
from starter.conversation.sessions import SessionStore
from starter.session_store import SequenceConflict
from starter.session_store.sqlite import SQLiteJournal
from tests.test_sessions import _rows

THREADS = 6


class SlowJournal(SQLiteJournal):
    """The in-memory journal with a round trip's wait on every read and append (the wait lets other
    threads run, as a server's would), noting any call made while the caller holds the compute lock."""

    def __init__(self) -> None:
        super().__init__(":memory:")
        self.store: SessionStore | None = None
        self.under_lock = 0
        self.calls = 0
        self.on_read = None        # (session_id, start) -> None: something other threads do meanwhile

    def _io(self) -> None:
        self.calls += 1
        time.sleep(0.0005)
        assert self.store is not None
        # Another thread holds the lock only for one turn's work; this thread, if it held it, never
        # gets it back.
        if not self.store.compute.acquire(timeout=5.0):
            self.under_lock += 1
        else:
            self.store.compute.release()

    def read(self, session_id, start=0):
        self._io()
        if self.on_read is not None:
            self.on_read(session_id, start)
        return super().read(session_id, start)

    def append(self, session_id, generation, n, entry):
        self._io()
        return super().append(session_id, generation, n, entry)


def _slow_agent(catalog: Path, max_live: int) -> tuple[Agent, SlowJournal]:
    agent = Agent(str(catalog))
    journal = SlowJournal()
    agent.store = SessionStore(max_live, journal)
    journal.store = agent.store
    return agent, journal


def _played(record: dict) -> tuple:
    return (record["hit"], record["turn"], record["rank"],
            tuple((t["customer"], t["agent"], tuple(t["recommendations"]), t["ask_attribute"])
                  for t in record["transcript"]))


def _alone(catalog_path: Path, rows: list[dict], catalog: dict) -> list[tuple]:
    solo = Agent(str(catalog_path))
    return [_played(run_session(solo, row, k, catalog, transcripts=True)) for k, row in enumerate(rows)]


def _together(agent: Agent, rows: list[dict], catalog: dict) -> list[tuple]:
    """Every session played by one of THREADS threads, all threads at once on `agent`."""
    together: list = [None] * len(rows)
    failures: list[BaseException] = []

    def player(first: int) -> None:
        try:
            for k in range(first, len(rows), THREADS):
                together[k] = _played(run_session(agent, rows[k], k, catalog, transcripts=True))
        except BaseException as exc:   # reported below: an assertion in a thread would pass silently
            failures.append(exc)

    threads = [threading.Thread(target=player, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
    return together


def test_sessions_played_by_threads_at_once_equal_sessions_played_alone(small_catalog: Path) -> None:
    rows = _rows(36)
    catalog = load_catalog(small_catalog)
    agent, journal = _slow_agent(small_catalog, max_live=3)      # far fewer live states than threads
    assert _together(agent, rows, catalog) == _alone(small_catalog, rows, catalog)
    assert agent.store.evicted > 0 and agent.store.rebuilt > 0      # evictions raced with turns
    assert journal.calls > 0 and journal.under_lock == 0
    assert len(agent.sessions) <= 3


def test_threads_on_a_postgresql_store_equal_sessions_played_alone(small_catalog: Path, pg_url: str,
                                                                    monkeypatch) -> None:
    rows = _rows(24)
    catalog = load_catalog(small_catalog)
    alone = _alone(small_catalog, rows, catalog)
    monkeypatch.setenv("AGENT_SESSION_STORE", pg_url)
    monkeypatch.setenv("AGENT_MAX_SESSIONS", "2")
    agent = Agent(str(small_catalog))
    assert _together(agent, rows, catalog) == alone
    assert agent.store.journal.stats()[0] == sum(len(played[3]) for played in alone)


def test_one_session_sent_the_same_turn_by_threads_at_once_stores_it_once(small_catalog: Path) -> None:
    agent, journal = _slow_agent(small_catalog, max_live=2)
    agent.open_session("shared", {})
    agent.take_turn("shared", "black boots for my wife", 1, 10, expect=0)
    outcomes: list[str] = []

    def send(message: str) -> None:
        try:
            agent.take_turn("shared", message, 2, 10, expect=1)
            outcomes.append("stored")
        except SequenceConflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=send, args=(f"size {k + 5}",)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict"] * 3 + ["stored"]
    assert agent.stored_turns("shared") == 2
    stored, entry, _ = agent.last_turn("shared")
    assert stored == 2 and entry.message in {f"size {k + 5}" for k in range(4)}
    assert journal.under_lock == 0


def test_a_state_evicted_while_its_journal_is_read_keeps_its_last_answer(small_catalog: Path) -> None:
    agent, journal = _slow_agent(small_catalog, max_live=1)
    agent.open_session("a", {})
    first = agent.take_turn("a", "black boots for my wife", 1, 10, expect=0)
    # While "a" is read from its position, another session's turn evicts its live state.
    journal.on_read = lambda sid, start: agent.reset("b", {}) if sid == "a" and start > 0 else None
    last = agent.last_turn("a")
    assert last is not None
    stored, entry, answer = last
    assert stored == 1 and entry.message == "black boots for my wife" and answer == first
