"""Everyday words for clothes ("undies", "pjs", "kicks") reach the listings' own words."""
from __future__ import annotations

import pytest

from grounding.slang import SLANG, slang_words
from starter.people.words import query_words


@pytest.mark.parametrize("text,meant", [
    ("toddler girl undies", {"underwear", "panties"}), ("comfy kicks 4 my bf", {"sneakers", "comfortable"}),
    ("stretchy leggings with a cushy waistband", {"stretch", "cushioned"}),
    ("flannel pjs for my wife", {"pajamas", "pajama"}), ("mens sweats", {"sweatpants"}),
    ("black boots please", set()), ("graphic tee for my husband", {"shirt"}),
    ("light ones, cute not clunky", {"lightweight"}), ("a light jacket", {"lightweight"}),
    ("a light blue jacket", set()), ("light wash jeans", set()), ("light up shoes", set()),
    ("after some wellies for my husband", {"rain", "boots"}), ("a reverse brolly, teal", {"umbrella"}),
    ("six babygrows for a newborn", {"footies"}), ("a pack of hankies for my nan", {"handkerchiefs", "handkerchief"}),
    ("a navy pocketbook for church", set()), ("a summer frock for my granddaughter", {"dress"}),
    ("denim dungarees for my grandson", set()), ("a cotton nightie", {"nightgown"}),
    ("galoshes for the school run", {"rain", "boots"}), ("a chunky cardi", {"cardigan"}),
])
def test_an_everyday_word_brings_the_listing_word(text: str, meant: set[str]) -> None:
    assert slang_words(text) == meant


def _query(agent, message: str) -> list[str]:
    """The people query after one message, as the agent reads it."""
    agent.reset("slang", {})
    agent.respond("slang", message, 1, 10)
    return query_words(agent.sessions["slang"].readings)


def test_the_listing_words_join_the_query_beside_the_shoppers(proxy_agent) -> None:
    words = _query(proxy_agent, "undies for my toddler daughter")
    assert "undies" in words and {"underwear", "panties"} <= set(words)


def test_a_ruled_out_everyday_word_brings_nothing(proxy_agent) -> None:
    assert slang_words("no pjs, a robe", frozenset({"pjs"})) == frozenset()
    words = _query(proxy_agent, "no pjs, a robe for my wife")
    assert "pajamas" not in words and "robe" in words


def test_every_listing_word_is_one_the_catalog_titles_use(proxy_agent) -> None:
    """A listing word no title or category path uses would bring nothing to find."""
    from starter.people.pool import TYPE_FIELDS
    index = proxy_agent.index
    for said_word, meant in SLANG.items():
        assert all(index.fulltext_coverage([m], [TYPE_FIELDS])[0].any() for m in meant), (said_word, meant)


def test_chat_shorthand_is_no_word_of_the_product(proxy_agent) -> None:
    """"smth", "ngl", "bc", "asap" say nothing of the product, and no slip makes "smth" the store "Smith"."""
    assert _query(proxy_agent, "need smth warm asap bc its freezing ngl, a hoodie tho") == ["warm", "freezing", "hoodie"]
