"""The posterior: prior x evidence over the candidates' tracks, ranked.

With exact explanations available only they compete (the others pay
`inexact_penalty`) and popularity orders them; otherwise soft evidence leads
and popularity is a bounded tie-break.  Ties: popularity, then parent_asin
(`index.popular_place`, unique), so the order never depends on anything else.
"""
from __future__ import annotations

import math
from typing import Iterator, NamedTuple, Sequence, overload

import numpy as np

from starter.index.arrays import member
from starter.index.catalog import CatalogIndex
from starter.settings import PosteriorSettings
from starter.template.commit import HORIZON_ITEMS
from starter.template.tracks import TrackTable


class Ranked(NamedTuple):
    """A candidate with its posterior probability and score parts (a tuple: one per candidate per turn)."""

    idx: int
    prob: float
    log_weight: float
    exact: bool
    log_prior: float
    loglik: float


def posterior(index: CatalogIndex, tracks: TrackTable, excluded: set[int], cfg: PosteriorSettings,
              doubtful: set[int] | frozenset[int] = frozenset()) -> "RankedList":
    """Candidates by posterior probability (tie: popularity, then parent_asin).

    Candidates that explain every message exactly dominate (the others pay
    `inexact_penalty`) without erasing the rest: a damaged message can equal
    another product's value, and the rest must stay findable.  `doubtful`
    candidates were shown on a turn that may not have counted and pay
    `doubtful_penalty` instead of being removed.

    Over the tracks' columns, with the floats of the per-candidate computation it replaced
    (tests/test_posterior.py): the same additions in the same order.
    """
    ids, exact, loglik = tracks.ids, tracks.exact, tracks.loglik
    text_ll, category_ll = tracks.text_ll, tracks.category_ll
    rows = np.arange(len(ids))
    if excluded:
        live = ~member(ids, _id_array(excluded))
        ids, exact, loglik, text_ll, category_ll, rows = (c[live] for c in (ids, exact, loglik, text_ll, category_ll,
                                                                            rows))
    if not len(ids):
        return RankedList.empty()
    log_prior = index.log_prior_array[ids]
    lw = log_prior + category_ll + loglik + text_ll
    if exact.any():
        lw[~exact] -= cfg.inexact_penalty
    if doubtful:
        lw[member(ids, _id_array(doubtful))] -= cfg.doubtful_penalty
    return _ranked(index, ids, lw, exact, log_prior, loglik + category_ll + text_ll, rows)


def _id_array(ids: set[int] | frozenset[int]) -> np.ndarray:
    return np.fromiter(ids, dtype=np.int64, count=len(ids))


def ranked_by_weight(index: CatalogIndex, ids: np.ndarray, lw: np.ndarray, log_prior: np.ndarray) -> "RankedList":
    """Candidates `ids` (none exact) with log weights `lw`, of which `log_prior` is the prior's part, ranked
    as `posterior` ranks them."""
    if not len(ids):
        return RankedList.empty()
    lw = np.asarray(lw, dtype=np.float64)
    log_prior = np.asarray(log_prior, dtype=np.float64)
    return _ranked(index, np.asarray(ids, dtype=np.int64), lw, np.zeros(len(ids), dtype=bool), log_prior,
                   lw - log_prior)


def _ranked(index: CatalogIndex, ids: np.ndarray, lw: np.ndarray, exact: np.ndarray, log_prior: np.ndarray,
            loglik: np.ndarray, rows: np.ndarray | None = None) -> "RankedList":
    """The softmax of the log weights (`math.exp` per candidate, one sequential sum in the given order),
    best first; ties by popularity (`index.popular_place`: -rating_number, then parent_asin), unique,
    so the order never depends on anything else."""
    exps = list(map(math.exp, (lw - lw.max()).tolist()))
    total = sum(exps)
    order = np.lexsort((index.popular_place_array[ids], -lw))
    return RankedList(ids[order], np.array(exps)[order] / total, lw[order], exact[order], log_prior[order],
                      loglik[order], rows[order] if rows is not None else None)


class RankedList(Sequence[Ranked]):
    """`posterior`'s candidates best first, as sorted arrays made into `Ranked` rows a block at a
    time when read: a pool of thousands is ranked every turn, and a turn reads rows of its first
    twenty (the rest it reads as arrays, `head`)."""

    BLOCK = 20

    def __init__(self, idx: np.ndarray, prob: np.ndarray, log_weight: np.ndarray, exact: np.ndarray,
                 log_prior: np.ndarray, loglik: np.ndarray, track_rows: np.ndarray | None = None) -> None:
        self._columns = (idx, prob, log_weight, exact, log_prior, loglik)
        self.track_rows = track_rows      # each candidate's row in the tracks it was ranked from (posterior)
        self._blocks: dict[int, list[Ranked]] = {}
        self.exact_count = int(exact.sum())

    @classmethod
    def empty(cls) -> "RankedList":
        return cls(*(np.zeros(0, dtype=d) for d in (np.int64, np.float64, np.float64, bool, np.float64, np.float64)))

    def _block(self, b: int) -> list[Ranked]:
        got = self._blocks.get(b)
        if got is None:
            part = slice(b * self.BLOCK, (b + 1) * self.BLOCK)
            got = self._blocks[b] = list(map(Ranked, *(c[part].tolist() for c in self._columns)))
        return got

    def __len__(self) -> int:
        return len(self._columns[0])

    def head(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(idx, prob) of the first `n` candidates, as arrays (no rows made)."""
        return self._columns[0][:n], self._columns[1][:n]

    @overload
    def __getitem__(self, k: int) -> Ranked: ...
    @overload
    def __getitem__(self, k: slice) -> list[Ranked]: ...
    def __getitem__(self, k: int | slice) -> Ranked | list[Ranked]:
        if isinstance(k, slice):
            start, stop, step = k.indices(len(self))
            if step != 1:
                return [self[j] for j in range(start, stop, step)]
            out: list[Ranked] = []
            while start < stop:          # whole runs of each block (a turn slices its first hundred)
                b, lo = divmod(start, self.BLOCK)
                take = min(stop - start, self.BLOCK - lo)
                out += self._block(b)[lo:lo + take]
                start += take
            return out
        n = len(self)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError("ranked list index out of range")
        return self._block(k // self.BLOCK)[k % self.BLOCK]

    def __iter__(self) -> Iterator[Ranked]:
        for b in range((len(self) + self.BLOCK - 1) // self.BLOCK):
            yield from self._block(b)


def horizon_probs(ranked: Sequence[Ranked]) -> list[float]:
    """The probabilities the commit policy reads: the first `HORIZON_ITEMS` (a ranked list makes its rows
    only when read, and a people turn ranks hundreds)."""
    return leading_probs(ranked, HORIZON_ITEMS)


def leading_probs(ranked: Sequence[Ranked], n: int) -> list[float]:
    """The probabilities of the first `n` candidates."""
    if isinstance(ranked, RankedList):
        return ranked.head(n)[1].tolist()
    return [r.prob for r in ranked[:n]]


def count_exact(ranked: Sequence[Ranked]) -> int:
    """How many candidates explain every message exactly."""
    return ranked.exact_count if isinstance(ranked, RankedList) else sum(1 for r in ranked if r.exact)


def most_probable(index: CatalogIndex, tracks: TrackTable, cfg: PosteriorSettings) -> int | None:
    """The candidate the posterior ranks first, or None when there are none."""
    return posterior(index, tracks, set(), cfg)[0].idx if tracks else None
