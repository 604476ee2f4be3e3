"""The people model's correction: trees evaluated with numpy exactly as LightGBM evaluates them, monotone where
the logit's signs are fixed, and a fit that can be repeated."""
from __future__ import annotations

import json

import numpy as np
import pytest

from scripts import fit_correction, fit_people
from starter.people.correction import Correction, from_trees, load_correction
from starter.people.features import FEATURES
from starter.people.ranking import load_weights


def test_numpy_trees_give_lightgbms_predictions() -> None:
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(7)
    x = rng.random((400, 5))
    x[:, 3] = np.round(x[:, 3] * 3)                     # a few distinct values, as the fact columns have
    y = (x[:, 0] + x[:, 1] * x[:, 3] > 1.2).astype(float)
    params = {**fit_correction.PARAMS, "objective": "binary", "monotone_constraints": [1, 0, 0, -1, 0]}
    booster = lightgbm.train(params, lightgbm.Dataset(x, y), num_boost_round=30)
    trees = from_trees([fit_correction.tree_lists(t["tree_structure"]) for t in booster.dump_model()["tree_info"]])
    probe = np.vstack([x, rng.random((200, 5)) * 2 - 0.5])
    np.testing.assert_allclose(trees.score(probe), booster.predict(probe, raw_score=True), rtol=0, atol=1e-12)


def test_a_tree_of_one_leaf_and_no_trees_score_every_row() -> None:
    one = from_trees([{"feature": [], "threshold": [], "left": [], "right": [], "leaf": [0.25]}])
    assert one.score(np.zeros((3, 2))).tolist() == [0.25, 0.25, 0.25]
    assert from_trees([]).score(np.ones((2, 2))).tolist() == [0.0, 0.0]
    assert one.score(np.zeros((0, 2))).shape == (0,)


def test_the_committed_trees_read_the_models_features_and_a_fact_that_agrees_never_lowers_a_candidate() -> None:
    """Raising an agreement feature (text, type, audience, colour, phrases...) of a candidate never lowers the
    whole score, logit and trees together; a ruled-out word or a budget misfit never raises it."""
    trees, w = load_correction(), load_weights()
    assert isinstance(trees, Correction) and len(trees.table) > 0
    rng = np.random.default_rng(11)
    x = rng.random((300, len(FEATURES)))
    x[:, FEATURES.index("reviews")] *= 12
    for name, sign in fit_people.SIGNS.items():
        k = FEATURES.index(name)
        for step in (0.05, 0.3, 1.0):
            more = x.copy()
            more[:, k] += step
            moved = (more @ w + trees.score(more)) - (x @ w + trees.score(x))
            assert np.all(moved * sign >= -1e-12), name


def test_the_trees_file_is_written_one_tree_a_line_and_read_back() -> None:
    trees = [{"feature": [0, 1], "threshold": [0.5, 0.25], "left": [1, -1], "right": [-2, -3],
              "leaf": [0.1, -0.2, 0.3]}]
    text = fit_correction.trees_text(trees, FEATURES, turns=2, rows=9)
    data = json.loads(text)
    assert data["trees"] == trees and data["features"] == list(FEATURES)
    assert data["data"] == {"turns": 2, "rows": 9} and text.count("\n  {") == len(trees)      # a tree a line
    got = from_trees(data["trees"]).score(np.array([[0.4, 0.2], [0.4, 0.3], [0.6, 0.0]]))
    assert got.tolist() == [0.1, 0.3, -0.2]        # left, left then right, right


def test_a_product_shown_pays_more_than_the_committed_trees_can_move_it() -> None:
    """`people_shown_penalty` is hand-set above the trees' whole range (every tree's lowest leaf against its
    highest), so a refit that widens the trees past it fails here rather than showing a product twice."""
    from starter.people.correction import TREES_FILE
    from starter.settings import SETTINGS
    trees = json.loads(TREES_FILE.read_text(encoding="utf-8"))["trees"]
    span = sum(max(t["leaf"]) for t in trees) - sum(min(t["leaf"]) for t in trees)
    assert 0 < span < SETTINGS.people.people_shown_penalty
