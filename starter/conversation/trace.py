"""The per-turn trace: every decision of a turn, typed.

`Agent.trace(session_id)` gives a `SessionTrace`; `Agent.debug_snapshot`
is its `to_dict()` (JSON-ready).  The demo and the scripts read these types
instead of decoding dictionaries.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple, overload


def _plain(value: Any) -> Any:
    """Tuples and sets as lists, named tuples as dicts, recursively (for JSON)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    return value


class _Record:
    def to_dict(self) -> dict[str, Any]:
        return _plain(asdict(self))  # type: ignore[call-overload]


@dataclass(frozen=True)
class ParsedView(_Record):
    """How the message was read: the parser's kind and, after understanding, the agent's."""

    kind_parsed: str
    kind: str
    template: bool
    category: str | None
    value_text: str | None
    attribute: str | None
    keywords: tuple[str, ...]
    materials: tuple[str, ...]
    colors: tuple[str, ...]
    negated: tuple[str, ...]
    budget_max: float | None
    read_as: str | None = None        # the message as read, when it spells a slip of a cue word right


@dataclass(frozen=True)
class UnderstandingView(_Record):
    clue_matches: tuple[tuple[str, float], ...]
    corrected_tokens: tuple[str, ...]
    rejected_phrases: tuple[tuple[str, str], ...]
    llm_called: bool
    llm_error: str | None
    llm_error_kind: str | None
    intent: str | None
    no_preference_attribute: str | None
    usage: dict[str, int]


@dataclass(frozen=True)
class ConstraintRow(_Record):
    """An accepted constraint: what, from where, how sure, and the shopper's words for it."""

    attribute: str
    value: str
    source: str
    confidence: float
    negated: bool = False
    evidence: str = ""
    clue_matches: tuple[str, ...] = ()
    turn: int | None = None


@dataclass(frozen=True)
class RejectionRow(_Record):
    """A proposal or phrase the gate refused, and why."""

    value: str
    reason: str
    attribute: str = ""
    source: str = ""


@dataclass(frozen=True)
class ShelfView(_Record):
    exact: str | None
    guesses: dict[str, float]


@dataclass(frozen=True)
class StateView(_Record):
    scenario: str
    path: str
    override_seen: bool
    override_turn: int | None
    boundary_seen: bool
    asked: tuple[str, ...]
    refused: tuple[str, ...]
    exhausted: tuple[str, ...]
    excluded: int
    constraints: tuple[ConstraintRow, ...]


class CandidateRow(NamedTuple):
    """One of a turn's first candidates (a named tuple: twenty are made every turn, and a frozen
    dataclass costs six times as much to make)."""

    parent_asin: str
    title: str
    shelf: str
    price: float | None
    rating_number: int
    prob: float
    exact: bool
    log_prior: float
    loglik: float
    scenario: str


class CandidateRows(Sequence[CandidateRow]):
    """A turn's candidate rows, made the first time they are read.

    Every turn records its trace, and making twenty rows of rounded figures was a tenth of a
    template turn; the trace is read only by `debug_snapshot`, the demo and tests.  `make` must
    depend on nothing that changes after the turn (the turn hands it its first rows and their
    scenarios, already taken).  `asdict` deep-copies a field it does not know: that copy is the
    rows themselves, a plain tuple."""

    __slots__ = ("_make", "_rows")

    def __init__(self, make: Callable[[], tuple[CandidateRow, ...]]) -> None:
        self._make: Callable[[], tuple[CandidateRow, ...]] | None = make
        self._rows: tuple[CandidateRow, ...] | None = None

    def rows(self) -> tuple[CandidateRow, ...]:
        """The rows, made on the first call.  Two threads may both make them (the same rows); a
        `make` already dropped means `_rows` was set first."""
        rows = self._rows
        if rows is None:
            make = self._make
            rows = tuple(make()) if make is not None else self._rows
            assert rows is not None
            self._rows, self._make = rows, None
        return rows

    def __len__(self) -> int:
        return len(self.rows())

    @overload
    def __getitem__(self, k: int) -> CandidateRow: ...
    @overload
    def __getitem__(self, k: slice) -> tuple[CandidateRow, ...]: ...
    def __getitem__(self, k: int | slice) -> CandidateRow | tuple[CandidateRow, ...]:
        return self.rows()[k]

    def __iter__(self) -> Iterator[CandidateRow]:
        return iter(self.rows())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CandidateRows):
            other = other.rows()
        return isinstance(other, tuple) and self.rows() == other

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"CandidateRows({self.rows()!r})"

    def __deepcopy__(self, memo: dict) -> tuple[CandidateRow, ...]:
        return self.rows()


class QuestionRow(NamedTuple):
    """One question's value on a turn (a named tuple, like `CandidateRow`: made for every question, every turn)."""

    attribute: str
    value: float          # expected gain in TechnicalScore
    top1_mass: float
    concentration: float
    groups: int


@dataclass(frozen=True)
class CommitView(_Record):
    count: int
    reason: str
    expected_value: float


@dataclass(frozen=True)
class TurnTrace(_Record):
    """Every decision of one turn (a fault turn holds only `turn`, `message`, `fault`, `traceback`)."""

    turn: int
    message: str
    parsed: ParsedView | None = None
    understanding: UnderstandingView | None = None
    shelf: ShelfView | None = None
    accepted: tuple[ConstraintRow, ...] = ()
    rejected: tuple[RejectionRow, ...] = ()
    state: StateView | None = None
    funnel: dict[str, int] = field(default_factory=dict)
    top: Sequence[CandidateRow] = ()    # a tuple, or `CandidateRows` made when read
    questions: tuple[QuestionRow, ...] = ()
    commit: CommitView | None = None
    rerank: dict[str, Any] | None = None
    understood: tuple[str, ...] = ()      # the facts read so far, in plain words
    ask_attribute: str | None = None
    recommendations: tuple[str, ...] = ()
    fault: str | None = None
    traceback: str | None = None


@dataclass(frozen=True)
class SessionTrace(_Record):
    session_id: str
    known: bool
    scenario: str | None = None
    path: str | None = None
    turns: tuple[TurnTrace, ...] = ()
