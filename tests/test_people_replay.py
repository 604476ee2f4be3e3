"""The offline replay of people sessions (`scripts.people_replay`): with the agent's own weights and trees it is
the agent, session by session; other weights change what it shows."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

from contest.jsonl import read_jsonl
from contest.rules import TOP_K, hit_reward
from evaluator.data import load_catalog_view
from evaluator.local_evaluator import run_session
from scripts import people_replay
from starter.people.correction import load_correction
from starter.people.ranking import PRIOR_FEATURE, load_weights

# Persona cards of three voices, and scripts: two whose override makes the agent forget its earlier lists
# (script_0113, script_0117: a replay that kept them shown found the target a turn or two earlier).
CARDS = [("confirm", 0), ("confirm", 7), ("longtail_confirm", 3), ("terse_confirm", 5), ("scripts_confirm", 2),
         ("scripts_confirm", 11), ("scripts_confirm", 56), ("scripts_confirm", 59)]


def _cards() -> list[dict]:
    return [read_jsonl(people_replay.PERSONAS / f"{name}.jsonl")[k] for name, k in CARDS]


@pytest.fixture(scope="module")
def recorded(proxy_agent) -> list[people_replay.Session]:
    """The cards' sessions, recorded once for the module and read back as a file holds them."""
    return pickle.loads(pickle.dumps(people_replay.record(proxy_agent, _cards())))


def _popularity_only(weights: np.ndarray) -> np.ndarray:
    """The fitted weights with every weight but popularity's set to 0."""
    only = np.zeros_like(weights)
    only[PRIOR_FEATURE] = weights[PRIOR_FEATURE]
    return only


def test_the_replay_with_the_agents_weights_is_the_agent(proxy_agent, proxy_catalog, recorded) -> None:
    cards, sessions = _cards(), recorded
    assert all(len(s.turns) == 10 for s in sessions)
    assert any(t.pool is not None for s in sessions for t in s.turns)
    assert any(t.counts_from > 1 for t in sessions[-1].turns + sessions[-2].turns)
    view = load_catalog_view(proxy_catalog, {c["ground_truth"]["parent_asin"] for c in cards})
    weights, trees = load_weights(), load_correction()
    for k, (card, session) in enumerate(zip(cards, sessions)):
        played = run_session(proxy_agent, card, 9000 + k, view)
        proxy_agent.close_session(f"session-{9000 + k:05d}-{card['sample_id']}")
        reward, turn, rank = people_replay.replay(proxy_agent.index, session, weights, proxy_agent.settings, trees)
        assert (turn, rank) == (played["turn"], played["rank"]), card["sample_id"]
    results = [people_replay.replay(proxy_agent.index, s, weights, proxy_agent.settings, trees) for s in sessions]
    got = people_replay.summary(results)
    assert got["sessions"] == len(cards) and 0.0 < got["score"] <= 1.0


def test_other_weights_change_the_replay(proxy_agent, recorded) -> None:
    """Popularity alone (every other weight 0) is a different ranking: some session ends elsewhere."""
    sessions = recorded
    weights = load_weights()
    only_prior = _popularity_only(weights)
    mine = [people_replay.replay(proxy_agent.index, s, weights, proxy_agent.settings) for s in sessions]
    prior = [people_replay.replay(proxy_agent.index, s, only_prior, proxy_agent.settings) for s in sessions]
    assert mine != prior
    assert people_replay.summary(mine)["score"] > people_replay.summary(prior)["score"]


def test_the_best_list_length_bounds_the_commit_rule(proxy_agent, recorded) -> None:
    """On the commit rule's own way, showing the target's whole rank at the best turn never earns less than the
    rule, and earns exactly what a hit at that turn and rank earns; under popularity alone, where the rule
    shows one product while the target already sits lower in the first ten, it earns more."""
    weights = load_weights()
    gained = False
    for w in (weights, _popularity_only(weights)):
        for s in recorded:
            rule = people_replay.replay(proxy_agent.index, s, w, proxy_agent.settings)
            best = people_replay.replay(proxy_agent.index, s, w, proxy_agent.settings, best_length=True)
            assert best[0] >= rule[0], s.sample_id
            assert best[0] == (hit_reward(best[2], best[1]) if best[1] else 0.0)
            assert best[2] is None or best[2] <= TOP_K
            gained |= best[0] > rule[0]
    assert gained


def test_turn_quality_measures_every_people_turn_and_the_fitted_weights_beat_popularity(proxy_agent,
                                                                                        recorded) -> None:
    sessions = recorded[:4]
    weights = load_weights()
    got = people_replay.turn_quality(proxy_agent.index, sessions, weights, proxy_agent.settings, turns=3)
    assert got["turns"] == sum(t.pool is not None for s in sessions for t in s.turns[:3]) > 0
    assert 0.0 <= got["first"] <= got["top10"] <= got["in_pool"] <= 1.0 and got["log_p"] < 0.0
    worse = people_replay.turn_quality(proxy_agent.index, sessions, _popularity_only(weights), proxy_agent.settings,
                                       turns=3)
    assert worse["mrr"] < got["mrr"] and worse["log_p"] < got["log_p"]
