"""Brands a shopper names: read against the catalog's store names, refused when they are everyday words."""
from __future__ import annotations

from pathlib import Path

from grounding.brands import BrandMatcher
from starter.settings import GROUNDING
from tests.conftest import CATS_BOOTS, CATS_TEES, product, write_rows

SIZES = {"Rockport": 30, "French Connection": 12, "Black": 4, "Generic": 40, "Ora": 9, "Fruit of the Loom": 25,
         "Love": 3, "The Classic": 6}
CARD_DF = {"black": 900, "generic": 400, "love": 2, "leather": 700, "classic": 300}


def _matcher(text_words: frozenset[str] = frozenset()) -> BrandMatcher:
    return BrandMatcher(SIZES, lambda w: CARD_DF.get(w, 0), GROUNDING, lambda w: 5 if w in text_words else 0,
                        everyday=frozenset({"love", "looking"}))


def test_store_names_are_read_whole_longest_first() -> None:
    found, refused = _matcher().read("Looking for French Connection or fruit of the loom, not Rockport!")
    assert [(m.store, m.said, m.source) for m in found] == [
        ("Fruit of the Loom", "fruit of the loom", "exact"), ("French Connection", "french connection", "exact"),
        ("Rockport", "rockport", "exact")]
    assert refused == []


def test_everyday_short_and_common_names_are_refused_with_a_reason() -> None:
    matcher = _matcher()
    assert [m.store for m in matcher.read("Looking for French Connection")[0]] == ["French Connection"]
    found, refused = matcher.read("a black generic tee from ora, I love it, in the classic cut")
    assert found == []
    assert {(r.said, r.store): r.reason for r in refused} == {
        ("black", "Black"): "product words on many more products than the store has",
        ("generic", "Generic"): "product words on many more products than the store has",
        ("the classic", "The Classic"): "product words on many more products than the store has"}
    assert matcher.unreadable == {"Ora": "too short to tell a brand from a word",
                                  "Love": "everyday words, not read as a brand"}


def test_a_misspelt_one_word_name_is_read_only_when_no_product_text_uses_the_word() -> None:
    found, _ = _matcher().read("rokport loafers, or rcokport")
    assert [(m.store, m.said, m.source) for m in found] == [("Rockport", "rokport", "fuzzy")]
    assert [m.said for m in _matcher().read("rcokport loafers")[0]] == ["rcokport"]   # a swap is one slip
    two = _matcher().read("a dress from frnech connection")[0]
    assert [(m.store, m.said, m.source) for m in two] == [("French Connection", "frnech connection", "fuzzy")]
    assert _matcher(frozenset({"frnech", "connection", "dress"})).read("a dress from frnech connection")[0] == []
    assert _matcher(frozenset({"rokport"})).read("rokport loafers")[0] == []      # a word the catalog uses
    assert _matcher().read("rackpirt loafers")[0] == []                            # too far from any name


def test_an_everyday_word_made_from_a_catalog_word_is_no_misspelt_name() -> None:
    sizes = {"Neewer": 20, "Sturdi": 8, "Rockport": 30}
    text = frozenset({"new", "sturdy", "light", "shoe"})
    matcher = BrandMatcher(sizes, lambda w: 0, GROUNDING, lambda w: 5 if w in text else 0, everyday=frozenset())
    assert matcher.read("let's go with the newer 6, something sturdier")[0] == []
    assert matcher.read("a lighter shoe")[0] == []
    adjectives = BrandMatcher({"Cottonly": 5, "Timex": 9}, lambda w: 0, GROUNDING,
                              lambda w: 5 if w in {"cotton", "time", "old"} else 0, everyday=frozenset())
    assert adjectives.read("something cottony, kind of old timey")[0] == []
    assert [m.store for m in adjectives.read("a timez watch")[0]] == ["Timex"]
    # the same slips of words the catalog does not use are still read as the names
    assert [m.store for m in matcher.read("the neewr one from sturdy")[0]] == ["Neewer"]
    assert [m.store for m in matcher.read("rokport or neweer")[0]] == ["Rockport", "Neewer"]


def _loafers_and_a_rockport(tmp_path: Path, rockport_reviews: int, extra: list[dict]):
    """An agent over six leather loafers, `extra` rows and one Rockport loafer that reads like the others
    (the same title: in words and in meaning), with a session "s" open."""
    from starter.agent import Agent
    rows = [product(f"X{k}", "Leather loafer", ["Leather", "Slip-on"], CATS_BOOTS, 500 - k) for k in range(6)]
    rows += extra + [dict(product("R1", "Leather loafer", ["Leather", "Slip-on"], CATS_BOOTS, rockport_reviews),
                          store="Rockport")]
    agent = Agent(str(write_rows(tmp_path / "catalog.jsonl", rows)), index_cache=False)
    agent.reset("s", {})
    return agent


def test_a_people_turn_shows_a_misspelt_brand_and_says_it_understood_it(tmp_path: Path) -> None:
    # The brand's loafer is the least reviewed: only the brand puts it first.
    tees = [product(f"T{k}", f"Cotton tee {k}", ["100% Cotton"], CATS_TEES, 300 - k) for k in range(12)]
    agent = _loafers_and_a_rockport(tmp_path, 20, tees)
    reply = agent.respond("s", "hi, I want a pair of rokport leather loafers for my dad please", 1, 10)
    turn = agent.trace("s").turns[-1]
    assert reply["recommendations"][0]["parent_asin"] == "R1"
    assert "Rockport" in turn.understood
    assert [(c.attribute, c.value, c.source, c.evidence) for c in turn.accepted if c.attribute == "brand"] \
        == [("brand", "Rockport", "fuzzy", "rokport")]


def test_a_store_ruled_out_is_no_wish_for_it(tmp_path: Path) -> None:
    """"not rockport": the store's products go down (the negation), never up (a brand wish)."""
    agent = _loafers_and_a_rockport(tmp_path, 900, [])
    first = agent.respond("s", "leather loafers for my dad", 1, 10)
    assert first["recommendations"][0]["parent_asin"] == "R1"                # the most reviewed
    agent.respond("s", "not rockport", 2, 10)
    turn = agent.trace("s").turns[-1]
    assert "Rockport" not in turn.understood and "not rockport" in turn.understood
    assert not [c for c in turn.accepted if c.attribute == "brand"]
    assert turn.recommendations[0] != "R1"


def test_the_misspelt_brand_cards_change_only_the_store_name() -> None:
    from scripts.misspell_brands import misspelt, with_misspelt_brand
    assert (misspelt("Rockport"), misspelt("UGG"), misspelt("Casio")) == ("Rcokport", "UGGG", "Csaio")
    card = {"sample_id": "p1", "ground_truth": {"parent_asin": "X"}, "opening": "rockport loafers, Rockport only",
            "answers": {"brand": "Rockport.", "color": None}, "other": ["rockports are nice"]}
    got = with_misspelt_brand(card, "Rockport")
    assert got is not None and got["opening"] == "Rcokport loafers, Rcokport only"
    assert got["answers"] == {"brand": "Rcokport.", "color": None} and got["other"] == ["rockports are nice"]
    assert card["opening"] == "rockport loafers, Rockport only"                  # the input is not changed
    assert with_misspelt_brand(card, "Hanes") is None and with_misspelt_brand(card, "") is None


def test_a_makers_lines_are_its_products() -> None:
    from grounding.brands import of_the_maker
    assert of_the_maker("Wrangler Authentics", "Wrangler") and of_the_maker("Timberland PRO", "Timberland")
    assert of_the_maker("Rockport", "Rockport")
    assert not of_the_maker("Wrangler", "Wrangler Authentics") and not of_the_maker("Hanesbrands Inc.", "Hanes")


def test_a_brand_named_counts_for_its_lines_in_the_people_model(tmp_path: Path) -> None:
    """"rockport loafers": a loafer of "Rockport Works" is Rockport's (brand column +1), another store's is not."""
    from starter.people.features import COLUMN
    from scripts.fit_people import people_turn
    rows = [product(f"X{k}", "Leather loafer", ["Leather", "Slip-on"], CATS_BOOTS, 500 - k) for k in range(4)]
    rows += [dict(product("R1", "Leather loafer", ["Leather"], CATS_BOOTS, 30), store="Rockport"),
             dict(product("R2", "Leather work loafer", ["Leather"], CATS_BOOTS, 20), store="Rockport Works")]
    from starter.agent import Agent
    agent = Agent(str(write_rows(tmp_path / "catalog.jsonl", rows)), index_cache=False)
    agent.reset("s", {})
    agent.respond("s", "rockport leather loafers for my dad", 1, 10)
    pool, facts = people_turn(agent, agent.sessions["s"], 1)
    brand = {agent.index.products[int(i)].pid: v for i, v in zip(pool.ids, pool.features[:, COLUMN["brand"]])}
    assert facts.brands == ("Rockport",) and brand["R1"] == brand["R2"] == 1.0 and brand["X0"] == -1.0
