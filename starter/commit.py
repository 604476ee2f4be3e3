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


def horizon_plan(probs: list[float], turn: int) -> tuple[int, float]:
    """(items to show now, expected value) maximising the remaining turns' score.

    `probs` are the candidates' probabilities in the order they would be shown.
    """
    turns_left = MAX_TURNS - turn + 1
    n = min(len(probs), TOP_K * turns_left)
    if n == 0 or turns_left <= 0:
        return 0, 0.0
    # best[tau][i]: value of showing items i.. with tau turns left (tau-th from the end).
    nxt = [0.0] * (n + 1)
    first_k = 1
    for tau in range(1, turns_left + 1):
        row = _REWARDS[MAX_TURNS - tau + 1]
        cur = [0.0] * (n + 1)
        choice = [0] * (n + 1)
        for i in range(n - 1, -1, -1):
            best_v, best_k, acc = -1.0, 1, 0.0
            m = min(TOP_K, n - i)
            # k items shown now: probs[i + k - 1] at rank k, then the plan from i + k.
            for k, p, reward, later in zip(range(1, m + 1), probs[i:i + m], row[1:m + 1], nxt[i + 1:i + m + 1]):
                acc += p * reward
                v = acc + later
                if v > best_v + 1e-12:
                    best_v, best_k = v, k
            cur[i], choice[i] = best_v, best_k
        nxt = cur
        first_k = choice[0]
    return first_k, nxt[0]


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
