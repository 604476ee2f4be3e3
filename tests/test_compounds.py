"""A compound the shopper writes one way reaches listings that write it another ("t shirt" and "Tshirt")."""
from __future__ import annotations

import pytest

from grounding.compounds import MIN_LISTINGS, compound_words
from starter.people.words import query_words

# How many listings write each form, as `CatalogIndex.listing_df` answers (a phrase: words one after the other).
_LISTED = {"tshirt": 40, "tshirts": 5, "t shirt": 900, "crewneck": 1200, "crew neck": 130, "v neck": 400,
           "vneck": 2, "neck": 3000, "shirt": 5000, "sleepshirts": 30, "wheel": 19, "w heel": 0, "gold": 800,
           "g old": 0, "everyday": 2000, "tanktops": 31, "tanktop": MIN_LISTINGS - 1, "theshirt": 50,
           "teeshirt": 10}


def _listed(words: str) -> int:
    return _LISTED.get(words, 0)


@pytest.mark.parametrize("text,other", [
    ("a tee shirt", {"teeshirt"}),
    ("crew neck sweater", {"crewneck"}), ("plaid sleep shirts for my dad", {"sleepshirts"}),
    ("every day wear", {"everyday"}), ("a tank top", {"tanktops"}),
    ("need a tshirt", {"shirt"}), ("basic vneck tees", {"neck"}),
])
def test_the_listings_other_spelling_joins(text: str, other: set[str]) -> None:
    assert compound_words(text, frozenset(), _listed) == other


@pytest.mark.parametrize("text", [
    "gold hoops w heel",          # "w" is "with": the listings never write "w heel"
    "gold hoops",                 # a word that merely starts with a letter of a compound
    "the shirt I had",            # a stop word glued on is no compound
    "a size 10 shirt",            # numbers are no parts
    "crewneck sweater",           # said as the listings mostly write it: nothing to add
    "mens graphic t shirt",       # the listings write "T-Shirt" (900) far more than "Tshirt" (40)
])
def test_no_compound_where_the_listings_write_none(text: str) -> None:
    assert compound_words(text, frozenset(), _listed) == frozenset()


def test_a_joined_form_counts_only_as_the_listings_usual_spelling() -> None:
    """A word added beside those said weighs as much again: the rare glued spelling would favour its few."""
    listed = {**_LISTED, "crewneck": 100}
    assert compound_words("crew neck sweater", frozenset(), lambda w: listed.get(w, 0)) == frozenset()


def test_a_letter_glued_on_splits_only_where_the_listings_write_it_apart_as_often() -> None:
    """"vneck" is the listings' "V-Neck" (400 apart, 2 glued); "tshirt" theirs too (900 apart, 40 glued);
    a glued form the listings use more than the parted one is their own word."""
    assert compound_words("vneck", frozenset(), _listed) == {"neck"}
    listed = {**_LISTED, "tshirt": 1000}
    assert compound_words("tshirt", frozenset(), lambda w: listed.get(w, 0)) == frozenset()


def test_a_compound_ruled_out_brings_nothing() -> None:
    assert compound_words("not a t-shirt, a blouse", frozenset({"t-shirt"}), _listed) == frozenset()
    assert compound_words("no crew neck", frozenset({"crew"}), _listed) == frozenset()


def test_the_other_spelling_joins_the_query(proxy_agent) -> None:
    """On the proxy catalog, whose listings mostly write "Crewneck" and "T-Shirt"."""
    index = proxy_agent.index
    assert index.listing_df("crewneck") > index.listing_df("crew neck") >= MIN_LISTINGS
    assert index.listing_df("t shirt") > index.listing_df("tshirt") >= MIN_LISTINGS
    proxy_agent.reset("compound", {})
    proxy_agent.respond("compound", "a crew neck tshirt for my husband", 1, 10)
    words = query_words(proxy_agent.sessions["compound"].readings)
    assert {"crew", "neck", "crewneck", "tshirt", "shirt"} <= set(words)


def test_a_compound_taken_back_takes_its_other_spelling(proxy_agent) -> None:
    """"crew neck" brings the listings' "crewneck"; "v neck, not crew" later takes both back."""
    proxy_agent.reset("compound", {})
    proxy_agent.respond("compound", "a pack of crew neck sweaters for my daughter", 1, 10)
    assert "crewneck" in query_words(proxy_agent.sessions["compound"].readings)
    proxy_agent.respond("compound", "sorry, she says v neck, not crew", 2, 10)
    words = query_words(proxy_agent.sessions["compound"].readings)
    assert "crewneck" not in words and "crew" not in words and "neck" in words
