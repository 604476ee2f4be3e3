"""The pool's tracks as columns: one array per field, one row per candidate, in pool order.

A track is a candidate's account of the conversation so far (`starter.template.evidence`):
its scenario, the card positions its shopper would have disclosed, whether
every message so far is exactly what it predicts, and its evidence terms.
Kept as arrays, a turn updates thousands of candidates with a few array
operations instead of a tuple per candidate, and the garbage collector has
nothing to walk (at a million products the live sessions' 230,000 tuple
tracks made each full collection 150-270 ms).  Row order is the order the
candidates joined the pool: the posterior's sum runs in it.  A table is
never changed in place; every update makes a new one.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, NamedTuple

import numpy as np

from starter.index.arrays import member
from starter.reading.kinds import Scenario

SCENARIOS: tuple[str, ...] = (Scenario.BUYING, Scenario.INTENT_OVERRIDE, Scenario.BROWSING)
SCENARIO_CODE: dict[str, int] = {s: k for k, s in enumerate(SCENARIOS)}


class Track(NamedTuple):
    """One row of a table, for reading and for tests (`disclosed`: card positions as a bit mask)."""

    scenario: str
    disclosed: int
    exact: bool = True
    loglik: float = 0.0          # value evidence (0 when every message is exactly as predicted)
    text_ll: float = 0.0         # free-text relevance (latest cumulative query; 0 for template sessions)
    category_ll: float = 0.0     # shelf evidence (0 on the named shelf)
    evidence: tuple[float, ...] = ()   # per-turn similarity, for the trace


@dataclass(frozen=True, eq=False)
class TrackTable:
    """Every candidate's track; `evidence` holds one array per message read (the opening first)."""

    ids: np.ndarray                 # int64 product idx
    scenario: np.ndarray            # int8 code into SCENARIOS
    disclosed: np.ndarray           # uint8 mask of disclosed card positions (twins included)
    exact: np.ndarray               # bool
    loglik: np.ndarray              # float64
    text_ll: np.ndarray             # float64
    category_ll: np.ndarray         # float64
    evidence: tuple[np.ndarray, ...] = ()
    _rows: list[np.ndarray] = field(default_factory=list, repr=False)   # memo: argsort of ids

    @classmethod
    def empty(cls) -> "TrackTable":
        return cls.of_rows([], [])

    @classmethod
    def of_rows(cls, ids: Iterable[int], tracks: Iterable[Track]) -> "TrackTable":
        """A table from rows (tests and small tables); every row must have as many evidence entries."""
        ids = list(ids)
        rows = list(tracks)
        depth = {len(t.evidence) for t in rows}
        if len(depth) > 1:
            raise ValueError("tracks of one table read the same messages: evidence lengths differ")
        n_ev = depth.pop() if depth else 0
        return cls(np.asarray(ids, dtype=np.int64),
                   np.asarray([SCENARIO_CODE[t.scenario] for t in rows], dtype=np.int8),
                   np.asarray([t.disclosed for t in rows], dtype=np.uint8),
                   np.asarray([t.exact for t in rows], dtype=bool),
                   *(np.asarray([getattr(t, f) for t in rows], dtype=np.float64)
                     for f in ("loglik", "text_ll", "category_ll")),
                   tuple(np.asarray([t.evidence[k] for t in rows], dtype=np.float64) for k in range(n_ev)))

    def __len__(self) -> int:
        return len(self.ids)

    def __bool__(self) -> bool:
        return len(self.ids) > 0

    def __contains__(self, idx: object) -> bool:
        return isinstance(idx, (int, np.integer)) and self.rows_of(np.asarray([idx], dtype=np.int64))[0] >= 0

    def with_columns(self, **columns: object) -> "TrackTable":
        """A new table with some columns replaced (same candidates, same order)."""
        out = replace(self, **columns)
        object.__setattr__(out, "_rows", self._rows)     # the same ids: the same sort
        return out

    def rows_of(self, ids: np.ndarray) -> np.ndarray:
        """Each id's row (-1 where the table does not hold it)."""
        if not self._rows:
            self._rows.append(np.argsort(self.ids, kind="stable"))
        order = self._rows[0]
        if not len(order):
            return np.full(len(ids), -1, dtype=np.int64)
        sorted_ids = self.ids[order]
        at = np.minimum(np.searchsorted(sorted_ids, ids), len(order) - 1)
        return np.where(sorted_ids[at] == ids, order[at], -1)

    def track(self, idx: int) -> Track:
        """One candidate's track (KeyError when the table does not hold it)."""
        row = int(self.rows_of(np.asarray([idx], dtype=np.int64))[0])
        if row < 0:
            raise KeyError(idx)
        return Track(SCENARIOS[self.scenario[row]], int(self.disclosed[row]), bool(self.exact[row]),
                     float(self.loglik[row]), float(self.text_ll[row]), float(self.category_ll[row]),
                     tuple(float(e[row]) for e in self.evidence))

    def scenarios_of(self, ids: list[int]) -> list[str]:
        return self.scenarios_at(self.rows_of(np.asarray(ids, dtype=np.int64)))

    def scenarios_at(self, rows: np.ndarray) -> list[str]:
        return [SCENARIOS[c] for c in self.scenario[rows].tolist()]

    def last_evidence_max(self, without: str | None = None) -> float:
        """The best similarity of the latest message over the candidates (0.0 for none), leaving out the
        tracks of scenario `without` when given."""
        if not self.evidence or not len(self.ids):
            return 0.0
        latest = self.evidence[-1] if without is None else self.evidence[-1][self.scenario != SCENARIO_CODE[without]]
        return float(latest.max()) if len(latest) else 0.0

    def any_exact(self, excluded: set[int] | frozenset[int]) -> bool:
        """Whether some candidate not excluded explains every message exactly."""
        exact = self.exact
        if excluded and exact.any():
            exact = exact & ~member(self.ids, np.fromiter(excluded, dtype=np.int64, count=len(excluded)))
        return bool(exact.any())

    def merged(self, other: "TrackTable") -> "TrackTable":
        """This table with `other`'s rows: a candidate both hold keeps its row and takes `other`'s track,
        the others are appended in `other`'s order (what a dict's update does)."""
        if not len(other):
            return self
        if not len(self):
            return other
        if len(other) >= len(self) and np.array_equal(other.ids[:len(self)], self.ids):
            return other          # every row replaced, in the same order (a whole turn's update)
        rows = self.rows_of(other.ids)
        held, new = rows >= 0, rows < 0
        columns = {}
        for name in ("ids", "scenario", "disclosed", "exact", "loglik", "text_ll", "category_ll"):
            mine, theirs = getattr(self, name), getattr(other, name)
            columns[name] = _merge(mine, theirs, rows, held, new)
        if len(self.evidence) != len(other.evidence):
            raise ValueError("tracks of one table read the same messages: evidence lengths differ")
        columns["evidence"] = tuple(_merge(a, b, rows, held, new) for a, b in zip(self.evidence, other.evidence))
        return TrackTable(**columns)     # type: ignore[arg-type]


def _merge(mine: np.ndarray, theirs: np.ndarray, rows: np.ndarray, held: np.ndarray, new: np.ndarray) -> np.ndarray:
    out = mine.copy() if held.any() else mine
    if held.any():
        out[rows[held]] = theirs[held]
    return np.concatenate((out, theirs[new])) if new.any() else out
