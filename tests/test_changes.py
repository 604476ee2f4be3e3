"""A change of mind across messages replaces the earlier value of its kind, and only with a cue."""
from __future__ import annotations

import pytest

from grounding.changes import replaced_words, says_a_change, value_words
from starter.people.facts import conversation_facts, understood
from starter.people.words import query_words, taken_back
from tests.test_moves import said


@pytest.mark.parametrize("earlier,later,gone", [
    ("my husband needs winter shoes, dark brown", "never mind, he wants light blue", {"dark", "brown"}),
    ("tan or brown", "eh actually charcoal grey goes with more of my stuff", {"tan", "brown"}),
    ("Something silky, like satin.", "Hmm, changed my mind, cotton is more breathable.", {"satin"}),
    ("skinny fit", "nah relaxed fit actually", {"skinny"}),
    ("lace up oxfords", "hmm actually slip on loafers would be easier", {"lace", "up"}),
    ("black pls", "changed my mind, a light apricot shade instead", {"black"}),
    # "khaki pants" are khakis: a change of colour keeps the garment, and takes back a khaki colour.
    ("khaki pants for work, tan ones", "hmm no changed my mind, yellow", {"tan"}),
    ("a khaki jacket", "hmm no changed my mind, yellow", {"khaki"}),
])
def test_a_change_of_mind_replaces_the_earlier_value_of_its_kind(earlier: str, later: str, gone: set[str]) -> None:
    assert replaced_words(earlier, later) == gone


@pytest.mark.parametrize("earlier,later,gone", [
    ("black sneakers", "with a white sole", set()),                          # no cue: a second colour adds
    ("womens combat boots, brown suede", "actually, size 8", set()),          # a cue, no value of those kinds
    ("a light hoodie", "actually navy please", set()),                      # "light" alone is no shade
    ("black or navy", "sorry, black is better", {"navy"}),                  # a value said again stays
])
def test_only_a_cue_and_a_value_of_the_kind_replace(earlier: str, later: str, gone: set[str]) -> None:
    assert replaced_words(earlier, later) == gone


@pytest.mark.parametrize("earlier,later,gone", [
    ("womens tunic top, solid color", "hmm actually a floral print would be nicer", {"solid"}),
    ("want a plain tunic top for me", "actually one w a graphic would be more fun", {"plain"}),
    ("a swimsuit for my wife, solid black", "ok she changed her mind, she wants a boho floral one",
     {"solid", "black"}),
    ("Something in pink stripes.", "Hmm, I've changed my mind, leopard print instead.", {"pink", "stripes"}),
    ("red plaid would be cute", "hmm actually a charcoal grey plaid instead", {"red"}),
    ("a plain black tee", "actually a printed one in black", {"plain"}),     # the colour said again stays
    ("a plain black tee", "sorry, navy", {"black"}),                          # no new print: the look stays
])
def test_a_print_is_a_kind_of_value_and_a_plain_look_takes_its_colour(earlier: str, later: str,
                                                                      gone: set[str]) -> None:
    assert replaced_words(earlier, later) == gone


def test_the_kinds_of_values() -> None:
    assert value_words("dark brown suede, slim fit") == {"colour": {"dark", "brown"}, "material": {"suede"},
                                                         "style:fit": {"slim", "fit"}}
    assert says_a_change("oops, I meant") and not says_a_change("in navy please")
    assert says_a_change("scratch that, navy") and not says_a_change("no tags, they scratch")


def test_a_replaced_value_stops_counting_for_and_is_not_ruled_out() -> None:
    readings = said("winter boots for my husband, dark brown", "never mind, he wants light blue")
    words = query_words(readings)
    assert "brown" not in words and "blue" in words and "boots" in words
    assert taken_back(readings)[0] == {"dark", "brown"} and taken_back(readings)[1] == frozenset()
    facts = conversation_facts(readings)
    assert "brown" not in facts.negated                 # replaced, not ruled out: it does not count against
    assert "brown → blue" in understood(readings, facts)
