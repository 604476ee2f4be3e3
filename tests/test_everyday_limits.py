"""Everyday ways of saying a price limit, a part not wanted and a wearer, as a phone shopper types them ("30 max",
"skip anything with a hood", "for the missus"), read by the shared fact readers (`grounding.budget`,
`grounding.negation`, `grounding.audience`) and seen in a conversation's facts and query words."""
from __future__ import annotations

import pytest

from grounding.audience import audiences_said
from grounding.budget import Budget, names_price, parse_budget, qualitative_budget
from starter.people.facts import conversation_facts
from starter.people.words import query_words
from tests.test_moves import said


@pytest.mark.parametrize("text,budget", [
    ("40 max", Budget(max_price=40.0)), ("30 tops", Budget(max_price=30.0)), ("40 at most", Budget(max_price=40.0)),
    ("35 or less", Budget(max_price=35.0)), ("25 or under", Budget(max_price=25.0)), ("sub 35", Budget(max_price=35.0)),
    ("<35", Budget(max_price=35.0)), ("capped at 35", Budget(max_price=35.0)), ("budget 30", Budget(max_price=30.0)),
    ("a cap of 30", Budget(max_price=30.0)), ("at least 50", Budget(min_price=50.0)),
    ("50 minimum", Budget(min_price=50.0)), ("no less than 50", Budget(min_price=50.0)),
    ("35 give or take", Budget(around=35.0)),
])
def test_a_limit_said_in_few_words_is_a_price(text: str, budget: Budget) -> None:
    """Said alone after "anything else?", each is a budget, and its words are no words of the product."""
    assert names_price(text) and parse_budget(text) == budget
    facts = conversation_facts(said("leggings for me", text))
    assert facts.budget == budget and query_words(said("leggings for me", text)) == ["leggings"]


@pytest.mark.parametrize("text", ["2 max", "3 pairs max", "size 10 max", "a 30 min walk to work",
                                  "wool cap 4 summer", "at least 3 pockets"])
def test_a_count_a_size_or_a_duration_is_no_limit_of_price(text: str) -> None:
    assert not names_price(text)


def test_the_word_of_a_product_beside_a_limit_stays_a_word_of_the_product() -> None:
    assert query_words(said("crop tops under 30")) == ["crop", "tops"]
    assert query_words(said("pullover hoodie, nothing over 40")) == ["pullover", "hoodie"]


@pytest.mark.parametrize("text,wish", [
    ("dont want to spend a lot", "low"), ("not looking to spend a fortune", "low"), ("can't pay much", "low"),
    ("I don't mind paying a lot", None), ("i dont care if i spend a lot", None),
])
def test_not_wanting_to_spend_much_is_a_wish_for_the_cheaper(text: str, wish: str | None) -> None:
    assert qualitative_budget(text) == wish


@pytest.mark.parametrize("text,ruled_out", [
    ("skip anything with a zipper", {"zipper"}), ("i'd rather not have a zipper", {"zipper"}),
    ("allergic to wool", {"wool"}), ("nothing with wool", {"wool"}), ("not really into hoods", {"hoods"}),
    ("I don't want anything with a hood", {"hood"}),
])
def test_everyday_rejections_rule_the_word_out(text: str, ruled_out: set[str]) -> None:
    facts = conversation_facts(said("hoodie for me", text))
    assert facts.negated == ruled_out
    assert not ruled_out & set(query_words(said("hoodie for me", text)))


@pytest.mark.parametrize("text", ["no more than 40", "not over $40", "nothing over 40 bucks"])
def test_a_limit_of_price_rules_no_word_out(text: str) -> None:
    facts = conversation_facts(said("hoodie for me", text))
    assert facts.negated == frozenset() and facts.budget == Budget(max_price=40.0)


@pytest.mark.parametrize("text", ["a dress for the missus", "something for the mrs, she likes red"])
def test_the_missus_is_a_woman(text: str) -> None:
    assert audiences_said(text)[0] == {"women"}

