"""Phrases: words a person says one right after the other ("tank top") count for a product that holds them
so, and not for one that holds the same words apart."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from contest.jsonl import read_jsonl
from grounding.words import tokens
from starter.agent import Agent
from starter.index.catalog import CatalogIndex
from starter.index.phrases import PhraseRows
from starter.people.facts import conversation_facts
from starter.people.features import COLUMN
from starter.people.ranking import candidate_features
from starter.people.words import message_pairs
from starter.settings import SETTINGS
from tests.conftest import CATS_BOOTS, product, write_rows

SHELF = ["Clothing, Shoes & Jewelry", "Women", "Clothing", "Tops, Tees & Blouses", "Tanks & Camis"]
ROWS = [
    product("P1", "Racerback tank top for running", ["Breathable mesh", "Quick dry"], SHELF, 900),
    # The same words, apart: a top whose bullet mentions a tank (of water), and a tank called a "tank cami top".
    product("P2", "Cropped top for the gym", ["Fits a tank of water bottle holder", "Soft"], SHELF, 900),
    product("P3", "Tank cami top, lace trim", ["Stretchy", "Soft"], SHELF, 900),
    product("P4", "Striped Tank-Tops, 2 pack", ["Cotton", "Soft"], SHELF, 100),
    product("P5", 'Odd "quoted" tank', ["Cotton"], SHELF, 10),
] + [product(f"B{k}", f"Leather boot {colour}", ["Rubber sole"], CATS_BOOTS, 50)     # no word of the tops
     for k, colour in enumerate(["brown", "black", "tan", "grey", "red", "navy"])]


@pytest.fixture()
def agent(tmp_path: Path) -> Agent:
    return Agent(str(write_rows(tmp_path / "catalog.jsonl", ROWS)))


def _read(agent: Agent, sid: str, *texts: str):
    agent.reset(sid, {})
    for turn, text in enumerate(texts, 1):
        agent.respond(sid, text, turn, 10)
    return agent.sessions[sid].readings


@pytest.mark.parametrize("text,pairs", [
    ("need a tank top for running", [("tank", "top")]),
    ("comfy slip on shoes", [("comfy", "slip")]),               # "on" is no content word: no pair across it
    ("black black shoes", [("black", "shoes")]),
    ("not a lace tank top", [("tank", "top")]),                 # a ruled-out word makes no pair
    ("hello there", []),
])
def test_a_message_pairs_content_words_said_one_after_the_other(agent: Agent, text: str, pairs) -> None:
    assert message_pairs(_read(agent, "s", text)[-1]) == pairs


def test_a_phrase_is_held_at_consecutive_positions_of_one_field_stemmed(small_catalog: Path, tmp_path: Path) -> None:
    index = CatalogIndex(write_rows(tmp_path / "c.jsonl", ROWS), SETTINGS.index)
    held = index.phrases.rows(("tank", "tops"))
    assert [index.products[i].pid for i in held] == ["P1", "P4"]      # "tank top", "Tank-Tops"
    assert index.phrases.rows(("tank", "tops")) is held                          # memoised
    assert len(index.phrases.rows(('"quoted', "tank"))) == 1                    # quotes are no query syntax
    assert len(index.phrases.rows(("top", "tank"))) == 0                        # order matters


def test_the_phrase_feature_is_the_share_of_pairs_a_candidate_holds(agent: Agent) -> None:
    readings = _read(agent, "f", "a tank top", "something soft and quick dry")
    facts = conversation_facts(readings, agent.pipeline.people.brands, [])
    pool = candidate_features(agent.index, readings, facts, SETTINGS.people, agent.pipeline.people.brands)
    share = {agent.index.products[i].pid: float(v)
             for i, v in zip(pool.ids.tolist(), pool.features[:, COLUMN["phrases"]])}
    # Pairs said: ("tank", "top"), ("quick", "dry"); P1 holds both, P4 the first, P2 and P3 the words apart.
    assert share["P1"] == 1.0 and share["P4"] == 0.5
    assert share["P2"] == 0.0 and share["P3"] == 0.0
    assert np.all(pool.features[:, COLUMN["phrases"]] <= 1.0)


def test_every_product_a_phrase_finds_holds_its_words_in_order(proxy_agent, proxy_catalog: Path) -> None:
    index = proxy_agent.index
    sampled = {}
    for pair in [("tank", "top"), ("rain", "boots"), ("one", "piece")]:
        found = index.phrases.rows(pair)
        assert len(found) > 10
        sampled.update({index.products[i].pid: pair for i in found[:: max(1, len(found) // 20)].tolist()})
    rows = [row for row in read_jsonl(proxy_catalog) if row["parent_asin"] in sampled]
    assert len(rows) == len(sampled)
    for row in rows:
        a, b = sampled[row["parent_asin"]]
        fields = [row.get("title") or "", *(row.get("features") or []), *(row.get("description") or []),
                  " ".join(row.get("categories") or []), json.dumps(row.get("details") or {})]
        words = [tokens(f) for f in fields]
        assert any(x.startswith(a[:4]) and y.startswith(b[:4]) for w in words for x, y in zip(w, w[1:])), row["title"]


def test_the_phrase_memo_holds_at_most_its_rowids_and_drops_the_least_recently_used(tmp_path: Path) -> None:
    index = CatalogIndex(write_rows(tmp_path / "c.jsonl", ROWS), SETTINGS.index)
    memo = PhraseRows(index.db, memo_rows=4)
    tank_top = memo.rows(("tank", "tops"))                  # P1, P4
    assert memo.rows(("tank", "tops")) is tank_top and memo.held == 2
    memo.rows(("soft",))                                    # P2, P3, P4: 5 held, past the bound
    assert memo.held == 3 and memo.rows(("tank", "tops")) is not tank_top
    assert memo.held == 2 and len(memo.rows(("soft",))) == 3     # the older entry went each time
