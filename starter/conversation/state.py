"""One session's explicit state, the events that change it, and the one reducer that applies them.

Like a dialogue tracker: the decision modules compute events, and `apply` is
the only code that writes a `SessionState`.  The log of observations is what
the shopper said, never edited; what understanding read in each message is
its own record (`readings`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from starter.reading.parse import Observation
from starter.template.tracks import TrackTable
from starter.template.retrieve import Growth, Pool
from starter.conversation.trace import TurnTrace
from starter.reading.understand import Reading
from starter.reading.kinds import MessageKind, Scenario, SessionPath


@dataclass(frozen=True)
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
    scenario: Scenario = Scenario.UNKNOWN          # the protocol scenario, as read or guessed
    scenario_certain: bool = False                 # read from a template opening (not guessed)
    path: SessionPath = SessionPath.TEMPLATE       # which model reads the session (starter.route decides)
    override_seen: bool = False                    # the intent-override message has arrived
    override_turn: int | None = None
    boundary_seen: bool = False
    observations: list[Observation] = field(default_factory=list)   # what the shopper said
    readings: list[Reading] = field(default_factory=list)           # what the agent read in it
    card_explained: set[int] = field(default_factory=set)           # turns (0-based) read as quoted card values
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
    tracks: TrackTable = field(default_factory=TrackTable.empty)
    relevance_words: list[str] = field(default_factory=list)   # the free-text query `relevance` answers
    relevance: dict[int, float] = field(default_factory=dict)
    last_good: dict[str, Any] | None = None
    traces: list[TurnTrace] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})

    @property
    def last_ask(self) -> str | None:
        return self.asks[-1] if self.asks else None

    def pre_override(self) -> bool:
        """Hits do not count yet: an override session whose override has not come."""
        return self.scenario == Scenario.INTENT_OVERRIDE and not self.override_seen


# ---- events -----------------------------------------------------------------------------
@dataclass(frozen=True)
class MessageRead:
    """A shopper message arrived and was read."""

    observation: Observation
    reading: Reading
    usage: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class PoolOpened:
    """The opening's candidates, their tracks and the scenario read from it."""

    pool: Pool
    tracks: TrackTable
    scenario: Scenario
    scenario_certain: bool
    path: SessionPath = SessionPath.TEMPLATE


@dataclass(frozen=True)
class PathReplayed:
    """The conversation so far, replayed on the template path: its pool, tracks and what they read."""

    pool: Pool
    tracks: TrackTable
    scenario: Scenario
    card_explained: frozenset[int]
    relevance_words: tuple[str, ...]
    relevance: dict[int, float]


@dataclass(frozen=True)
class PathChosen:
    """The session moves to another path (its messages so far are read there from now on)."""

    path: SessionPath


@dataclass(frozen=True)
class PoolGrown:
    """Candidates added to the pool (with their tracks, replayed from the opening)."""

    growth: Growth
    tracks: TrackTable


@dataclass(frozen=True)
class TracksUpdated:
    """New tracks for (some of) the candidates."""

    tracks: TrackTable


@dataclass(frozen=True)
class MessageExplained:
    """Some candidate's card values explain this free-text turn well: it quotes values."""

    turn_index: int


@dataclass(frozen=True)
class RelevanceComputed:
    """The cumulative free-text query and its BM25 relevance (kept: one turn may need it several times)."""

    words: tuple[str, ...]
    relevance: dict[int, float]


@dataclass(frozen=True)
class ConstraintsRecorded:
    constraints: tuple[Constraint, ...]


@dataclass(frozen=True)
class UsageAdded:
    """Model tokens spent outside understanding (e.g. a rerank)."""

    usage: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class ResponseSent:
    """Our answer: the list shown, the question asked, the response."""

    shown: tuple[int, ...]
    ask: str | None
    response: dict[str, Any]


@dataclass(frozen=True)
class TurnTraced:
    """The turn's decisions (or its fault: then the last good response stands)."""

    trace: TurnTrace


Event = Union[MessageRead, PoolOpened, PathReplayed, PathChosen, PoolGrown, TracksUpdated, MessageExplained, RelevanceComputed,
              ConstraintsRecorded, UsageAdded, ResponseSent, TurnTraced]


# ---- the reducer ------------------------------------------------------------------------
def apply(state: SessionState, event: Event) -> None:
    """Fold one event into the state: the only writer of `SessionState`."""
    if isinstance(event, MessageRead):
        _message_read(state, event)
    elif isinstance(event, PoolOpened):
        state.pool = event.pool
        state.tracks = event.tracks
        state.scenario = event.scenario
        state.scenario_certain = event.scenario_certain
        state.path = event.path
    elif isinstance(event, PathReplayed):
        state.pool = event.pool
        state.tracks = event.tracks
        state.scenario = event.scenario
        state.path = SessionPath.TEMPLATE
        state.card_explained = set(event.card_explained)
        state.relevance_words = list(event.relevance_words)
        state.relevance = event.relevance
    elif isinstance(event, PathChosen):
        state.path = event.path
    elif isinstance(event, PoolGrown):
        pool = state.pool
        assert pool is not None, "the pool grows only after it is opened"
        g = event.growth
        if g.shelf is not None:
            pool.shelf = g.shelf
        pool.ids.extend(g.ids)
        pool.present.update(g.ids)
        pool.stages[g.stage] = len(g.ids)
        state.tracks = state.tracks.merged(event.tracks)
    elif isinstance(event, TracksUpdated):
        state.tracks = state.tracks.merged(event.tracks)
    elif isinstance(event, MessageExplained):
        state.card_explained.add(event.turn_index)
    elif isinstance(event, RelevanceComputed):
        state.relevance_words = list(event.words)
        state.relevance = event.relevance
    elif isinstance(event, ConstraintsRecorded):
        state.constraints.extend(event.constraints)
    elif isinstance(event, UsageAdded):
        _add_usage(state, event.usage)
    elif isinstance(event, ResponseSent):
        state.shown.append(list(event.shown))
        state.shown_counted.append(not state.pre_override())
        state.asks.append(event.ask)
        if event.ask:
            state.asked.append(event.ask)
        state.last_good = event.response
    elif isinstance(event, TurnTraced):
        state.traces.append(event.trace)
    else:  # pragma: no cover - a new event type must be handled here
        raise TypeError(f"unknown event {type(event).__name__}")


def _add_usage(state: SessionState, usage: tuple[tuple[str, int], ...]) -> None:
    for k, v in usage:
        state.usage[k] = state.usage.get(k, 0) + v


def _corrects_a_detail(state: SessionState, reading: Reading) -> bool:
    """A person on the people path who says "white instead of black" corrects a detail (it names what
    no longer holds), unlike an override of the whole wish ("forget what I said before"): unless their
    profile says the session is an intent override, what they were shown still proves what it proved."""
    return state.path == SessionPath.PEOPLE and not state.scenario_certain and bool(reading.negated)


def _message_read(state: SessionState, event: MessageRead) -> None:
    """A new message: what our last list proved, the scenario events, the log."""
    reading = event.reading
    state.turn += 1
    # Our previous list was wrong if it could have counted (otherwise the
    # session would have ended); pre-override lists prove nothing.
    if reading.kind == MessageKind.OVERRIDE and not state.override_seen and not _corrects_a_detail(state, reading):
        # Everything shown so far was shown before the override: proof of nothing.
        state.doubtful.clear()
    elif state.shown and state.shown_counted[-1]:
        (state.excluded if state.scenario_certain else state.doubtful).update(state.shown[-1])
    state.observations.append(event.observation)
    state.readings.append(reading)
    _add_usage(state, event.usage)
    last = state.last_ask
    if reading.kind == MessageKind.OVERRIDE and state.turn > 1 and not state.override_seen:
        state.override_seen = True
        state.override_turn = state.turn
        if not state.scenario_certain:
            state.scenario = Scenario.INTENT_OVERRIDE
    elif reading.kind == MessageKind.BOUNDARY and isinstance(last, str):
        state.boundary_seen = True
        state.refused.append(last)
    elif reading.kind == MessageKind.NO_PREFERENCE and isinstance(last, str):
        state.exhausted.append(last)
