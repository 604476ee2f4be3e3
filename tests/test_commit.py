"""The horizon programme picks the best plan of list lengths: properties of an optimum, checked on random
probability lists with near-ties (no copy of an older implementation)."""
from __future__ import annotations

import random

import pytest

from contest.rules import MAX_TURNS, TOP_K, hit_reward
from starter.template.commit import decide, horizon_plan


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


def _fixed_policy_value(probs: list[float], turn: int, k: int) -> float:
    """The expected score of showing the next k candidates on every remaining turn."""
    value = 0.0
    for j, p in enumerate(probs):
        t = turn + j // k
        if t > MAX_TURNS:
            break
        value += p * hit_reward(j % k + 1, t)
    return value


def _cases(n_cases: int = 300):
    rng = random.Random(17)
    for _ in range(n_cases):
        yield _probabilities(rng, rng.randint(1, 130)), rng.randint(1, MAX_TURNS)


def test_the_plan_is_at_least_as_good_as_any_fixed_list_length() -> None:
    """Up to the tie rule: a step takes a longer list only when it gains more than 1e-12, so a plan of ten
    turns may trail a fixed policy by ten such near-ties."""
    for probs, turn in _cases():
        _, value = horizon_plan(probs, turn)
        for k in range(1, TOP_K + 1):
            assert value >= _fixed_policy_value(probs, turn, k) - MAX_TURNS * 1e-12, (turn, k, len(probs))


def test_the_plan_never_claims_more_than_finding_everything_now() -> None:
    for probs, turn in _cases():
        _, value = horizon_plan(probs, turn)
        assert 0.0 <= value <= sum(probs) * hit_reward(1, turn) + 1e-12


def test_the_first_choice_is_consistent_with_the_rest_of_the_plan() -> None:
    """Bellman: the value is what showing the chosen k now earns plus the best plan for what is left."""
    for probs, turn in _cases(150):
        k, value = horizon_plan(probs, turn)
        assert 1 <= k <= min(TOP_K, len(probs))
        now = sum(p * hit_reward(r + 1, turn) for r, p in enumerate(probs[:k]))
        later = horizon_plan(probs[k:], turn + 1)[1] if turn < MAX_TURNS else 0.0
        assert value == pytest.approx(now + later, abs=1e-12)


def test_a_sure_candidate_is_shown_alone_and_the_last_turn_shows_everything() -> None:
    assert horizon_plan([1.0], 1)[0] == 1
    assert horizon_plan([1.0] + [0.0] * 30, 2)[0] == 1
    assert horizon_plan([], 3) == (0, 0.0)
    flat = [1 / 30] * 30
    assert horizon_plan(flat, MAX_TURNS)[0] == TOP_K
    assert decide(flat, MAX_TURNS, True, False, 8).count == TOP_K
    assert decide(flat, 2, True, False, 8).count == 1            # a question can still separate them
    assert decide(flat, 2, False, True, 8).count == TOP_K        # before an override: hits do not count
    assert decide([], 2, False, False, 8).count == 0
