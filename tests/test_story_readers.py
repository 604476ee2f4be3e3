"""Readers for shoppers who tell a story around the product: how it looks is no price ("luxury styled"), whose
wedding it is names no wearer, an everyday word is no store ("out the door"), "like 10 of them" is a count, and a
head set against something else ("not pajama sets, just the shirt") is not asked for."""
from __future__ import annotations

import pytest

from grounding.audience import shopper_audiences
from grounding.brands import BrandMatcher
from grounding.budget import parse_budget, qualitative_budget
from grounding.counts import count_of
from grounding.negation import contrasted_heads
from starter.people.facts import conversation_facts
from starter.people.words import query_words
from starter.settings import GROUNDING
from tests.test_moves import said


@pytest.mark.parametrize("text,wish", [
    ("Slim, sporty look but kind of luxury styled.", None), ("Kind of luxury looking, not a cartoon watch.", None),
    ("it looks expensive", None), ("a premium feel", None), ("high-end looking", None),
    ("something premium", "high"), ("a luxury watch for him", "high"), ("pricey is ok", "high"),
    ("not too pricey", "low"),
])
def test_how_it_looks_or_feels_is_no_wish_about_the_price(text: str, wish: str | None) -> None:
    assert qualitative_budget(text) == wish


@pytest.mark.parametrize("text,audiences", [
    ("my sister's wedding is next month!", set()), ("a dress for my sons wedding", set()),
    ("shirt for my son to wear at my sisters wedding", {"boys"}), ("for my dad's birthday", {"men"}),
    ("for my sister", {"women"}),
    ("my sister had her baby girl last week, a footed one piece", {"girls", "baby"}),
    ("my daughter just had a baby boy", {"boys", "baby"}), ("my sister has a baby", {"women", "baby"}),
])
def test_whose_wedding_it_is_names_no_wearer(text: str, audiences: set[str]) -> None:
    assert shopper_audiences(text) == audiences


def test_small_talk_about_a_wedding_keeps_the_wearer_said_before() -> None:
    facts = conversation_facts(said("a polo for my toddler son", "he's the ring bearer, up to 25",
                                    "my sister's wedding is next month!"))
    assert "women" not in facts.audiences and facts.audiences


def _stores() -> BrandMatcher:
    sizes = {"Door": 20, "Start": 15, "Hanes": 40, "Champion": 30}
    return BrandMatcher(sizes, lambda w: 0, GROUNDING, lambda w: 0)


@pytest.mark.parametrize("text,stores", [
    ("I'm always rushing out the door", []), ("black ones get lost in the pile by the door", []),
    ("so I start a new job monday", []), ("names you the champion of hide and seek", []),
    ("it's the hanes one with the cooling fabric", ["Hanes"]), ("the champion ones w/ the c logo", ["Champion"]),
    ("a Door cardigan for me", ["Door"]), ("It's the Hanes brand.", ["Hanes"]),
    ("the Door cardigans are nice, mine sits by the door.", ["Door"]),
])
def test_an_everyday_word_is_no_store_name(text: str, stores: list[str]) -> None:
    found, refused = _stores().read(text)
    assert [m.store for m in found] == stores
    assert all(r.reason for r in refused)


def test_a_store_name_used_as_an_everyday_word_is_refused_with_a_reason() -> None:
    _, refused = _stores().read("rushing out the door")
    assert [(r.store, r.reason) for r in refused] == [("Door", "an everyday noun after \"the\", not a brand")]


@pytest.mark.parametrize("text", ["a big pack, like 10 of them", "like 6 of those please"])
def test_like_ten_of_them_is_a_count_not_a_price(text: str) -> None:
    assert parse_budget(text) is None and count_of(text) is not None


def test_like_an_amount_alone_is_still_a_price() -> None:
    assert parse_budget("like 15 bucks") is not None and parse_budget("like 30") is not None


@pytest.mark.parametrize("text,negated,heads", [
    ("not pajama sets, just the shirt", {"pajama"}, {"sets"}),
    ("no shoulder strap, just handles", {"shoulder"}, {"strap"}),
    ("no full pajama set, just the pants", {"full"}, {"pajama", "set"}),
    ("not a party dress for work", {"party"}, set()),
])
def test_a_head_set_against_something_else_is_found(text: str, negated: set[str], heads: set[str]) -> None:
    assert contrasted_heads(text, negated) == heads


def test_a_head_set_against_something_else_is_not_asked_for_but_not_ruled_out() -> None:
    readings = said("sleep shirts for my son", "not pajama sets, just the shirt")
    words = query_words(readings)
    assert "sets" not in words and "shirt" in words and "pajama" not in words
    assert conversation_facts(readings).negated == {"pajama"}
    # Without a contrast, the head stays wanted: "not a party dress" still wants a dress.
    assert "dress" in query_words(said("not a party dress, something for work"))
