"""Styles: the cut a shopper says against the cut a title names, and how a conversation's later words
replace or take back a cut said before."""
from __future__ import annotations

from pathlib import Path

import pytest

from grounding.styles import style_agreement, style_mentions, styles_named
from starter.index.catalog import CatalogIndex
from starter.people.facts import conversation_facts
from starter.people.features import COLUMN
from starter.people.ranking import candidate_features
from starter.settings import SETTINGS
from tests.conftest import product, write_rows
from tests.test_moves import said


@pytest.mark.parametrize("text,style", [
    ("long sleeves please", ("sleeve", "long")), ("Long-Sleeve Tee", ("sleeve", "long")),
    ("a tank top", ("sleeve", "sleeveless")), ("V-Neck Blouse", ("neck", "v")),
    ("black turtlenecks", ("neck", "turtle")),
    ("high waisted", ("rise", "high")), ("Loafers & Slip-Ons", ("closure", "slip_on")), ("zippers", ("closure", "zip")),
    ("skinny jeans", ("leg", "skinny")), ("chunky heel boots", ("heel", "heeled")), ("oversized", ("fit", "loose")),
    ("mary janes she can slip on herself", ("closure", "slip_on")), ("easy to slip on", ("closure", "slip_on")),
])
def test_everyday_spellings_name_a_style(text: str, style: tuple[str, str]) -> None:
    assert style in styles_named(text)


@pytest.mark.parametrize("text", ["I don't want to slip on ice", "a mini backpack", "a heel counter",
                                  "soft cotton", "for my sister", "a sole that won't slip on oily floors",
                                  "it doesn't slip on grease", "non slip on any floor", "anti-slip on tiles"])
def test_words_that_name_no_cut(text: str) -> None:
    assert styles_named(text) == frozenset()


def test_a_title_agrees_with_a_cut_said_and_disagrees_with_another_cut_of_the_group() -> None:
    said_long = [("sleeve", "long")]
    assert style_agreement(styles_named("Women's Long Sleeve Maxi Dress"), said_long) == 1.0
    assert style_agreement(styles_named("Women's Sleeveless Maxi Dress"), said_long) == -1.0
    assert style_agreement(styles_named("Women's Maxi Dress"), said_long) == 0.0           # names no sleeve
    # a title naming two cuts of a group agrees with either; groups add up
    both = styles_named("Sleeveless Short Sleeve V-Neck Top")
    assert style_agreement(both, [("sleeve", "short"), ("neck", "v")]) == 2.0
    assert style_agreement(both, [("sleeve", "long"), ("neck", "v")]) == 0.0
    assert style_agreement(both, []) == 0.0


def test_a_later_cut_of_the_same_kind_replaces_the_earlier_one() -> None:
    facts = conversation_facts(said("slippers for my grandpa", "lace up kind", "actually nah, slip on loafer style"))
    assert facts.styles == {("closure", "slip_on")}
    facts = conversation_facts(said("looking for flat ankle boots", "actually I want heels, chunky with a platform"))
    assert facts.styles == {("heel", "heeled")}
    # other kinds stay: a neckline said later does not take back the sleeves
    facts = conversation_facts(said("a top with long sleeves", "v neck please"))
    assert facts.styles == {("sleeve", "long"), ("neck", "v")}


def test_a_negated_cut_is_not_said_and_a_negation_takes_an_earlier_cut_back() -> None:
    assert conversation_facts(said("a sweater, not baggy")).styles == frozenset()
    facts = conversation_facts(said("a blouse with long sleeves", "sorry, short sleeves, not long"))
    assert facts.styles == {("sleeve", "short")}
    assert [s for s, _ in style_mentions("loose fit, not baggy")] == [("fit", "loose"), ("fit", "loose")]


def test_the_style_column_reads_each_title_against_the_cut_said(tmp_path: Path) -> None:
    cats = ["Clothing, Shoes & Jewelry", "Women", "Clothing", "Dresses", "Casual"]
    rows = [product("L", "Women's Long Sleeve Summer Dress", ["Cotton"], cats, 50),
            product("S", "Women's Sleeveless Summer Dress", ["Cotton"], cats, 50),
            product("N", "Women's Summer Dress", ["Cotton"], cats, 50)]
    index = CatalogIndex(write_rows(tmp_path / "catalog.jsonl", rows), SETTINGS.index)
    readings = said("a summer dress for me, long sleeves")
    pool = candidate_features(index, readings, conversation_facts(readings), SETTINGS.people)
    style = {index.products[i].pid: pool.features[k, COLUMN["style"]] for k, i in enumerate(pool.ids.tolist())}
    assert style == {"L": 1.0, "S": -1.0, "N": 0.0}
    readings = said("a summer dress for me")                          # no cut said: the column reads nothing
    pool = candidate_features(index, readings, conversation_facts(readings), SETTINGS.people)
    assert not pool.features[:, COLUMN["style"]].any()
