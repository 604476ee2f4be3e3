"""A part said absent names the products that lack it: "no tags" asks for the tagless ones."""
from __future__ import annotations

from pathlib import Path

import pytest

from grounding.privative import privative_words
from starter.agent import Agent
from starter.people.words import query_words
from tests.conftest import product, write_rows

CATALOG_WORDS = frozenset("tagless sleeveless seamless wireless strapless laceless backless".split())


def absent(text: str, rejected: str) -> frozenset[str]:
    return privative_words(text.lower(), frozenset(rejected.split()), CATALOG_WORDS.__contains__)


@pytest.mark.parametrize("text,rejected,forms", [
    ("no tags, they scratch", "tags", {"tagless"}), ("No tag please", "tag", {"tagless"}),
    ("no sleeves", "sleeves", {"sleeveless"}), ("without any laces", "laces", {"laceless"}),
    ("no underwire", "underwire", {"wireless"}), ("No straps, it's for an off the shoulder top.", "straps",
                                                  {"strapless"}),
    ("no seams so nothing shows", "seams", {"seamless"}),
])
def test_a_part_said_absent_gives_the_catalogs_word_for_lacking_it(text: str, rejected: str, forms: set) -> None:
    assert absent(text, rejected) == forms


@pytest.mark.parametrize("text,rejected", [
    ("no open back", "open"),                    # the part goes on: an open back is what is ruled out
    ("no long sleeves", "long"), ("no shoulder strap", "shoulder"), ("no lace trim", "lace"),
    ("no lace", "lace"),                         # a fabric, not laces
    ("no pockets", "pockets"),                   # the catalog has no "pocketless"
    ("no tags", ""),                             # the reading did not reject the part
])
def test_only_a_part_that_ends_its_phrase_and_that_the_catalog_names_lacking(text: str, rejected: str) -> None:
    assert absent(text, rejected) == frozenset()


BRA_CATS = ["Clothing, Shoes & Jewelry", "Women", "Clothing", "Lingerie", "Bras", "Plunge Bras"]


def test_no_tags_ranks_the_tagless_product_first(tmp_path: Path) -> None:
    """The negation alone rules out what states tags; the "-less" word is what finds the one that lacks them,
    among products as popular that say nothing of tags."""
    rows = [product(f"P{k}", f"Women's Lace Plunge Bra style {k}", ["Underwire", "Padded cups"], BRA_CATS,
                    900 - k) for k in range(6)]
    rows.append(product("TL", "Women's Seamless Tagless Plunge Bra", ["Wire free"], BRA_CATS, 300))
    agent = Agent(str(write_rows(tmp_path / "catalog.jsonl", rows)))
    agent.reset("s", {})
    agent.respond("s", "a plunge bra for me", 1, 10)
    reply = agent.respond("s", "no tags, they scratch", 2, 10)
    assert "tagless" in query_words(agent.sessions["s"].readings)
    assert reply["recommendations"][0]["parent_asin"] == "TL"
