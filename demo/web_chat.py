"""A chat turn of the web demo when the agent keeps its sessions in a store (`Agent.take_turn`).

The web process holds nothing of a chat: its turn count is what the session
store holds, so every conversation survives the process, any worker can
answer any message, and no chat is dropped to make room for another.  The
page sends the turn number it is sending; with it a request is idempotent:

- turn n+1 (n stored): played and stored as input n;
- turn n, the same message as stored input n-1: a retry whose answer was lost
  (a worker died after storing it, a connection broke): the stored turn's
  answer is given again, replayed, never played twice;
- anything else, or another worker storing input n first with another
  message: 409 with the session's turn, never a silent fork;
- a first turn opens the session only if the store does not know it (never
  a reset): the same first turn at two workers at once is stored once, and
  a late copy of it drops nothing the conversation has stored since.

A store that is down is 503 (nothing stored): the page retries.
"""
from __future__ import annotations

import time
from typing import Any

import contest as P
from demo.session import SessionError, TurnView, _products, _scores, explain, trace_of
from starter.session_store import SequenceConflict, StoreUnavailable


class TurnConflict(SessionError):
    """The session is not where the request expects it (another tab, or a turn already stored)."""


def uses_store(agent: Any) -> bool:
    return callable(getattr(agent, "take_turn", None)) and callable(getattr(agent, "stored_turns", None))


def stored_chat_turn(agent: Any, lookup: Any, lock: Any, session_id: str, message: str,
                     turn: int | None) -> TurnView:
    """Answer one chat message of `session_id` (see the module docstring); raises TurnConflict,
    SessionError (the 10 turns are over) or StoreUnavailable.  `lock` (a context manager) is held
    around the agent's calls: a real lock for an agent that is not thread-safe."""
    with lock:
        start = time.perf_counter()               # the turn's time in the agent, store included
        resp = None
        if turn is not None and turn > 1:          # the common case, in one read of the store
            try:
                resp = agent.take_turn(session_id, message, turn, P.TOP_K, expect=turn - 1)
            except SequenceConflict:
                pass                               # not where the page thinks: decided below
        if resp is None:
            resp, turn = _decided_turn(agent, session_id, message, turn)
        trace = _last_trace(agent, session_id)
        took = _ms_since(start)
    return _view(lookup, resp, trace, turn, message, took)


def _decided_turn(agent: Any, session_id: str, message: str, turn: int | None) -> tuple[Any, int]:
    """(answer, turn) of a message whose turn is not the stored count + 1 as sent, or not sent."""
    stored = agent.stored_turns(session_id)
    if stored is None:
        if turn not in (None, 1):
            raise TurnConflict(f"unknown session (turn {turn} sent); start a new session")
        # Opened, not reset: when the same first turn reaches two workers at once (a client's
        # retry), the later one must not drop what the other has stored meanwhile.
        getattr(agent, "open_session", agent.reset)(session_id, {})
        stored = 0
    if turn is not None and turn == stored:
        return _stored_answer(agent, session_id, message, turn), turn
    if turn is not None and turn != stored + 1:
        raise TurnConflict(f"this session is at turn {stored + 1}, not {turn}; reload it or start a new one")
    if stored >= P.MAX_TURNS:
        raise SessionError(f"this session has had its {P.MAX_TURNS} turns; reset to start again")
    try:
        return agent.take_turn(session_id, message, stored + 1, P.TOP_K, expect=stored), stored + 1
    except SequenceConflict:
        return _stored_answer(agent, session_id, message, stored + 1), stored + 1


def store_reachable(agent: Any) -> bool:
    """Does the agent's session store answer (True for an agent that keeps no store)?"""
    store = getattr(agent, "store", None)
    journal = getattr(store, "journal", None)
    if journal is None:
        return True
    try:
        journal.read("-", 2**31 - 1)
    except StoreUnavailable:
        return False
    return True


def _stored_answer(agent: Any, session_id: str, message: str, turn: int) -> Any:
    """The answer of stored turn `turn` if it is this very message (a retry), else TurnConflict."""
    last = agent.last_turn(session_id)
    if last is not None and last[0] == turn and last[1].turn == turn and last[1].message == message:
        return last[2]
    if last is not None and last[0] > turn:            # a late copy of an earlier turn
        raise TurnConflict(f"this session is at turn {last[0] + 1}, not {turn}; reload it or start a new one")
    raise TurnConflict(f"turn {turn} of this session was already sent with another message")


def _last_trace(agent: Any, session_id: str) -> Any:
    """The trace of the turn just answered: the agent's live state holds it (no second store read)."""
    last = getattr(agent, "last_trace", None)
    if callable(last):
        return last(session_id)
    turns = trace_of(agent, session_id).turns
    return turns[-1] if turns else None


def _ms_since(start: float) -> float:
    return round((time.perf_counter() - start) * 1000.0, 3)


def _view(lookup: Any, resp: Any, trace: Any, turn: int, message: str, latency_ms: float) -> TurnView:
    if not P.valid_response(resp):
        resp = {"message": "", "ask_attribute": None, "recommendations": []}
    recs = P.normalize_recommendations(resp.get("recommendations"), lookup.ids)
    ask = resp.get("ask_attribute")
    return TurnView(turn=turn, customer=message, agent=resp["message"],
                    ask_attribute=ask if isinstance(ask, (str, type(None))) else repr(ask),
                    products=_products(lookup, recs, _scores(resp), None),
                    explain=explain(trace), latency_ms=latency_ms)


__all__ = ["StoreUnavailable", "TurnConflict", "store_reachable", "stored_chat_turn", "uses_store"]
