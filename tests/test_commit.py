"""The horizon programme over arrays is the scalar programme, float for float and choice for choice."""
from __future__ import annotations

import random

from contest.rules import MAX_TURNS, TOP_K, hit_reward
from starter.template.commit import horizon_plan

_REWARDS = [[0.0] + [hit_reward(k, t) for k in range(1, TOP_K + 1)] for t in range(MAX_TURNS + 1)]


def _scalar_plan(probs: list[float], turn: int) -> tuple[int, float]:
    """The per-position loops the arrays replaced, as they were."""
    turns_left = MAX_TURNS - turn + 1
    n = min(len(probs), TOP_K * turns_left)
    if n == 0 or turns_left <= 0:
        return 0, 0.0
    nxt = [0.0] * (n + 1)
    first_k = 1
    for tau in range(1, turns_left + 1):
        row = _REWARDS[MAX_TURNS - tau + 1]
        cur = [0.0] * (n + 1)
        choice = [0] * (n + 1)
        for i in range(n - 1, -1, -1):
            best_v, best_k, acc = -1.0, 1, 0.0
            m = min(TOP_K, n - i)
            for k, p, reward, later in zip(range(1, m + 1), probs[i:i + m], row[1:m + 1], nxt[i + 1:i + m + 1]):
                acc += p * reward
                v = acc + later
                if v > best_v + 1e-12:
                    best_v, best_k = v, k
            cur[i], choice[i] = best_v, best_k
        nxt = cur
        first_k = choice[0]
    return first_k, nxt[0]


def _probabilities(rng: random.Random, n: int) -> list[float]:
    shape = rng.choice(["flat", "peaked", "tail", "ties"])
    if shape == "flat":
        raw = [1.0] * n
    elif shape == "peaked":
        raw = [rng.random() ** 8 for _ in range(n)]
    elif shape == "tail":         # a few candidates and a tail of tiny ones: near-ties everywhere
        raw = [1.0] * rng.randint(1, 3) + [1e-13 * rng.random() for _ in range(n)]
    else:
        raw = [rng.choice([0.2, 0.2, 0.1, 1e-14]) for _ in range(n)]
    total = sum(raw)
    return sorted((x / total for x in raw), reverse=True)


def test_the_plan_over_arrays_is_the_scalar_plan() -> None:
    rng = random.Random(17)
    for _ in range(400):
        probs = _probabilities(rng, rng.randint(1, 130))
        turn = rng.randint(1, MAX_TURNS + 1)
        assert horizon_plan(probs, turn) == _scalar_plan(probs, turn), (turn, len(probs))
    assert horizon_plan([], 3) == _scalar_plan([], 3) == (0, 0.0)
