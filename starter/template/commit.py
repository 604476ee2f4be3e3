"""Choose how many products to show.

A product shown at rank k locks MRR at 1/k if it is the target, and a turn
costs 0.02 TechnicalScore, so while a question can still separate the
candidates only the best one is shown (it costs nothing if wrong, and being
wrong proves it is not the target).  For candidates no question can separate,
or from the insurance turn on, a small finite-horizon dynamic programme over
the remaining turns chooses the list length: it trades rank now against
turns later, and never lets the session end with probability mass unshown.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from contest.rules import MAX_TURNS, TOP_K, hit_reward


@dataclass(frozen=True)
class CommitDecision:
    count: int
    reason: str
    expected_value: float


# The most candidates a plan can show (TOP_K on each turn): `decide` reads no probability beyond them.
HORIZON_ITEMS = TOP_K * MAX_TURNS
# hit_reward(k, t) for every turn t and rank k, computed once.
_REWARDS = [[0.0] + [hit_reward(k, t) for k in range(1, TOP_K + 1)] for t in range(MAX_TURNS + 1)]
_REWARD_ROWS = np.asarray([row[1:] for row in _REWARDS], dtype=np.float64)      # [t][k - 1]


def horizon_plan(probs: list[float], turn: int) -> tuple[int, float]:
    """(items to show now, expected value) maximising the remaining turns' score.

    `probs` are the candidates' probabilities in the order they would be shown.  Over arrays, every
    start position of a turn at once, with the scalar programme's floats and its choice rule (the
    first k whose value beats the best so far by more than 1e-12, so near-ties go to the shorter list),
    k by k.
    """
    turns_left = MAX_TURNS - turn + 1
    n = min(len(probs), TOP_K * turns_left)
    if n == 0 or turns_left <= 0:
        return 0, 0.0
    p = np.zeros(n + TOP_K, dtype=np.float64)
    p[:n] = probs[:n]
    at = np.arange(n)[:, None] + np.arange(TOP_K)[None, :]      # k items from i: the items i .. i + k - 1
    shown = p[at]
    fits = at < n
    # value[tau][i]: the best value of showing items i.. with tau turns left; 0 past the last item.
    nxt = np.zeros(n + TOP_K + 1, dtype=np.float64)
    first_k = 1
    for tau in range(1, turns_left + 1):
        # Showing k items now: the first k shown at ranks 1..k (added in rank order), then the plan from i + k.
        values = np.cumsum(shown * _REWARD_ROWS[MAX_TURNS - tau + 1], axis=1) + nxt[at + 1]
        best_v = np.full(n, -1.0)
        best_k = np.ones(n, dtype=np.int64)
        for j in range(TOP_K):
            better = fits[:, j] & (values[:, j] > best_v + 1e-12)
            best_v = np.where(better, values[:, j], best_v)
            best_k = np.where(better, j + 1, best_k)
        nxt = np.zeros(n + TOP_K + 1, dtype=np.float64)
        nxt[:n] = best_v
        first_k = int(best_k[0])
    return first_k, float(nxt[0])


def decide(probs: list[float], turn: int, can_separate: bool, pre_override: bool,
           insurance_turn: int) -> CommitDecision:
    """The list length for this turn, and why."""
    if not probs:
        return CommitDecision(0, "no candidate", 0.0)
    if pre_override:
        return CommitDecision(min(TOP_K, len(probs)), "override expected: hits before it do not count", 0.0)
    if turn >= MAX_TURNS:
        return CommitDecision(min(TOP_K, len(probs)), "last turn: full list", 0.0)
    if can_separate and turn < insurance_turn:
        return CommitDecision(1, "a question can still separate the candidates: show only the best",
                              probs[0] * hit_reward(1, turn))
    k, value = horizon_plan(probs, turn)
    why = "horizon DP over inseparable candidates" if turn < insurance_turn else "insurance turn: horizon DP"
    return CommitDecision(max(1, k), why, round(value, 6))
