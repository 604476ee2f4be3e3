"""People: free-text sessions in a shopper's own words (starter/people/ranking.py) and the facts read from them."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from contest.persona import PersonaCustomer
from evaluator.local_evaluator import build_summary, run_session
from evaluator.data import load_catalog
from grounding.audience import product_audiences, shopper_audiences
from grounding.budget import Budget
from starter.people.facts import budget_misfit, conversation_facts
from starter.people.features import FEATURES
from starter.people.ranking import candidate_features, rank_people
from starter.people.words import query_words
from starter.reading.kinds import SessionPath
from starter.route import says_only_no_preference
from starter.agent import Agent
from starter.index.catalog import CatalogIndex
from starter.settings import SETTINGS
from starter.reading.parse import parse_message
from starter.reading.understand import Reading
from tests.conftest import CATS_BOOTS, SMALL_PRODUCTS, product, write_rows

CATS_WBOOTS = ["Clothing, Shoes & Jewelry", "Women", "Shoes", "Boots", "Ankle & Bootie"]
PEOPLE_PRODUCTS = SMALL_PRODUCTS + [
    product("W1", "Women's leather ankle bootie black", ["Leather", "Block heel", "Side zip"], CATS_WBOOTS, 650, 75.0),
    product("W2", "Women's suede ankle bootie taupe", ["Suede", "Block heel", "Side zip"], CATS_WBOOTS, 640, 45.0),
    product("M1", "Men's leather chelsea boot black", ["Leather", "Rubber sole", "Pull-on"], CATS_BOOTS, 600, 79.0),
]


@pytest.fixture()
def people_catalog(tmp_path: Path) -> Path:
    path = tmp_path / "catalog.jsonl"
    write_rows(path, PEOPLE_PRODUCTS)
    return path


def read(text: str, turn: int = 1, negated: tuple[str, ...] | None = None) -> Reading:
    r = Reading.of(parse_message(text, turn))
    return r if negated is None else dataclasses.replace(r, negated=negated)


def rank(index: CatalogIndex, readings: list[Reading], shown: set[int]):
    return rank_people(index, readings, conversation_facts(readings), shown, SETTINGS.people)


def pids(index: CatalogIndex, ranked) -> list[str]:
    return [index.products[r.idx].pid for r in ranked]


def test_audiences_of_shoppers_and_products() -> None:
    assert shopper_audiences("a gift for my husband") == {"men"}
    assert shopper_audiences("pajamas for my son, big kids sizes") == {"boys"}     # "kids" narrowed by "son"
    assert shopper_audiences("pajamas for the kids, big kids sizes") == {"boys", "girls"}
    assert shopper_audiences("something for a toddler") == {"baby"}
    assert shopper_audiences("black boots please") == frozenset()
    assert product_audiences("Women's ankle bootie", CATS_BOOTS) == {"women", "men"}
    assert product_audiences("Plain tee", ["Clothing", "Girls", "Tops"]) == {"girls"}


def test_the_query_is_cumulative_without_filler_audience_negations_budget_numbers_or_sizes() -> None:
    readings = [read("looking for black leather boots for my husband, under 80 dollars"),
                read("not suede please, size 10, wide", 2, negated=("suede",))]
    words = query_words(readings)
    assert words == ["black", "leather", "boots", "wide"]
    facts = conversation_facts(readings)
    assert facts.audiences == {"men"} and facts.negated == {"suede"} and facts.budget == Budget(max_price=80.0)


@pytest.mark.parametrize("price,budget,side", [
    (75.0, Budget(max_price=80.0), None), (95.0, Budget(max_price=80.0), 0),
    (53.99, Budget(around=50.0), None), (90.0, Budget(around=50.0), 0), (20.0, Budget(around=50.0), 1),
    (30.0, Budget(min_price=50.0), 1), (None, Budget(max_price=10.0), None),
    (90.0, Budget(qualitative="low"), 2), (20.0, Budget(qualitative="high"), 2), (20.0, Budget(qualitative="low"), None),
])
def test_budget_is_a_soft_misfit_not_a_cliff(price, budget, side) -> None:
    """Each misfit is on its own side (over, under, off the wish; the wish against a typical price of 40);
    further off costs more."""
    got = budget_misfit(price, budget, SETTINGS.people, typical=40.0)
    assert [k for k, v in enumerate(got) if v > 0] == ([] if side is None else [side])
    if side is not None:
        further = price / 1.5 if side == 1 or (side == 2 and budget.qualitative == "high") else price * 1.5
        assert budget_misfit(further, budget, SETTINGS.people, typical=40.0)[side] > got[side]


def test_facts_reorder_the_candidates(people_catalog: Path) -> None:
    index = CatalogIndex(people_catalog, SETTINGS.index)
    ranked, funnel = rank(index, [read("black leather boots for my husband")], set())
    order = pids(index, ranked)
    assert order.index("M1") < order.index("W1") and funnel["fulltext"] > 0
    ranked, _ = rank(index, [read("ankle booties for my wife, not suede", negated=("suede",))], set())
    assert pids(index, ranked)[0] == "W1"
    ranked, _ = rank(index, [read("ankle booties for my wife, under 50 bucks")], set())
    assert pids(index, ranked)[0] == "W2"
    shown = {index.by_pid["W2"]}
    ranked, _ = rank(index, [read("ankle booties for my wife, under 50 bucks")], shown)
    assert pids(index, ranked)[0] != "W2"      # shown before and the session went on: not it
    assert abs(sum(r.prob for r in ranked) - 1) < 1e-9


def test_small_talk_before_any_description_shows_popular_picks_and_asks(people_catalog: Path) -> None:
    """"hello" gets a friendly word, a valid list (called popular, not a match to a description) and the
    question of what they look for; once they describe it, the list is what fits."""
    agent = Agent(str(people_catalog))
    agent.reset("s", {})
    first = agent.respond("s", "hello", 1, 10)
    assert first["recommendations"] and first["ask_attribute"] == "other"
    assert first["message"].startswith("Hi!") and "popular" in first["message"]
    assert "looking for" in first["message"] and "describe" not in first["message"]
    second = agent.respond("s", "black leather boots for my husband", 2, 10)
    assert "describe" in second["message"] and "popular" not in second["message"]


def test_small_talk_is_answered_as_small_talk_and_changes_no_list(people_catalog: Path) -> None:
    """"how are you?" is a greeting, not a question about "how"; "what do you sell?" asks about nothing in
    particular; "bye" is a goodbye, not a product word: each gets a friendly word and adds nothing to what the
    products are matched against."""
    from starter.people.words import query_words
    agent = Agent(str(people_catalog))
    agent.reset("t", {})
    agent.respond("t", "hello", 1, 10)
    agent.respond("t", "black leather boots for my husband", 2, 10)
    said = query_words(agent.sessions["t"].readings)
    greeting = agent.respond("t", "how are you?", 3, 10)
    assert greeting["message"].startswith("Hi! Happy to help.") and "mention" not in greeting["message"]
    assert query_words(agent.sessions["t"].readings) == said
    agent.respond("t", "what do you sell?", 4, 10)
    assert query_words(agent.sessions["t"].readings) == said
    goodbye = agent.respond("t", "ok bye", 5, 10)
    assert goodbye["message"].startswith("Happy shopping!")
    assert query_words(agent.sessions["t"].readings) == said


def test_the_question_follows_what_is_not_said_and_never_repeats(people_catalog: Path) -> None:
    """The open question names things the shopper has not said yet (never one already said) every other
    turn, and no two turns in a row ask with the same sentence."""
    agent = Agent(str(people_catalog))
    agent.reset("u", {})
    messages = ["black leather boots for my husband", "comfy ones", "under 80 dollars", "pull on", "rubber sole",
                "for winter", "warm lining", "nothing else"]
    questions = []
    for turn, text in enumerate(messages, 1):
        reply = agent.respond("u", text, turn, 10)
        questions.append(reply["message"].split(". ")[-1])
    assert all(a != b for a, b in zip(questions, questions[1:]))
    named = [q for q in questions if q.startswith("Anything else you can tell me, like")]
    assert named and not any(w in q for q in named for w in ("who it's for", "a colour", "made of"))
    assert "a price range" in questions[0] or "a price range" in questions[1]
    assert not any("a price range" in q for q in questions[2:])


CATS_TOTES = ["Clothing, Shoes & Jewelry", "Women", "Handbags & Wallets", "Totes"]


def test_a_question_back_is_answered_from_what_the_products_state(tmp_path: Path) -> None:
    """"any with pockets?": a tote that says it has none does not count as one that has them (two of each
    kind, so that the answer is about a tote not shown before)."""
    path = tmp_path / "catalog.jsonl"
    rows = [product("B1", "Women's canvas tote bag", ["Open top, no pockets", "Canvas"], CATS_TOTES, 900),
            product("B3", "Women's canvas beach tote bag", ["Open top, no pockets", "Canvas"], CATS_TOTES, 500),
            product("B2", "Women's leather tote bag", ["Zip pockets inside", "Leather"], CATS_TOTES, 100),
            product("B4", "Women's leather shoulder tote bag", ["Zip pockets inside", "Leather"], CATS_TOTES, 50)]
    write_rows(path, rows)
    agent = Agent(str(path))
    agent.reset("q", {})
    agent.respond("q", "a canvas tote bag for me", 1, 10)
    reply = agent.respond("q", "do you have any with pockets?", 2, 10)
    assert [r["parent_asin"] for r in reply["recommendations"]] == ["B3"]    # the other canvas one, as said
    assert reply["message"].startswith("None of these mention pockets")
    agent.reset("r", {})
    agent.respond("r", "a leather tote bag for me", 1, 10)
    reply = agent.respond("r", "do any have lots of pockets?", 2, 10)     # how many is no detail of it
    assert [r["parent_asin"] for r in reply["recommendations"]] == ["B4"]
    assert reply["message"].startswith("Yes, this one mentions pockets.")
    agent.reset("s", {})
    agent.respond("s", "a leather tote bag for me", 1, 10)
    reply = agent.respond("s", "any with a zip pocket?", 2, 10)     # "pocket" counts the "Zip pockets inside"
    assert reply["message"].startswith("Yes, this one mentions zip pocket.")
    agent.reset("t", {})
    agent.respond("t", "a leather tote bag for me", 1, 10)
    reply = agent.respond("t", "does it come with a zip pocket?", 2, 10)      # the question is not about "come"
    assert reply["message"].startswith("Yes, this one mentions zip pocket.")


def column(index: CatalogIndex, feature: str, *messages: str) -> dict[str, float]:
    """One feature's value for every candidate of a conversation, by product id."""
    readings = [read(m, t) for t, m in enumerate(messages, 1)]
    pool = candidate_features(index, readings, conversation_facts(readings), SETTINGS.people)
    return {index.products[i].pid: pool.features[k, FEATURES.index(feature)] for k, i in enumerate(pool.ids.tolist())}


def test_a_product_also_made_for_whom_the_shopper_ruled_out_counts_neither_way(tmp_path: Path) -> None:
    cats = ["Clothing, Shoes & Jewelry", "Shoes", "Sneakers"]
    rows = [product("M", "Men's Walking Sneaker", ["Mesh"], cats, 50), product("W", "Women's Walking Sneaker",
            ["Mesh"], cats, 50), product("U", "Unisex Adults Walking Sneaker", ["Mesh"], cats, 50)]
    index = CatalogIndex(write_rows(tmp_path / "catalog.jsonl", rows), SETTINGS.index)

    assert column(index, "audience", "walking sneakers for my husband") == {"M": 1.0, "W": -1.0, "U": 1.0}
    assert column(index, "audience", "walking sneakers for my husband", "not for women") == {"M": 1.0, "W": -1.0,
                                                                                             "U": 0.0}


def test_a_shade_said_is_a_colour_and_a_word_of_another_sense_is_not(tmp_path: Path) -> None:
    """"dusty rose" agrees with a rose title and disagrees with a navy one; a shade ruled out, or a shade word
    in another sense ("a coffee date"), says no colour."""
    cats = ["Clothing, Shoes & Jewelry", "Women", "Clothing", "Skirts"]
    rows = [product("R", "Women's A-line Maxi Skirt, Dusty Rose", ["Cotton"], cats, 50),
            product("N", "Women's A-line Maxi Skirt, Navy", ["Cotton"], cats, 50),
            product("P", "Women's A-line Maxi Skirt", ["Cotton"], cats, 50)]
    index = CatalogIndex(write_rows(tmp_path / "catalog.jsonl", rows), SETTINGS.index)

    def colour(*messages: str) -> dict[str, float]:
        return column(index, "colour", *messages)

    assert colour("a maxi skirt for me", "navy please", "actually dusty rose") == {"R": 1.0, "N": -1.0, "P": 0.0}
    assert colour("a maxi skirt for me", "maroon or burgundy") == {"R": -1.0, "N": -1.0, "P": 0.0}
    assert colour("a maxi skirt for me, not maroon") == {"R": 0.0, "N": 0.0, "P": 0.0}
    assert colour("a maxi skirt for a coffee date") == {"R": 0.0, "N": 0.0, "P": 0.0}


def test_a_title_of_words_nobody_said_holds_a_smaller_share(tmp_path: Path) -> None:
    """The share of a title's own words that were said, in either number; who it is for and numbers name
    nothing a person says, so "Women's" and "2" neither add nor take away."""
    cats = ["Clothing, Shoes & Jewelry", "Women", "Jewelry", "Rings", "Band"]
    rows = [product("A", "Women's Chunky Band Rings 2", ["Alloy"], cats, 50),
            product("B", "Chunky Band Ring Cute Bracelet with Pockets", ["Alloy"], cats, 50)]
    index = CatalogIndex(write_rows(tmp_path / "catalog.jsonl", rows), SETTINGS.index)
    assert column(index, "title_share", "a chunky band ring for my wife") == {"A": 1.0, "B": 0.5}


CATS_HOOPS = ["Clothing, Shoes & Jewelry", "Women", "Jewelry", "Earrings", "Hoop"]


@pytest.mark.parametrize("lacks", ["Nickel Free", "Nickel-free", "No nickel", "Made without nickel"])
def test_a_product_that_says_it_lacks_a_word_ruled_out_agrees(tmp_path: Path, lacks: str) -> None:
    """"no nickel" lowers the hoops plated with nickel, never those that say they have none (the same
    hoops, fewer reviews, come first)."""
    path = tmp_path / "catalog.jsonl"
    rows = [product("H1", "Women's gold hoop earrings", ["Nickel plated brass", "Lightweight"], CATS_HOOPS, 300),
            product("H2", "Women's gold hoop earrings", [f"{lacks} brass", "Lightweight"], CATS_HOOPS, 100)]
    write_rows(path, rows)
    index = CatalogIndex(path, SETTINGS.index)
    assert column(index, "negated", "gold hoop earrings for me, no nickel") == {"H1": 1.0, "H2": 0.0}
    ranked, _ = rank(index, [read("gold hoop earrings for me, no nickel", negated=("nickel",))], set())
    assert pids(index, ranked) == ["H2", "H1"]
    ranked, _ = rank(index, [read("gold hoop earrings for me")], set())
    assert pids(index, ranked) == ["H1", "H2"]


def test_a_reworded_template_quotes_values_and_a_person_does_not(people_catalog: Path) -> None:
    agent = Agent(str(people_catalog))
    agent.reset("p", {})
    agent.respond("p", "My husband needs black leather chelsea boots for winter", 1, 10)
    assert agent.sessions["p"].path is SessionPath.PEOPLE
    agent.reset("q", {})
    agent.respond("q", "Hi! I need Boots Chelsea, and it has to be Rubber sole.", 1, 10)
    assert agent.sessions["q"].path is SessionPath.TEMPLATE


def test_a_reworded_template_with_a_damaged_shelf_still_quotes_its_value(people_catalog: Path) -> None:
    """In "it has to be X", "has" is a function word, not evidence against the quoted value (it was read
    as a content word, which pushed such openings onto the people path)."""
    agent = Agent(str(people_catalog))
    agent.reset("q", {})
    agent.respond("q", "Hi! I need Bootie, and it has to be Suede.", 1, 10)
    assert agent.sessions["q"].path is SessionPath.TEMPLATE


def test_a_person_is_asked_in_plain_words_and_never_shown_a_product_twice(people_catalog: Path) -> None:
    agent = Agent(str(people_catalog))
    agent.reset("p", {})
    seen: list[str] = []
    messages = []
    for turn, text in enumerate(["something warm for my feet", "they are boots", "for a woman", "with a heel"], 1):
        resp = agent.respond("p", text, turn, 10)
        assert resp["ask_attribute"] == "other"
        messages.append(resp["message"].split(". ", 1)[-1])
        recs = [r["parent_asin"] for r in resp["recommendations"]]
        assert not set(recs) & set(seen)
        seen += recs
    assert len(set(messages)) > 1          # the question is not the same sentence every turn
    trace = agent.trace("p").turns[-1]
    assert trace.parsed.kind_parsed == "values" and trace.funnel["fulltext"] > 0


def test_no_preference_to_anything_else_hands_the_session_to_the_template_path(people_catalog: Path) -> None:
    agent = Agent(str(people_catalog))
    agent.reset("p", {})
    agent.respond("p", "I want some comfy boots", 1, 10)
    assert agent.sessions["p"].path is SessionPath.PEOPLE
    agent.respond("p", "I don't really care about other.", 2, 10)
    state = agent.sessions["p"]
    assert state.path is SessionPath.TEMPLATE and state.pool is not None and state.tracks


def test_a_person_who_does_not_mind_a_detail_stays_with_people(people_catalog: Path) -> None:
    """"She doesn't mind hand washing it." reads as a no-preference reply, but it names a detail of the
    product: no sign of a used-up template shopper, so no hand-off (a persona session of the third
    wording was lost for seven turns to one)."""
    agent = Agent(str(people_catalog))
    agent.reset("p", {})
    agent.respond("p", "I want some comfy boots", 1, 10)
    agent.respond("p", "She doesn't mind hand washing it.", 2, 10)
    assert agent.sessions["p"].path is SessionPath.PEOPLE


@pytest.mark.parametrize("text, bare", [
    ("I don't really care about other.", True), ("No particular other preference here.", True),
    ("other doesn't matter to me.", True), ("I don't have an additional preference for other.", True),
    ("I'm not fussy about anything else.", True), ("No preference really.", True),
    ("She doesn't mind hand washing it.", False), ("Doesn't matter, anything comfy.", False),
    ("I don't care about the color, but it must be leather.", False), ("unisex is fine, he is not picky", False),
])
def test_a_bare_no_preference_names_nothing_but_the_attribute(text: str, bare: bool) -> None:
    assert says_only_no_preference(text, "other") is bare


def test_a_long_people_session_is_not_replayed_on_the_template_path(people_catalog: Path) -> None:
    """The hand-off replays every message on the template path: past `handoff_max_words` content
    words (a word salad, not a used-up template shopper) the session stays with people."""
    agent = Agent(str(people_catalog))
    agent.reset("p", {})
    agent.respond("p", "I want some comfy boots", 1, 10)
    agent.respond("p", " ".join(f"word{k}" for k in range(SETTINGS.people.handoff_max_words)), 2, 10)
    agent.respond("p", "I don't really care about other.", 3, 10)
    assert agent.sessions["p"].path is SessionPath.PEOPLE


def test_persona_sessions_on_the_small_catalog(people_catalog: Path) -> None:
    card = {"sample_id": "persona_t", "ground_truth": {"parent_asin": "W2"},
            "opening": "I'm after ankle booties for my wife",
            "answers": {"color": "Something neutral like a greyish brown.", "material": "Suede.", "size": None,
                        "style": None, "use_case": None, "feature": "A chunky heel and a zip on the side.",
                        "budget": "Under 50 bucks.", "brand": None, "category": "Women's booties."},
            "other": ["It's suede, not leather."]}
    assert PersonaCustomer.from_card(card).opening() == card["opening"]
    rec = run_session(Agent(str(people_catalog)), card, 0, load_catalog(people_catalog), transcripts=True)
    assert rec["hit"] and rec["turn"] <= 3, rec["transcript"]
    assert build_summary([rec])["recommended_technical_score"] > 0.9


@pytest.mark.parametrize("table, query, common", [("full", "fulltext", "imported"), ("docs", "bm25", "tee")])
def test_queries_leave_out_words_most_products_hold(small_catalog: Path, table: str, query: str, common: str) -> None:
    """"imported" is on 5 of 8 products (every field: the people query), "tee" in 5 of 8 titles (title,
    category path and card values: the template path's BM25): FTS5 would give each an IDF of 1e-6,
    so it is not asked next to "leather"; asked alone it is kept (a query never goes empty)."""
    ix = CatalogIndex(small_catalog, SETTINGS.index, None)
    assert ix._df(table, common) == 5 and ix._df(table, "leather") == 2
    both = getattr(ix, query)([common, "leather"], 10)
    assert {ix.products[i].pid for i, _ in both} == {"B1", "B3"}
    alone = getattr(ix, query)([common], 10)
    assert {ix.products[i].pid for i, _ in alone} == {"T1", "T2", "T3", "T4", "T5"}


@pytest.mark.parametrize("word, other", [("polo", "polos"), ("bikinis", "bikini"), ("dress", "dresses"),
                                          ("panties", "panty"), ("strap", "straps"), ("glass", "glasses")])
def test_a_word_and_its_other_number(word: str, other: str) -> None:
    from grounding.negation import number_forms
    assert number_forms(word) == {word, other} and number_forms(other) == {word, other}


def test_a_ruled_out_word_in_the_other_number_counts_in_the_title_only(tmp_path: Path) -> None:
    """"not a polo": a product titled "Polos" is ruled out; one whose bullets compare it to polos is not (a
    bullet that mentions the other number is as often on the product wanted)."""
    from starter.people.features import COLUMN
    from starter.people.ranking import candidate_features
    cats = ["Clothing, Shoes & Jewelry", "Men", "Clothing", "Shirts", "T-Shirts"]
    rows = [product("P1", "Mens Cotton Polos Short Sleeve", ["Cotton"], cats, 500),
            product("P2", "Mens Crew Neck Cotton Shirt", ["Cotton", "Softer than most polos"], cats, 400),
            product("P3", "Mens Cotton Polo Shirt", ["Cotton"], cats, 300)]
    index = CatalogIndex(write_rows(tmp_path / "catalog.jsonl", rows), SETTINGS.index)
    readings = [read("a cotton shirt for my husband"), read("not a polo please", 2)]
    pool = candidate_features(index, readings, conversation_facts(readings), SETTINGS.people)
    negated = {index.products[i].pid: v for i, v in zip(pool.ids.tolist(), pool.features[:, COLUMN["negated"]])}
    assert negated == {"P1": 1.0, "P2": 0.0, "P3": 1.0}
