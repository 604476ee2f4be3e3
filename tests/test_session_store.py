"""Sessions in a shared store: several agent processes, one memory, against real servers.

Two agent processes that serve one interleaved set of sessions, each
session's turns alternating between them, give the transcripts of the
sessions played alone; two workers that answer the same turn at once cannot
both store it; a store that is down gives a clear error, stores nothing, and
the same turn succeeds once it is back.
"""
from __future__ import annotations

import multiprocessing
import os
from pathlib import Path
from typing import Any

import pytest

import contest as P
from evaluator.data import load_catalog
from evaluator.local_evaluator import run_session
from starter.agent import Agent
from starter.session_store import Entry, SequenceConflict, StoreUnavailable, open_store
from tests.test_sessions import _interleaved, _rows

TEES = "Tees & Blouses T-Shirts"


def _serve(conn: Any, catalog: str, env: dict[str, str]) -> None:
    """An agent process: answers (method, *args) requests from a pipe until it gets None."""
    os.environ.update(env)
    agent = Agent(catalog, index_cache=False)
    while (request := conn.recv()) is not None:
        method, *args = request
        conn.send(getattr(agent, method)(*args))


class TwoProcesses:
    """The agent contract over two worker processes; each session's calls alternate between them."""

    def __init__(self, catalog: Path, env: dict[str, str]) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.pipes, self.procs, self.calls = [], [], {}
        for _ in range(2):
            mine, theirs = ctx.Pipe()
            proc = ctx.Process(target=_serve, args=(theirs, str(catalog), env), daemon=True)
            proc.start()
            self.pipes.append(mine)
            self.procs.append(proc)

    def _call(self, session_id: str, *request: Any) -> Any:
        k = self.calls[session_id] = self.calls.get(session_id, -1) + 1
        pipe = self.pipes[k % 2]
        pipe.send(request)
        return pipe.recv()

    def reset(self, session_id: str, profile: dict) -> None:
        self._call(session_id, "reset", session_id, profile)

    def respond(self, session_id: str, message: str, turn: int, top_k: int) -> dict:
        return self._call(session_id, "respond", session_id, message, turn, top_k)

    def close(self) -> None:
        for pipe, proc in zip(self.pipes, self.procs):
            pipe.send(None)
            proc.join(30)


def _alone(catalog_path: Path, rows: list[dict], catalog: dict) -> list[dict]:
    solo = Agent(str(catalog_path))
    out = []
    for k, row in enumerate(rows):
        rec = run_session(solo, row, k, catalog, transcripts=True)
        out.append({"result": (rec["hit"], rec["turn"], rec["rank"]),
                    "transcript": [{key: t[key] for key in ("customer", "agent", "recommendations", "ask_attribute")}
                                   for t in rec["transcript"]]})
    return out


@pytest.mark.parametrize("store", ["postgres", "sqlite"])
def test_two_processes_alternating_give_the_sessions_played_alone(small_catalog: Path, tmp_path: Path,
                                                                   store: str, request) -> None:
    url = request.getfixturevalue("pg_url") if store == "postgres" else f"sqlite:///{tmp_path / 'journal.db'}"
    rows = _rows(24)
    catalog = load_catalog(small_catalog)
    alone = _alone(small_catalog, rows, catalog)
    pair = TwoProcesses(small_catalog, {"AGENT_SESSION_STORE": url, "AGENT_MAX_SESSIONS": "5"})
    try:
        together = _interleaved(pair, rows, catalog)    # type: ignore[arg-type]
    finally:
        pair.close()
    assert together == alone
    assert open_store(url).stats()[0] == sum(len(s["transcript"]) for s in alone)


def _race(agent: Agent, other: Any) -> None:
    """The next append of `agent` happens just after `other()` (another worker) stores its own turn."""
    journal = agent.store.journal
    original = journal.append

    def append(*args: Any) -> None:
        journal.append = original            # type: ignore[method-assign]
        other()
        original(*args)
    journal.append = append                  # type: ignore[method-assign]


def test_a_concurrent_append_of_the_same_turn_is_refused_and_recovered(small_catalog: Path, pg_url: str,
                                                                      monkeypatch) -> None:
    monkeypatch.setenv("AGENT_SESSION_STORE", pg_url)
    first, second = Agent(str(small_catalog)), Agent(str(small_catalog))
    opening = f"I'm looking for {TEES}, but I'm still exploring."
    first.reset("s", {})
    first.respond("s", opening, 1, 10)
    assert second.stored_turns("s") == 1                 # both hold the session live at input 1
    _race(second, lambda: first.respond("s", "cotton", 2, 10))
    with pytest.raises(SequenceConflict):                # pinned to input 1: refused, nothing of it stored
        second.take_turn("s", "black", 2, 10, expect=1)
    assert second.store.conflicts == 1 and "s" not in second.sessions
    with pytest.raises(SequenceConflict):                # a re-read shows 2 inputs: still refused
        second.take_turn("s", "black", 2, 10, expect=1)
    _race(second, lambda: first.respond("s", "hand wash", 3, 10))
    got = second.respond("s", "black", 3, 10)            # unpinned: re-read, replayed, played as input 3
    assert second.store.conflicts == 2
    stored = [(e.message, e.turn) for e in open_store(pg_url).read("s").entries]
    assert stored == [(opening, 1), ("cotton", 2), ("hand wash", 3), ("black", 3)]
    monkeypatch.delenv("AGENT_SESSION_STORE")
    alone = Agent(str(small_catalog))
    alone.reset("s", {})
    assert [alone.respond("s", m, t, 10) for m, t in stored][-1] == got


def test_the_unique_sequence_refuses_a_second_append_at_the_journal(pg_url: str) -> None:
    a, b = open_store(pg_url), open_store(pg_url)
    generation = a.reset("s", {"p": 1})
    a.append("s", generation, 0, Entry("hello", 1, 10))
    with pytest.raises(SequenceConflict):
        b.append("s", generation, 0, Entry("other", 1, 10))
    b.reset("s", {})                                     # a reset ends the generation a still holds
    with pytest.raises(SequenceConflict):
        a.append("s", generation, 1, Entry("late", 2, 10))
    assert b.read("s").entries == () and b.read("s").generation == generation + 1


@pytest.mark.parametrize("store", ["postgres", "sqlite"])
def test_opening_a_known_session_keeps_it_as_stored(tmp_path: Path, store: str, request) -> None:
    url = request.getfixturevalue("pg_url") if store == "postgres" else f"sqlite:///{tmp_path / 'journal.db'}"
    a, b = open_store(url), open_store(url)
    assert a.open_session("s", {"p": 1}) == 1                       # unknown: a new session
    a.append("s", 1, 0, Entry("hello", 1, 10))
    assert b.open_session("s", {"p": 2}) == 1                       # known: untouched
    snap = b.read("s")
    assert snap.generation == 1 and snap.profile == {"p": 1} and [e.message for e in snap.entries] == ["hello"]
    generation = a.reset("s", {})
    assert b.open_session("s", {}) == generation == 2 and b.read("s").entries == ()


@pytest.mark.parametrize("store", ["postgres", "sqlite"])
def test_a_first_turn_sent_to_two_workers_at_once_loses_nothing(small_catalog: Path, tmp_path: Path, store: str,
                                                                 request, monkeypatch) -> None:
    """Worker B reads "unknown session" for a first turn just before worker A opens the session and
    stores that turn (and, later, the next): B answers A's stored turn, or refuses a stale first turn,
    and never drops what A stored."""
    import threading

    from demo.session import ProductLookup
    from demo.web_chat import TurnConflict, stored_chat_turn
    url = request.getfixturevalue("pg_url") if store == "postgres" else f"sqlite:///{tmp_path / 'journal.db'}"
    monkeypatch.setenv("AGENT_SESSION_STORE", url)
    a, b = Agent(str(small_catalog)), Agent(str(small_catalog))
    lookup, lock_a, lock_b = ProductLookup(small_catalog), threading.Lock(), threading.Lock()   # two workers
    opening = f"I'm looking for {TEES}, but I'm still exploring."

    def late_read(first_turns: list[tuple[str, int]]) -> None:
        """B's next read of the session sees it unknown, as before A played `first_turns`."""
        original = b.stored_turns

        def stored_turns(session_id: str) -> int | None:
            b.stored_turns = original                          # type: ignore[method-assign]
            for message, turn in first_turns:
                stored_chat_turn(a, lookup, lock_a, session_id, message, turn)
            return None
        b.stored_turns = stored_turns                          # type: ignore[method-assign]

    late_read([(opening, 1)])
    got = stored_chat_turn(b, lookup, lock_b, "s", opening, 1)
    assert got.agent == stored_chat_turn(a, lookup, lock_a, "s", opening, 1).agent
    assert [(e.message, e.turn) for e in open_store(url).read("s").entries] == [(opening, 1)]
    late_read([(opening, 1), ("cotton", 2)])
    with pytest.raises(TurnConflict, match="at turn 3, not 1"):    # a stale first turn: refused, nothing dropped
        stored_chat_turn(b, lookup, lock_b, "t", opening, 1)
    snap = open_store(url).read("t")
    assert snap.generation == 1 and [(e.message, e.turn) for e in snap.entries] == [(opening, 1), ("cotton", 2)]
    lookup.close()


def test_a_store_that_is_down_is_a_clear_error_and_the_turn_can_be_retried(small_catalog: Path, pg_cluster,
                                                                          pg_url: str, monkeypatch) -> None:
    monkeypatch.setenv("AGENT_SESSION_STORE", pg_url)
    agent = Agent(str(small_catalog))
    opening = f"I'm looking for {TEES}, but I'm still exploring."
    agent.reset("s", {})
    agent.respond("s", opening, 1, 10)
    pg_cluster.stop()
    try:
        with pytest.raises(StoreUnavailable, match="session store"):
            agent.take_turn("s", "cotton", 2, 10, expect=1)
        safe = agent.respond("s", "cotton", 2, 10)       # the contract never raises: a safe answer
        assert safe["recommendations"] == [] and P.valid_response(safe)
        assert agent.sessions["s"].turn == 1              # the live state is still the journal's
    finally:
        pg_cluster.start()
    _race(agent, pg_cluster.stop)                         # the server goes down after the turn is played
    try:
        with pytest.raises(StoreUnavailable):
            agent.take_turn("s", "cotton", 2, 10, expect=1)
        assert "s" not in agent.sessions                  # the state played past the journal is dropped
    finally:
        pg_cluster.start()
    assert open_store(pg_url).stats()[0] == 1            # nothing half written
    got = agent.take_turn("s", "cotton", 2, 10, expect=1)
    monkeypatch.delenv("AGENT_SESSION_STORE")
    alone = Agent(str(small_catalog))
    alone.reset("s", {})
    alone.respond("s", opening, 1, 10)
    assert got == alone.respond("s", "cotton", 2, 10)


def test_an_unreachable_store_fails_fast_and_a_bad_url_is_refused(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    from scripts.pg_cluster import free_port
    journal = open_store(f"postgresql://postgres@127.0.0.1:{free_port()}/none")
    with pytest.raises(StoreUnavailable):
        journal.read("s")
    with pytest.raises(ValueError, match="AGENT_SESSION_STORE"):
        open_store("redis://localhost")
    assert open_store(f"sqlite:///{tmp_path / 'j.db'}").url.endswith("j.db")


def test_workers_that_open_a_new_journal_file_at_once_all_open_it(tmp_path: Path) -> None:
    """Two workers started together both switch a new file to WAL; SQLite refuses one of them at once (about
    one open in fifty here, before the switch was retried), which must wait like any other writer."""
    from concurrent.futures import ThreadPoolExecutor
    failures: list[str] = []

    def open_journal(path: Path) -> None:
        try:
            open_store(f"sqlite:///{path}").open_session("s", {})
        except StoreUnavailable as exc:
            failures.append(str(exc))

    with ThreadPoolExecutor(max_workers=4) as pool:
        for k in range(150):
            list(pool.map(open_journal, [tmp_path / f"j{k}.db"] * 4))
    assert failures == []


def test_a_replayed_turn_reads_the_models_recorded_reply_and_never_calls_it(small_catalog: Path, tmp_path: Path,
                                                                           monkeypatch, server) -> None:
    from tests.test_agent_llm import extraction, llm_agent
    monkeypatch.setenv("AGENT_MAX_SESSIONS", "1")
    monkeypatch.setenv("AGENT_SESSION_STORE", f"sqlite:///{tmp_path / 'journal.db'}")
    server.push_chat(extraction([{"attribute": "feature", "value": "waterproof", "negated": False}]),
                     prompt_tokens=120, completion_tokens=30)
    agent = llm_agent(small_catalog, monkeypatch, server.port)
    agent.reset("a", {})
    agent.respond("a", "hi, I need chelsea boots that are waterproof", 1, 10)
    trace = agent.debug_snapshot("a")
    assert len(server.posts()) == 1 and any(a["source"] == "llm" for a in trace["turns"][0]["accepted"])
    agent.reset("b", {})                                  # evicts "a"
    assert agent.debug_snapshot("a") == trace             # rebuilt on the recorded reply
    other = llm_agent(small_catalog, monkeypatch, server.port)   # another worker reading the same journal
    assert other.debug_snapshot("a") == trace
    assert len(server.posts()) == 1
