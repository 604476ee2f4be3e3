"""One session's explicit state, and the reducer that folds a turn into it.

Like a dialogue tracker: the state is data, `record_message` and
`record_response` are the only writers, and every field says what it is.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from starter.parse import Observation
from starter.rank import Track
from starter.retrieve import Pool


@dataclass
class Constraint:
    """Something the shopper said about the target, with where it came from."""

    attribute: str
    value: str
    source: str          # template | regex | llm | fuzzy
    confidence: float
    turn: int
    negated: bool = False


@dataclass
class SessionState:
    """Everything the agent knows about one session."""

    session_id: str
    profile: dict[str, Any] = field(default_factory=dict)
    turn: int = 0                                  # turns answered so far
    scenario: str = "unknown"                      # buying | browsing | intent_override | unknown
    scenario_certain: bool = False                 # read from a template opening (not guessed)
    override_seen: bool = False                    # the intent-override message has arrived
    override_turn: int | None = None
    boundary_seen: bool = False
    observations: list[Observation] = field(default_factory=list)
    asks: list[str | None] = field(default_factory=list)       # our ask_attribute per turn
    shown: list[list[int]] = field(default_factory=list)       # our list per turn
    shown_counted: list[bool] = field(default_factory=list)    # could a hit count on that turn?
    excluded: set[int] = field(default_factory=set)            # proved wrong: shown on a counted turn
    doubtful: set[int] = field(default_factory=set)            # shown on a turn that may not have counted
    asked: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)           # boundary refusals
    exhausted: list[str] = field(default_factory=list)         # "no additional preference for A"
    constraints: list[Constraint] = field(default_factory=list)
    pool: Pool | None = None
    tracks: dict[int, Track] = field(default_factory=dict)
    relevance_words: list[str] = field(default_factory=list)   # the free-text query `relevance` answers
    relevance: dict[int, float] = field(default_factory=dict)
    last_good: dict[str, Any] | None = None
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})

    @property
    def last_ask(self) -> str | None:
        return self.asks[-1] if self.asks else None

    def pre_override(self) -> bool:
        """Hits do not count yet: an override session whose override has not come."""
        return self.scenario == "intent_override" and not self.override_seen


def record_message(state: SessionState, obs: Observation) -> None:
    """Fold a new shopper message into the state (before retrieval)."""
    state.turn += 1
    # Our previous list was wrong if it could have counted (otherwise the
    # session would have ended); pre-override lists prove nothing.
    if obs.kind == "override" and not state.override_seen:
        # Everything shown so far was shown before the override: proof of nothing.
        state.doubtful.clear()
    elif state.shown and state.shown_counted[-1]:
        (state.excluded if state.scenario_certain else state.doubtful).update(state.shown[-1])
    state.observations.append(obs)
    last = state.last_ask
    if obs.kind == "override" and state.turn > 1 and not state.override_seen:
        state.override_seen = True
        state.override_turn = state.turn
        if not state.scenario_certain:
            state.scenario = "intent_override"
    elif obs.kind == "boundary" and isinstance(last, str):
        state.boundary_seen = True
        state.refused.append(last)
    elif obs.kind == "no_preference" and isinstance(last, str):
        state.exhausted.append(last)


def record_response(state: SessionState, shown: list[int], ask: str | None, response: dict[str, Any]) -> None:
    """Fold our own answer into the state (after the decision)."""
    state.shown.append(list(shown))
    state.shown_counted.append(not state.pre_override())
    state.asks.append(ask)
    if ask:
        state.asked.append(ask)
    state.last_good = response
