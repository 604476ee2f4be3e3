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

from starter.catalog import CatalogIndex
from starter.config import Tunables
from starter.rank import Tracks


class Ranked(NamedTuple):
    """A candidate with its posterior probability and score parts (a tuple: one per candidate per turn)."""

    idx: int
    prob: float
    log_weight: float
    exact: bool
    log_prior: float
    loglik: float


def posterior(index: CatalogIndex, tracks: Tracks, excluded: set[int], cfg: Tunables,
              doubtful: set[int] | frozenset[int] = frozenset()) -> "RankedList":
    """Candidates by posterior probability (tie: popularity, then parent_asin).

    Candidates that explain every message exactly dominate (the others pay
    `inexact_penalty`) without erasing the rest: a damaged message can equal
    another product's value, and the rest must stay findable.  `doubtful`
    candidates were shown on a turn that may not have counted and pay
    `doubtful_penalty` instead of being removed.

    Over arrays, with the floats of the per-candidate computation it replaced (tests/test_posterior.py):
    the same additions in the same order.
    """
    live = [(i, t) for i, t in tracks.items() if i not in excluded] if excluded else list(tracks.items())
    if not live:
        return RankedList.empty()
    ids_t, tracks_t = zip(*live)
    _, _, exact_t, loglik_t, text_t, category_t, _ = zip(*tracks_t)
    ids = np.array(ids_t, dtype=np.int64)
    exact = np.array(exact_t, dtype=bool)
    loglik, text_ll, category_ll = (np.array(c, dtype=np.float64) for c in (loglik_t, text_t, category_t))
    log_prior = index.log_prior_array[ids]
    lw = log_prior + category_ll + loglik + text_ll
    if exact.any():
        lw[~exact] -= cfg.inexact_penalty
    if doubtful:
        lw[np.fromiter((i in doubtful for i in ids_t), dtype=bool, count=len(ids_t))] -= cfg.doubtful_penalty
    return _ranked(index, ids, lw, exact, log_prior, loglik + category_ll + text_ll)


def ranked_by_weight(index: CatalogIndex, rows: list[tuple[int, float, bool, float, float]]) -> "RankedList":
    """Candidates (idx, log weight, exact, log prior, log likelihood) ranked as `posterior` ranks them."""
    if not rows:
        return RankedList.empty()
    ids, lw, exact, log_prior, loglik = zip(*rows)
    return _ranked(index, np.array(ids, dtype=np.int64), np.array(lw, dtype=np.float64), np.array(exact, dtype=bool),
                   np.array(log_prior, dtype=np.float64), np.array(loglik, dtype=np.float64))


def _ranked(index: CatalogIndex, ids: np.ndarray, lw: np.ndarray, exact: np.ndarray, log_prior: np.ndarray,
            loglik: np.ndarray) -> "RankedList":
    """The softmax of the log weights (`math.exp` per candidate, one sequential sum in the given order),
    best first; ties by popularity (`index.popular_place`: -rating_number, then parent_asin), unique,
    so the order never depends on anything else."""
    exps = list(map(math.exp, (lw - lw.max()).tolist()))
    total = sum(exps)
    order = np.lexsort((index.popular_place_array[ids], -lw))
    return RankedList(ids[order], np.array(exps)[order] / total, lw[order], exact[order], log_prior[order],
                      loglik[order])


class RankedList(Sequence[Ranked]):
    """`posterior`'s candidates best first, as sorted arrays made into `Ranked` rows a block at a
    time when read: a pool of thousands is ranked every turn, and a turn reads its first hundred."""

    BLOCK = 256

    def __init__(self, idx: np.ndarray, prob: np.ndarray, log_weight: np.ndarray, exact: np.ndarray,
                 log_prior: np.ndarray, loglik: np.ndarray) -> None:
        self._columns = (idx, prob, log_weight, exact, log_prior, loglik)
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


def count_exact(ranked: Sequence[Ranked]) -> int:
    """How many candidates explain every message exactly."""
    return ranked.exact_count if isinstance(ranked, RankedList) else sum(1 for r in ranked if r.exact)


def most_probable(index: CatalogIndex, tracks: Tracks, cfg: Tunables) -> int | None:
    """The candidate the posterior ranks first, or None when there are none."""
    return posterior(index, tracks, set(), cfg)[0].idx if tracks else None
