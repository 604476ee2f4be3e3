"""The people path's candidate pool (starter/people/pool.py): products that fit the facts said join it."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from grounding.budget import Budget
from starter.index.catalog import CatalogIndex
from starter.people.facts import budget_fits, budget_misfit, conversation_facts
from starter.people.pool import FactFit, candidate_pool
from starter.people.words import query_words
from starter.reading.parse import parse_message
from starter.reading.understand import Reading
from starter.settings import SETTINGS
from tests.conftest import product, write_rows

CATS_BRIEFS_W = ["Clothing, Shoes & Jewelry", "Women", "Clothing", "Lingerie, Sleep & Lounge", "Panties", "Briefs"]
CATS_BRIEFS_B = ["Clothing, Shoes & Jewelry", "Boys", "Clothing", "Underwear", "Briefs"]
# Women's briefs whose titles say every word the shopper will say, and a boy's brief that says fewer of them.
BRIEFS = [product(f"W{k}", f"Women's basic everyday cotton briefs soft pack {k}", ["Cotton", "Basic"],
                  CATS_BRIEFS_W, 900 - k, 10.0 + k) for k in range(6)] + [
    product("B0", "Boys' briefs", ["Cotton"], CATS_BRIEFS_B, 40, 10.99),
    product("B1", "Boys' basic cotton briefs, premium", ["Cotton"], CATS_BRIEFS_B, 30, 45.0),
]
NARROW = dataclasses.replace(SETTINGS.people, people_candidates=3, people_type_candidates=1, people_fact_candidates=1)


@pytest.fixture()
def briefs_index(tmp_path: Path) -> CatalogIndex:
    return CatalogIndex(write_rows(tmp_path / "catalog.jsonl", BRIEFS), SETTINGS.index)


def pool_pids(index: CatalogIndex, messages: list[str], cfg) -> list[str]:
    readings = [Reading.of(parse_message(m, t)) for t, m in enumerate(messages, 1)]
    ids, _, _ = candidate_pool(index, query_words(readings), conversation_facts(readings), cfg, [], FactFit(index))
    return [index.products[i].pid for i in ids.tolist()]


def test_a_product_that_fits_who_and_the_budget_joins_a_pool_of_better_worded_ones(briefs_index) -> None:
    said = ["basic everyday cotton briefs soft for my boy, around 10 dollars"]
    without = pool_pids(briefs_index, said, dataclasses.replace(NARROW, people_fact_candidates=0))
    assert "B0" not in without and len(without) == 3
    with_facts = pool_pids(briefs_index, said, NARROW)
    assert with_facts[:len(without)] == without            # the facts only add candidates, after the others
    assert "B0" in with_facts and "B1" not in with_facts   # $45 is far off "around 10"


def test_nothing_joins_when_no_fact_is_said(briefs_index) -> None:
    said = ["basic everyday cotton briefs soft"]
    assert pool_pids(briefs_index, said, NARROW) == pool_pids(
        briefs_index, said, dataclasses.replace(NARROW, people_fact_candidates=0))


def test_the_mask_keeps_only_products_for_the_wearer_named_and_inside_the_budget(briefs_index) -> None:
    readings = [Reading.of(parse_message("briefs for my boy under 20", 1))]
    facts = conversation_facts(readings)
    mask = FactFit(briefs_index).mask(facts, SETTINGS.people)
    kept = {briefs_index.products[i].pid for i in np.flatnonzero(mask)}
    assert kept == {"B0"}
    assert FactFit(briefs_index).mask(conversation_facts([Reading.of(parse_message("briefs", 1))]),
                                      SETTINGS.people) is None


@pytest.mark.parametrize("budget", [Budget(max_price=40.0), Budget(min_price=25.0), Budget(around=30.0),
                                    Budget(max_price=40.0, min_price=20.0, firm=True), Budget(around=8.0, firm=True)])
def test_the_array_budget_test_agrees_with_the_misfit_of_each_price(budget: Budget) -> None:
    prices = np.array([np.nan, 0.0, 1.0, 5.0, 7.9, 8.0, 17.9, 18.0, 22.0, 24.0, 25.0, 30.0, 37.5, 40.0, 44.0,
                       44.1, 60.0, 120.0])
    expected = [budget_misfit(None if np.isnan(p) else float(p), budget, SETTINGS.people)[:2] == (0.0, 0.0)
                for p in prices]
    assert budget_fits(prices, budget, SETTINGS.people).tolist() == expected
