"""Wishes relayed and said in passing ("she said silver first, now rose gold", "he'll go to 150", "fine paying 30"),
British everyday words ("my lad", "a pinny") and words a catalog's own text holds ("itchy", "hikes"), read by the
shared fact readers (`grounding.budget`, `grounding.words`, `grounding.audience`, `grounding.slang`,
`grounding.slips`)."""
from __future__ import annotations

import pytest

from grounding.audience import audiences_said
from grounding.budget import Budget, names_price, parse_budget
from grounding.slang import slang_words
from grounding.slips import held_word, slip_meant
from starter.people.facts import conversation_facts
from starter.people.words import query_words
from tests.test_moves import said


@pytest.mark.parametrize("text,budget", [
    ("she's fine paying 30", Budget(around=30.0)), ("I can pay 45", Budget(around=45.0)),
    ("we can spend 80", Budget(around=80.0)), ("ok spending 25", Budget(around=25.0)),
    ("he'll go to 150", Budget(max_price=150.0)), ("can go to 75 for a good one", Budget(max_price=75.0)),
    ("could stretch to 60", Budget(max_price=60.0)), ("spend up to 80", Budget(max_price=80.0)),
    ("spend 30 to 40 on it", Budget(max_price=40.0, min_price=30.0)),
])
def test_a_price_said_with_a_verb_of_paying_is_a_budget(text: str, budget: Budget) -> None:
    assert names_price(text) and parse_budget(text) == budget
    assert conversation_facts(said("hoodie for me", text)).budget == budget
    words = query_words(said("hoodie for me", text))
    assert "hoodie" in words and not any(w.isdigit() or w in {"paying", "pay", "spend", "go"} for w in words)


@pytest.mark.parametrize("text", ["the sizes go to 14", "I go to the gym 3 times a week"])
def test_going_somewhere_is_no_price(text: str) -> None:
    assert not names_price(text)


@pytest.mark.parametrize("text,gone,kept", [
    ("he said black first but changed his mind, tan please", {"black"}, {"tan"}),
    ("she said silver first, now she says rose gold", {"silver"}, {"rose", "gold"}),
    ("she said grey at first but now she wants blue", {"grey"}, {"blue"}),
    ("oh and hot pink, she changed her mind from black", {"black"}, {"pink"}),
])
def test_a_value_taken_back_in_the_same_message_stops_counting(text: str, gone: set[str], kept: set[str]) -> None:
    words = set(query_words(said("a bra for my wife", text)))
    assert not gone & words and kept <= words
    assert gone <= conversation_facts(said("a bra for my wife", text)).negated


@pytest.mark.parametrize("text", ["he said black, with a white sole", "she said she wants it first thing",
                                  "I was thinking blue would be nice"])
def test_a_value_said_without_a_turn_stays(text: str) -> None:
    assert not conversation_facts(said("a bra for my wife", text)).negated


@pytest.mark.parametrize("text,audiences", [
    ("my lad needs a tech suit", {"boys"}), ("a dress for my lass", {"girls"}), ("trainers for the lads", {"boys"}),
])
def test_a_lad_and_a_lass_are_children_or_grown_ups(text: str, audiences: set[str]) -> None:
    assert audiences_said(text)[0] == audiences


@pytest.mark.parametrize("text,meant", [
    ("a gilet for walks", {"vest"}), ("a pinny for baking", {"apron"}), ("a nappy bag", {"diaper"}),
    ("a rucksack for school", {"backpack"}), ("jandals for the beach", {"flip", "flops"}),
    ("a cagoule for my walks", {"rain", "jacket"}), ("a warm jumper", set()),
])
def test_british_and_antipodean_words_bring_the_listing_words(text: str, meant: set[str]) -> None:
    assert slang_words(text) == meant


def test_a_word_of_the_slang_table_is_no_slip() -> None:
    assert slip_meant("pinny", "penny", frozenset()) is None and slip_meant("nappy", "nappa", frozenset()) is None


def _df(counts: dict[str, int]):
    return lambda word: counts.get(word, 0)


@pytest.mark.parametrize("typed,meant,counts,held", [
    ("hikes", "hides", {"hikes": 3475, "hides": 900}, True),          # a letter replaced: another word of the text
    ("itchy", "ibchy", {"itchy": 2, "ibchy": 40}, True),
    ("itchy", "ibchy", {"itchy": 1, "ibchy": 40}, False),              # one product may hold a typo
    ("comfortible", "comfortable", {"comfortible": 500, "comfortable": 500}, False),   # one stem
    ("cushiony", "cushions", {"cushiony": 2, "cushions": 300}, False),  # another ending
    ("earings", "earrings", {"earings": 3616, "earrings": 900}, False),  # a letter left out
    ("jeens", "jeans", {"jeans": 900}, False),
])
def test_a_word_of_the_catalogs_text_is_no_slip_of_a_title_word(typed: str, meant: str, counts: dict[str, int],
                                                                  held: bool) -> None:
    assert held_word(typed, meant, _df(counts)) is held
    assert (slip_meant(typed, meant, frozenset(), _df(counts)) is None) is held
    assert held_word(typed, meant, None) is False


def test_an_itchy_label_is_not_the_store_of_a_similar_name(proxy_agent) -> None:
    """On the proxy catalog "itchy" is one letter from a store's name; its text holds "itchy" too."""
    proxy_agent.reset("itchy", {})
    proxy_agent.respond("itchy", "tagless undershirt, nothing itchy, no itchy label", 1, 10)
    reading = proxy_agent.sessions["itchy"].readings[-1]
    assert proxy_agent.gate.slip_of("itchy", 0.8) is None and not reading.extra_tokens - {"tagless"}
    assert "itchy" in reading.negated


@pytest.mark.parametrize("text,ruled_out,kept", [
    ("sorry meant an everyday one, not for the gym", {"gym"}, {"everyday"}),
    ("not for running, just walking", {"running"}, {"walking"}),
    ("not just for the gym", set(), {"gym"}),
])
def test_a_use_ruled_out_is_no_word_of_the_product(text: str, ruled_out: set[str], kept: set[str]) -> None:
    assert conversation_facts(said("a bra", text)).negated == ruled_out
    assert kept <= set(query_words(said("a bra", text))) and not ruled_out & set(query_words(said("a bra", text)))


@pytest.mark.parametrize("text", ["hmm actually navy, she has too much black", "too much lace on these"])
def test_too_much_of_a_thing_is_no_price(text: str) -> None:
    from grounding.budget import qualitative_budget, relative_price
    assert relative_price(text) is None and qualitative_budget(text) is None


@pytest.mark.parametrize("text", ["too much, something under 20", "those are too much", "way too much for socks"])
def test_too_much_alone_asks_for_cheaper(text: str) -> None:
    from grounding.budget import relative_price
    assert relative_price(text) == "lower"


def test_a_name_ruled_out_is_ruled_out_whole_when_its_head_names_nothing_else() -> None:
    """"flops" is (almost) only ever "flip flops" in the listings; "bra" is named alone as often as not."""
    from grounding.negation import bound_heads
    listings = {"flip flops": 398, "flops": 404, "sports bra": 98, "bra": 866, "high heels": 179, "heels": 440}

    def count(words: str) -> int:
        return listings.get(words, 0)
    assert bound_heads("slides, not flip flops", {"flip"}, count) == {"flops"}
    assert bound_heads("sandals, no flip-flops", {"flip"}, count) == {"flops"}
    assert bound_heads("not a sports bra", {"sports"}, count) == set()
    assert bound_heads("no high heels, flats", {"high"}, count) == set()


def test_not_flip_flops_asks_for_no_flops(proxy_agent) -> None:
    proxy_agent.reset("flops", {})
    proxy_agent.respond("flops", "slides for after the gym, not flip flops", 1, 10)
    readings = proxy_agent.sessions["flops"].readings
    assert {"flip", "flops"} <= set(readings[-1].negated) and "flops" not in query_words(readings)


def test_having_nothing_for_a_place_rules_nothing_out() -> None:
    facts = conversation_facts(said("slides for my son", "we have nothing for the pool deck"))
    assert facts.negated == frozenset() and "pool" in query_words(said("slides", "we have nothing for the pool deck"))


@pytest.mark.parametrize("text,budget", [
    ("Under twenty dollars would be lovely.", Budget(max_price=20.0)), ("around thirty", Budget(around=30.0)),
    ("under twenty five", Budget(max_price=25.0)), ("fifteen bucks ish", Budget(around=15.0)),
    ("Around thirty dollars, no more than thirty-five.", Budget(max_price=35.0)),
])
def test_an_amount_spelled_out_is_no_word_of_the_product(text: str, budget: Budget) -> None:
    readings = said("a hoodie", text)
    assert conversation_facts(readings).budget == budget and conversation_facts(readings).negated == frozenset()
    assert not {"twenty", "thirty", "five", "fifteen", "ish", "more"} & set(query_words(readings))


def test_a_count_spelled_out_stays_a_word_when_no_amount_is_said() -> None:
    assert {"two", "pack"} <= set(query_words(said("a two pack under twenty")))
    assert "ten" in query_words(said("ten pairs for my son"))


def test_a_word_of_the_catalogs_text_is_no_slip_of_a_cue_word() -> None:
    """"lace itches" is no "lace inches" (a cue of the length reader); "igches" still is."""
    from grounding.slips import respell_cues
    counts = {"itches": 671, "lace": 900}.get

    def df(word: str) -> int:
        return counts(word) or 0
    assert respell_cues("lace itches", known=lambda w: w == "lace", text_df=df) == "lace itches"
    assert respell_cues("bout 48 igches long", known=lambda w: False, text_df=df) == "bout 48 inches long"
    assert respell_cues("lace itches", known=lambda w: w == "lace") == "lace inches"      # without the text
