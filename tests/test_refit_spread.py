"""The refit spread (`scripts.refit_spread`): which halves form which group, a bootstrap that keeps a card's turns
together and does not depend on the order cards are read in, a bag that scores the mean of its fits, and
training rows that leave out the cards a bootstrap drew no times."""
from __future__ import annotations

import numpy as np

from scripts import fit_correction, people_replay, refit_spread
from scripts.people_replay import Session, Turn
from starter.people.correction import from_trees
from starter.people.facts import Facts
from starter.people.features import FEATURES, Pool
from starter.people.ranking import load_weights
from starter.settings import PeopleSettings


def test_halves_fall_into_their_groups() -> None:
    assert [people_replay.half_group(n) for n in ("tune", "longtail2_tune", "tersep_tune", "scripts3_tune")] == \
        ["tune"] * 4
    assert [people_replay.half_group(n) for n in ("confirm", "terse_confirm", "scripts2_confirm")] == ["confirm"] * 3
    assert [people_replay.half_group(n) for n in ("longtail4_tune", "scripts4_confirm")] == ["fourth wave"] * 2
    assert [people_replay.half_group(n) for n in ("terse5_tune", "scripts5_confirm")] == ["fifth wave"] * 2
    assert [people_replay.half_group(n) for n in ("longtail7_tune", "terse6_confirm")] == ["seventh wave", "sixth wave"]
    assert [people_replay.half_group(n) for n in ("longtail8_tune", "scripts8_confirm")] == ["eighth wave"] * 2
    assert [people_replay.half_group(n) for n in ("terse9_tune", "longtail9_confirm")] == ["ninth wave"] * 2
    assert [people_replay.half_group(n) for n in ("scripts10_tune", "terse10_confirm")] == ["tenth wave"] * 2
    assert [people_replay.half_group(n) for n in ("wording2", "wording3")] == ["other"] * 2


def test_a_half_is_grouped_as_tuned_exactly_when_the_fit_reads_it() -> None:
    """A wave added to the cards but not to the fit must not be counted among the tune halves (nor its confirm
    half among the confirm halves of fitted sets)."""
    from scripts.fit_people import TUNE_SETS
    from scripts.persona_split import HALVED_SETS, half_name
    for card_set in HALVED_SETS:
        tune, confirm = half_name(card_set, "tune"), half_name(card_set, "confirm")
        fitted = tune in TUNE_SETS
        assert (people_replay.half_group(tune) == "tune") is fitted, tune
        assert (people_replay.half_group(confirm) == "confirm") is fitted, confirm


def test_the_bootstrap_draws_per_card_whatever_the_order() -> None:
    ids = [f"card_{k:03d}" for k in range(400)]
    assert refit_spread.multipliers(ids, 0) == [1.0] * len(ids)
    drawn = refit_spread.multipliers(ids, 3)
    assert all(m >= 0 and m == int(m) for m in drawn)
    assert 0 < drawn.count(0.0) < len(ids) and 0.8 < np.mean(drawn) < 1.2
    reordered = dict(zip(ids[::-1], refit_spread.multipliers(ids[::-1], 3)))
    assert [reordered[i] for i in ids] == drawn
    assert refit_spread.multipliers(ids, 4) != drawn


def _tree(feature: int, threshold: float, low: float, high: float) -> dict:
    return {"feature": [feature], "threshold": [threshold], "left": [-1], "right": [-2], "leaf": [low, high]}


def test_the_bag_scores_the_mean_of_its_fits() -> None:
    fits = [[_tree(0, 0.5, -1.0, 2.0), _tree(1, 0.2, 0.5, 0.0)], [_tree(1, 0.7, 3.0, -3.0)], []]
    rows = np.random.default_rng(5).random((50, 2))
    mean = np.mean([from_trees(f).score(rows) for f in fits], axis=0)
    np.testing.assert_allclose(from_trees(refit_spread.bagged(fits)).score(rows), mean, rtol=0, atol=1e-12)


def _session(sample_id: str, target: int, ids: list[int]) -> Session:
    features = np.random.default_rng(target).random((len(ids), len(FEATURES)))
    facts = Facts(audiences=frozenset(), negated=frozenset(), budget=None)
    turn = Turn(1, Pool(np.asarray(ids, dtype=np.int64), features, {}), facts)
    return Session(sample_id, target, [turn, Turn(2, shown=[ids[0]])])


def test_training_rows_leave_out_cards_drawn_no_times_and_pools_without_the_target() -> None:
    sessions = [_session("a", 3, [1, 2, 3]), _session("b", 7, [5, 7]), _session("c", 9, [1, 2])]
    x, labels, groups, init, rows = fit_correction.session_rows(None, sessions, load_weights(), PeopleSettings(),
                                                                [2.0, 0.0, 1.0])
    assert groups == [3] and labels.tolist() == [0.0, 0.0, 1.0] and rows.tolist() == [2.0, 2.0, 2.0]
    np.testing.assert_allclose(init, sessions[0].turns[0].pool.features @ load_weights())
    assert x.shape == (3, len(FEATURES))


def test_a_trial_configuration_names_only_parameters_the_fit_has() -> None:
    """"--param min_data_in_leaf=400" replaces the fit's value (as a number); a key the fit does not set (a slip
    LightGBM would ignore without a word) or a value that is no number is refused."""
    assert refit_spread.parse_params(["min_data_in_leaf=400", "learning_rate=0.025"]) == {
        "min_data_in_leaf": 400, "learning_rate": 0.025}
    for bad in (["min_data_in_lef=400"], ["learning_rate"], ["num_leaves=many"]):
        try:
            refit_spread.parse_params(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad} was accepted")
