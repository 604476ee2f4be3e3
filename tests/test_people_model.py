"""The people model: fitted weights whose signs hold (a fact that agrees never lowers a candidate), one
budget reader's minimum, the path that follows a person, and a fit that is reproducible."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from grounding.budget import budget_ceiling, parse_budget
from grounding.proposals import read_facts
from scripts import fit_people
from starter.people.features import FEATURES
from starter.people.ranking import WEIGHTS_FILE, load_weights
from starter.reading.kinds import SessionPath


def test_the_weights_file_names_every_feature_and_keeps_the_fitted_signs() -> None:
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    assert list(data["weights"]) == list(FEATURES) and data["fitted_by"] == "python -m scripts.fit_people"
    w = load_weights()
    for name, sign in fit_people.SIGNS.items():
        assert sign * w[FEATURES.index(name)] >= 0, name


def test_a_fact_that_agrees_never_lowers_a_candidate() -> None:
    """Raising one agreement feature of one candidate (text, type, audience, budget, colour...) never lowers
    its score, so never its rank; a ruled-out word never raises it."""
    w = load_weights()
    rng = np.random.default_rng(3)
    x = rng.random((50, len(FEATURES)))
    base = x @ w
    for name, sign in fit_people.SIGNS.items():
        more = x.copy()
        more[7, FEATURES.index(name)] += 1.0
        moved = (more @ w)[7] - base[7]
        assert moved * sign >= 0, name


def test_over_fifty_is_a_minimum_for_both_paths() -> None:
    assert parse_budget("over $50 please").min_price == 50.0
    assert read_facts("over $50 please").budget_max is None         # the template path's cap
    assert budget_ceiling("over $50 but under $80") == 80.0
    assert read_facts("under $40 please").budget_max == 40.0


def test_a_shelf_naming_opening_followed_by_free_text_ends_on_the_people_path(proxy_agent) -> None:
    agent = proxy_agent
    agent.reset("clogs", {})
    agent.respond("clogs", "just browsing clogs for now", 1, 10)
    assert agent.sessions["clogs"].path is SessionPath.TEMPLATE             # a shelf name, a browsing cue
    agent.respond("clogs", "comfy ones for working long shifts in a kitchen", 2, 10)
    assert agent.sessions["clogs"].path is SessionPath.PEOPLE
    trace = agent.trace("clogs")
    assert trace.turns[-1].state is not None and trace.turns[-1].state.path == "people"


@pytest.mark.parametrize("opening, path", [
    ("I need some clogs", SessionPath.PEOPLE), ("loafers for me", SessionPath.PEOPLE),
    ("need sneakers", SessionPath.PEOPLE),
    ("just browsing clogs for now", SessionPath.TEMPLATE), ("clogs, still making up my mind", SessionPath.TEMPLATE),
    ("need some boots, no leather", SessionPath.TEMPLATE),
])
def test_a_bare_shelf_name_opens_with_people_and_a_browsing_cue_with_the_template(proxy_agent, opening: str,
                                                                                    path: SessionPath) -> None:
    """Every browsing opening of the template shopper carries a cue ("still exploring", reworded "just
    browsing"); a short "need some clogs" without one is a person, whose details come later.  A shelf name
    with a negation stays with the template path, which rules the negated value out."""
    proxy_agent.reset("bare", {})
    proxy_agent.respond("bare", opening, 1, 10)
    assert proxy_agent.sessions["bare"].path is path


def test_every_browsing_opening_of_the_template_shopper_carries_a_cue() -> None:
    """The route takes a bare shelf name for a template shopper only with a browsing cue: every browsing
    opening that shopper writes, official or reworded (`--perturb para`), has one."""
    from contest.messages import OPEN_BROWSING
    from evaluator.perturb import PARAPHRASES
    from starter.reading.parse import parse_message
    for template in [OPEN_BROWSING, *PARAPHRASES["open_browsing"]]:
        text = template.format(category="Clogs & Mules")
        assert parse_message(text, 1).browsing_cue, text
    assert not parse_message("need some clogs", 1).browsing_cue


def test_public_and_long_tail_targets_weigh_half_the_fit_each() -> None:
    """However many cards each kind has, the cards for public-set targets and the rest each weigh half."""
    from contest.jsonl import read_jsonl
    from contest.paths import resolve_dataset
    public = [{"ground_truth": {"parent_asin": r["ground_truth"]["parent_asin"]}}
              for r in read_jsonl(resolve_dataset(None))[:3]]
    tail = [{"ground_truth": {"parent_asin": f"SYNTHETIC{k}"}} for k in range(9)]
    weights = fit_people.card_weights(public + tail)
    assert np.isclose(sum(weights[:3]), 6.0) and np.isclose(sum(weights[3:]), 6.0)
    assert len(set(weights[3:])) == 1 and weights[0] > weights[3]
    assert fit_people.card_weights(tail) == [1.0] * 9


def test_refitting_on_the_same_cards_gives_the_committed_file(tmp_path: Path) -> None:
    out = tmp_path / "weights.json"
    out.write_text(WEIGHTS_FILE.read_text(encoding="utf-8"), encoding="utf-8")
    assert fit_people.main(["--check", "--out", str(out)]) == 0
