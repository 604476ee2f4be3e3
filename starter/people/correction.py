"""The people model's correction: small regression trees added to the log-linear score.

The fitted logit (`weights.json`) reads every feature as a straight line, but what a match is worth is not
(a candidate as good as the best text match is worth more than twice one half as good).  A few shallow trees
over the same feature rows, fitted on top of the logit (`scripts.fit_people`: LightGBM's lambdarank starting
from the logit's score, each tree monotone in every feature whose sign the logit fixes), correct the score.
`trees.json` beside this file holds them; this module evaluates them with numpy alone, so LightGBM is needed
only to fit them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from starter.people.features import FEATURES

TREES_FILE = Path(__file__).with_name("trees.json")


# Trees of more inner nodes than this would need a leaf table too large to hold (2 ** nodes entries a tree).
MAX_INNER_NODES = 12


@dataclass(frozen=True)
class Correction:
    """Trees of at most `MAX_INNER_NODES` inner nodes, as arrays: inner node j of tree t splits on
    `feature[t, j]` at `threshold[t, j]` (a row whose value is at most the threshold goes left), and
    `table[t, bits]` is the value of the leaf a row reaches whose decisions, node j's in bit j (1: left), are
    `bits`.  Every tree's decisions are taken at once, so a turn's few hundred candidates cost a few array
    operations, not a walk per tree."""

    feature: np.ndarray      # (trees, nodes) int64, padded with splits that nothing reads
    threshold: np.ndarray    # (trees, nodes) float64
    table: np.ndarray        # (trees, 2 ** nodes) float64

    def score(self, x: np.ndarray) -> np.ndarray:
        """The correction of each row of the feature matrix `x` (its leaves added up tree by tree)."""
        m, nodes = self.feature.shape
        if len(x) == 0 or m == 0:
            return np.zeros(len(x), dtype=np.float64)
        columns = np.ascontiguousarray(x.T)                  # a feature's values side by side: cheap to gather
        left = (columns[self.feature.ravel()] <= self.threshold.ravel()[:, None]).reshape(m, nodes, len(x))
        bits = np.zeros((m, len(x)), dtype=np.int64)
        for j in range(nodes):
            bits |= left[:, j].astype(np.int64) << j
        bits += (np.arange(m) * self.table.shape[1])[:, None]                # tree t's leaves in row t of the table
        values = np.take(self.table, bits)                                   # (trees, rows)
        out = values[0].copy()
        for k in range(1, m):                    # tree by tree, in the order they were fitted
            out += values[k]
        return out


def from_trees(trees: list[dict]) -> Correction:
    """The arrays of trees given as {"feature", "threshold", "left", "right", "leaf"} lists (inner nodes by
    index, the root 0; a child below 0 is the leaf ~child)."""
    nodes = max([len(t["feature"]) for t in trees] + [1])
    if nodes > MAX_INNER_NODES:
        raise ValueError(f"a tree of {nodes} inner nodes (at most {MAX_INNER_NODES})")
    feature = np.zeros((len(trees), nodes), dtype=np.int64)
    threshold = np.zeros((len(trees), nodes), dtype=np.float64)
    table = np.zeros((len(trees), 1 << nodes), dtype=np.float64)
    patterns = np.arange(1 << nodes)
    for k, t in enumerate(trees):
        n = len(t["feature"])
        feature[k, :n], threshold[k, :n] = t["feature"], t["threshold"]
        table[k] = [t["leaf"][~_leaf_of(t, int(b))] for b in patterns]
    return Correction(feature, threshold, table)


def _leaf_of(tree: dict, bits: int) -> int:
    """The child (below 0: a leaf) a row reaches whose decision at inner node j is bit j of `bits`."""
    node = 0 if tree["feature"] else -1
    while node >= 0:
        node = tree["left"][node] if bits >> node & 1 else tree["right"][node]
    return node


@lru_cache(maxsize=4)
def load_correction(path: Path = TREES_FILE) -> Correction:
    """The fitted trees (the file names the features its trees read; a mismatch is an error)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if data["features"] != list(FEATURES):
        raise ValueError(f"{path}: trees over {data['features']}, the model reads {list(FEATURES)}")
    return from_trees(data["trees"])
