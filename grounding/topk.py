"""The best few of many scored ids, as arrays: the one top-n rule of the clue shortlist
(`grounding.clues`) and the posting-array BM25 (`starter.index.postings`)."""
from __future__ import annotations

import numpy as np


def best_first(ids: np.ndarray, scores: np.ndarray, n: int) -> np.ndarray:
    """Positions of the `n` best of `ids` by score descending, then id ascending, best first (what
    sorting (-score, id) and keeping `n` gives), without sorting all of them: a partition finds the
    n-th score, and every id tied with it stays, so the id decides among them."""
    if len(ids) > n > 0:
        cut = np.partition(-scores, n - 1)[n - 1]
        keep = np.flatnonzero(-scores <= cut)
        return keep[np.lexsort((ids[keep], -scores[keep]))[:n]]
    return np.lexsort((ids, -scores))[:max(n, 0)]
