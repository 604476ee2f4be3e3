"""PROTOCOL.md, rule by rule, on small hand-made products (evaluator/protocol.py)."""
from __future__ import annotations

import random

import pytest

import contest as P


def product(**kw) -> dict:
    """A catalog row with the official fields; everything empty unless given."""
    row = {"parent_asin": "X1", "title": "Plain Item", "features": [], "description": [], "price": None,
           "categories": [], "details": {}, "average_rating": 4.0, "rating_number": 10, "store": None}
    row.update(kw)
    return row


# ---------------------------------------------------------------- clean / flatten / searchable_text

@pytest.mark.parametrize("raw, expected", [
    ("  a \t\n b  ", "a b"),                                   # runs of whitespace -> one space
    ("--;, hello world .;", "hello world"),                     # separators stripped at both ends
    ("a - b", "a - b"),                                         # ...but not inside
    ("hi!", "hi!"),                                             # only ` -;,.\t\n` are stripped
    ("a\u00a0\u00a0b\u2009c\u3000d", "a b c d"),                # Unicode whitespace, NBSP included
    ("\u00a0.Soft touch;\u00a0", "Soft touch"),                 # NBSP collapsed then stripped
    ("...", ""),
])
def test_clean(raw, expected):
    assert P.clean(raw) == expected


def test_clean_cuts_to_180_then_strips_trailing_whitespace():
    s = "x" * 179 + " " + "y" * 10
    assert P.clean(s) == "x" * 179                     # cut at 180 lands on the space, then rstrip
    assert P.clean("." * 5 + "a" * 200) == "a" * 180   # ends stripped before the cut
    assert P.clean("abc def", limit=4) == "abc"
    assert P.clean("ab" * 100 + ".") == ("ab" * 100)[:180]


def test_clean_equals_the_protocols_regex_collapse():
    """clean() splits on whitespace instead of PROTOCOL.md's `re.sub(r"\\s+", " ", s)`: the same
    characters (every code point) and the same string on random mixes of them."""
    import re
    import sys
    ws = re.compile(r"\s")
    assert [c for c in range(sys.maxunicode + 1) if bool(ws.fullmatch(chr(c))) != chr(c).isspace()] == []

    def reference(s: str, limit: int = 180) -> str:
        return re.sub(r"\s+", " ", s).strip(" -;,.\t\n")[:limit].rstrip()

    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    alphabet = spaces + list(" -;,.\t\nab\u00e9\u200b\ufeff_")
    rng = random.Random(7)
    for _ in range(5000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        limit = rng.choice([3, 10, 180])
        assert P.clean(s, limit) == reference(s, limit), repr(s)


def test_clean_strip_happens_before_the_cut_only():
    # a separator left at the cut point is NOT stripped again (only whitespace is)
    s = "a" * 179 + "." + "b" * 5
    assert P.clean(s) == "a" * 179 + "."


def test_flatten():
    assert P.flatten({"a": "x", "b": None, "c": "", "d": [], "e": 0}) == ["a: x", "e: 0"]
    assert P.flatten(["x", None, "", 3, []]) == ["x", "3", "[]"]
    assert P.flatten(19.5) == ["19.5"]
    assert P.flatten("s") == ["s"]
    assert P.flatten(None) == []
    assert P.flatten("") == []


def test_searchable_text_field_order_and_shapes():
    p = product(title="T", features=["f1", "f2"], details={"k": "v", "n": None},
                description=["d1"], categories=["c1", "c2"], store="S")
    assert P.searchable_text(p) == "T f1 f2 k v n None d1 c1 c2 S"
    assert P.searchable_text(product(title="  T  ", store=None)) == "T"


# ---------------------------------------------------------------- intent card

def test_intent_card_material_then_colour_then_price():
    p = product(title="Classic Leather Belt",
                features=["Genuine leather strap", "Black finish"],
                details={"Department": "mens"}, price=21.0)
    assert P.card_values(p) == ["leather", "color: black", "Genuine leather strap", "Black finish",
                                "Department: mens", "budget around $21.0"]
    card = P.intent_card(p)
    assert card.title == "Classic Leather Belt"
    assert card.hard_constraints == ("leather", "color: black")
    assert card.soft_preferences == ("Genuine leather strap", "Black finish")
    assert card.constraints == card.hard_constraints + card.soft_preferences


def test_first_match_in_searchable_order_lowercased_with_word_boundaries():
    p = product(title="Reddish cottonwood Tee", features=["POLYESTER shell", "Navy"],
                details={"Color": "Green"}, description=["cotton lining, white"])
    # "Reddish"/"cottonwood" are no whole words; features come before details and description
    assert P.card_values(p)[:2] == ["polyester", "color: green"]


def reference_card_values(p: dict) -> list[str]:
    """PROTOCOL.md steps 2-5 written out literally: one search over the whole searchable text."""
    candidates = P.flatten(p.get("features")) + P.flatten(p.get("details"))
    text = P.searchable_text(p)
    m, c = P.MATERIAL_RE.search(text), P.COLOR_RE.search(text)
    if m:
        candidates.insert(0, m.group(1).lower())
    if c:
        candidates.insert(1, "color: " + c.group(1).lower())
    if p.get("price") is not None and p.get("price") != "":
        candidates.append("budget around $" + str(p["price"]))
    out: list[str] = []
    for x in candidates:
        v = P.clean(x)
        if v and v not in out:
            out.append(v)
    return out


@pytest.mark.parametrize("p", [
    product(title="Caf\u00e9 blac\u212a \u017filk", features=["Blackish", "cotton"]),   # Unicode case folding
    product(title="bla", features=["ck wool", "Nylon-blend"], details={"Color": "Red"}),
    product(title=None, features=[None, "x"], details={"Material": None, "Shade": "grey"}, store="Silk Road"),
    product(title="Plain", description=["pure SILK", "white"], categories=["Orange county"]),
    product(title="Plain", details={"Fabric type": "100% cotton"}, store="BLUE"),
    product(title="Plain", features=["wool-blend", "dark_green", "green"], price="\u2014"),
    product(title=12, features=[3.5, "leather"], details={"k": 0}),
])
def test_first_words_equal_one_search_of_the_whole_text(p):
    assert P.card_values(p) == reference_card_values(p)


def test_colour_goes_to_index_one_without_material():
    p = product(title="Blue Hat", features=["f1", "f2"])
    assert P.card_values(p) == ["f1", "color: blue", "f2"]
    # empty list: insert(1) on [] appends, so the colour is first
    assert P.card_values(product(title="Blue Hat")) == ["color: blue"]
    # material only
    assert P.card_values(product(title="Wool Hat", features=["f1"])) == ["wool", "f1"]
    # material and colour, no candidates
    assert P.card_values(product(title="Grey Wool Hat")) == ["wool", "color: grey"]


@pytest.mark.parametrize("price, line", [
    (21.0, "budget around $21.0"),
    (19.19, "budget around $19.19"),
    (20, "budget around $20"),
    (0, "budget around $0"),
    ("\u2014", "budget around $\u2014"),
    (None, None),
    ("", None),
])
def test_price_line(price, line):
    values = P.card_values(product(features=["f1"], price=price))
    assert values == (["f1", line] if line else ["f1"])


def test_budget_is_appended_last_and_rarely_in_the_card():
    p = product(features=["a", "b", "c", "d"], price=9.5)
    assert P.card_values(p)[-1] == "budget around $9.5"
    assert all("budget" not in v for v in P.intent_card(p).constraints)


def test_cleaning_drops_empties_and_dedupes_after_the_cut():
    long_a = "z" * 180 + " tail one"
    long_b = "z" * 180 + " tail two"
    p = product(features=["  --  ", "Soft  touch.", " Soft touch;", long_a, long_b, "Soft\u00a0touch"],
                details={"k": "v"})
    assert P.card_values(p) == ["Soft touch", "z" * 180, "k: v"]


def test_empty_card_falls_back_to_the_title():
    card = P.intent_card(product(title="  Plain   Hat. "))
    assert card.hard_constraints == ("Plain Hat",)
    assert card.soft_preferences == ("Plain Hat",)
    assert P.intent_card(product(title=None)).hard_constraints == ("product",)
    assert P.intent_card(product(title="")).title == "product"


@pytest.mark.parametrize("features, hard, soft", [
    (["a"], ("a",), ("a",)),                    # < 3 values: soft repeats hard[0]
    (["a", "b"], ("a", "b"), ("a",)),
    (["a", "b", "c"], ("a", "b"), ("c",)),
    (["a", "b", "c", "d", "e"], ("a", "b"), ("c", "d")),
])
def test_hard_and_soft(features, hard, soft):
    card = P.intent_card(product(features=features))
    assert (card.hard_constraints, card.soft_preferences) == (hard, soft)


# ---------------------------------------------------------------- coarse category

@pytest.mark.parametrize("categories, expected", [
    (["Clothing, Shoes & Jewelry", "Women", "Clothing", "Dresses"], "Women Dresses"),
    (["Clothing, Shoes & Jewelry", "Men"], "Shoes & Jewelry Men"),       # the split keeps "Shoes & Jewelry"
    (["Clothing, Shoes & Jewelry"], "Shoes & Jewelry"),
    (["Clothing, Shoes & Jewelry", "Men", "Uniforms, Work & Safety"], "Uniforms Work & Safety"),
    (["Clothing Shoes & Jewelry", "Women", "Shoes"], "Women Shoes"),
    (["A,,B", ""], "A B"),
    (["Clothing", " CLOTHING "], "clothing item"),
    ([], "clothing item"),
    (None, "clothing item"),
])
def test_coarse_category(categories, expected):
    assert P.coarse_category(categories) == expected


# ---------------------------------------------------------------- classify

@pytest.mark.parametrize("value, kind", [
    ("budget around $21.0", "budget"), ("Budget pick", "budget"), ("$5 belt", "budget"),
    ("$ 5", "budget"), ("under 20", "budget"), ("<= 3", "budget"), ("budget cotton", "budget"),
    ("under twenty", "feature"), ("$x", "feature"),
    ("cotton", "material"), ("100% Polyester", "material"), ("fabric: blend", "material"),
    ("red leather", "material"), ("rayonne", "material"),
    ("color: black", "color"), ("tired", "color"), ("Credit card slot", "color"), ("blue wide", "color"),
    ("Size: XL", "size"), ("wide calf", "size"), ("Narrow", "size"), ("Width: 3 in", "size"),
    ("wide fit", "size"),
    ("Department: womens", "style"), ("outfit", "style"), ("Long sleeve", "style"), ("V-neck", "style"),
    ("hiking", "use_case"), ("network", "use_case"), ("Running shoe", "use_case"), ("Outdoor", "use_case"),
    ("Machine wash", "feature"), ("brown", "feature"), ("grey", "feature"),
])
def test_classify(value, kind):
    assert P.classify(value) == kind


# ---------------------------------------------------------------- behaviour

def test_derive_behavior_override_turn_is_seeded_by_id_nul_scenario():
    card = P.IntentCard("t", ("h1", "h2"), ("s1", "s2"))
    # ids chosen so that dropping the NUL separator would flip the turn
    assert P.derive_behavior("ovr_0", "intent_override", card).override_turn == 3
    assert P.derive_behavior("ovr_4", "intent_override", card).override_turn == 4
    turns = {P.derive_behavior(f"s{i}", "intent_override", card).override_turn for i in range(40)}
    assert turns == {3, 4}
    for i in range(20):
        sid = f"s{i}"
        expected = random.Random(sid + "\0" + "intent_override").choice([3, 4])
        assert P.derive_behavior(sid, "intent_override", card).override_turn == expected
    b = P.derive_behavior("x", "intent_override", card)
    assert (b.old_value, b.new_value) == ("s2", "h1")


def test_derive_behavior_fallbacks_and_other_scenarios():
    b = P.derive_behavior("x", "intent_override", P.IntentCard("t", (), ()))
    assert b.old_value == "I prefer a different style."
    assert b.new_value == "Please prioritize the target requirements."
    for scenario in ("buying", "browsing", "boundary"):
        assert P.derive_behavior("x", scenario, P.IntentCard("t", ("h",), ("s",))) == P.Behavior()


def test_override_can_repeat_the_same_value_with_a_small_card():
    card = P.intent_card(product(features=["only one"]))
    b = P.derive_behavior("x", "intent_override", card)
    assert b.old_value == b.new_value == "only one"


def test_card_from_row_uses_carried_card_and_behavior_as_is():
    target = product(features=["a", "b", "c"])
    row = {"sample_id": "r1", "scenario_type": "intent_override",
           "intent_card": {"title": "Own", "hard_constraints": ["H"], "soft_preferences": ["S1", "S2"]},
           "behavior": {"override_turn": 2, "old_value": "OLD", "new_value": "NEW"}}
    card, behavior = P.card_from_row(row, target)
    assert card == P.IntentCard("Own", ("H",), ("S1", "S2"))
    assert behavior == P.Behavior(2, "OLD", "NEW")
    # only one of the two: both derived
    row2 = {"sample_id": "r1", "scenario_type": "buying", "intent_card": row["intent_card"]}
    card2, behavior2 = P.card_from_row(row2, target)
    assert card2 == P.intent_card(target) and behavior2 == P.Behavior()


# ---------------------------------------------------------------- customer

BELT = product(title="Classic Leather Belt", features=["Genuine leather strap", "Black finish"],
               details={"Department": "mens"}, price=21.0,
               categories=["Clothing, Shoes & Jewelry", "Men", "Accessories", "Belts"])


def customer(scenario: str, target: dict = BELT, sample_id: str = "c1") -> P.Customer:
    card = P.intent_card(target)
    return P.Customer(scenario_type=scenario, category=P.coarse_category(target["categories"]),
                      card=card, behavior=P.derive_behavior(sample_id, scenario, card))


def test_openings():
    c = customer("buying")
    assert c.opening() == "I'm looking for Accessories Belts. A key requirement is: leather."
    assert c.disclosed == {"leather"}
    for scenario in ("browsing", "boundary"):
        c = customer(scenario)
        assert c.opening() == "I'm looking for Accessories Belts, but I'm still exploring."
        assert c.disclosed == set()
    c = customer("intent_override")
    assert c.opening() == "I'm looking for Accessories Belts. Black finish"
    assert c.disclosed == set()   # the old value is NOT disclosed
    empty = P.Customer("buying", "Hats", P.IntentCard("t", (), ()), P.Behavior())
    assert empty.opening() == "I'm looking for Hats, but I'm still exploring."


def test_replies_values_join_and_disclosure():
    c = customer("buying")
    c.opening()
    assert c.reply("material") == "For that, what matters is: Genuine leather strap."
    assert c.reply("material") == "I don't have an additional preference for material."
    assert c.reply("color") == "For that, what matters is: color: black; Black finish."
    assert c.reply("color") == "I don't have an additional preference for color."
    assert c.reply("budget") == "I don't have an additional preference for budget."
    assert c.disclosed == {"leather", "Genuine leather strap", "color: black", "Black finish"}


def test_reply_other_and_unknown_attribute_take_the_first_two_in_order():
    c = customer("browsing")
    c.opening()
    assert c.reply("colour") == "For that, what matters is: leather; color: black."
    assert c.reply("other") == "For that, what matters is: Genuine leather strap; Black finish."
    assert c.reply("colour") == "I don't have an additional preference for other."
    assert c.reply("other") == "I don't have an additional preference for other."


@pytest.mark.parametrize("ask", [None, "", 7, ["color"], b"color"])
def test_reply_without_a_usable_attribute(ask):
    c = customer("browsing")
    assert c.reply(ask) == "Those options are not quite right yet. Ask me about one specific attribute."
    assert c.disclosed == set()


def test_boundary_refusal_names_the_raw_string_once():
    c = customer("boundary")
    c.opening()
    assert c.reply(None) == P.NO_ATTRIBUTE_MESSAGE          # does not use the boundary up
    assert c.reply("") == P.NO_ATTRIBUTE_MESSAGE
    assert c.reply(" ") == "I don't have a preference for  ; please use your judgment."
    assert c.reply("color") == "For that, what matters is: color: black; Black finish."
    c2 = customer("boundary")
    assert c2.reply("Colour!") == "I don't have a preference for Colour!; please use your judgment."
    assert c2.reply("Colour!") == "For that, what matters is: leather; color: black."
    c3 = customer("buying")                                 # only boundary sessions refuse
    assert c3.reply(" ") == "For that, what matters is: leather; color: black."


def test_duplicate_soft_value_can_be_revealed_twice_in_one_reply():
    c = customer("browsing", product(features=["only one"], categories=["Hats"]))
    assert c.card.constraints == ("only one", "only one")
    assert c.reply("other") == "For that, what matters is: only one; only one."


def test_override_message_and_hits_count():
    c = customer("intent_override")
    c.opening()
    assert not c.hits_count()
    assert c.is_override_turn(c.behavior.override_turn)
    assert not c.is_override_turn(c.behavior.override_turn + 1)
    assert c.override_message() == "Actually, ignore my earlier preference. What I need is: leather."
    assert "leather" in c.disclosed and c.hits_count()
    assert customer("buying").hits_count()
    assert not customer("buying").is_override_turn(3) and not customer("buying").is_override_turn(4)


# ---------------------------------------------------------------- recommendations, responses, tokens

CAT = {f"B{i:02d}": {} for i in range(1, 16)} | {"123": {}}


def test_normalize_recommendations_mixed_items():
    recs = [{"parent_asin": " B01 ", "score": 1.0}, "B02", "NOPE", "", {"parent_asin": None}, {"score": 2},
            {"parent_asin": "B01"}, "B02 ", 123, ["B03"], None, {"parent_asin": "B03"}]
    assert P.normalize_recommendations(recs, CAT) == ["B01", "B02", "123", "B03"]


def test_normalize_recommendations_keeps_first_ten_unique_valid():
    recs = ["B01", "B01", "X"] + [f"B{i:02d}" for i in range(2, 16)]
    assert P.normalize_recommendations(recs, CAT) == [f"B{i:02d}" for i in range(1, 11)]
    assert P.normalize_recommendations(recs, set(CAT), top_k=3) == ["B01", "B02", "B03"]


@pytest.mark.parametrize("recs", [("B01", "B02"), (x for x in ["B01"]), {"parent_asin": "B01"}, "B01", None])
def test_normalize_recommendations_needs_a_list(recs):
    assert P.normalize_recommendations(recs, CAT) == []


@pytest.mark.parametrize("resp, ok", [
    ({"message": "hi"}, True), ({"message": ""}, True), ({"message": None}, False), ({"message": 5}, False),
    ({}, False), ("hi", False), (None, False), (["message"], False),
])
def test_valid_response(resp, ok):
    assert P.valid_response(resp) is ok


@pytest.mark.parametrize("usage, counts", [
    ({"prompt_tokens": 10, "completion_tokens": 5}, (10, 5)),
    ({"prompt_tokens": True, "completion_tokens": False}, (1, 0)),
    ({"prompt_tokens": -1, "completion_tokens": 3}, (0, 3)),
    ({"prompt_tokens": 3.0, "completion_tokens": "4"}, (0, 0)),
    ({"prompt_tokens": 0}, (0, 0)),
    ("10", (0, 0)),
    (None, (0, 0)),
])
def test_token_counts(usage, counts):
    assert P.token_counts({"message": "", "usage": usage}) == counts


# ---------------------------------------------------------------- scoring

def _results(spec):
    return [{"hit": True, "turn": t, "rank": r} if t else {"hit": False, "turn": None, "rank": None}
            for t, r in spec]


def test_summarize_formulas():
    s = P.summarize(_results([(1, 1), (3, 2), (None, None), (None, None)]))
    assert s == {"sample_count": 4, "hit_rate_at_10": 0.5, "mrr": 0.375, "mttc": 6.5,
                 "efficiency": 0.45, "recommended_technical_score": 0.4525}


def test_summarize_bounds_and_empty():
    assert P.summarize(_results([(1, 1)] * 3))["efficiency"] == 1.0
    allmiss = P.summarize(_results([(None, None)] * 3))
    assert (allmiss["mttc"], allmiss["efficiency"], allmiss["recommended_technical_score"]) == (11.0, 0.0, 0.0)
    assert P.summarize([])["sample_count"] == 0


def test_summarize_rounding_order():
    # Chosen so that each other order gives a different last digit:
    # efficiency from the unrounded mttc would be 0.254545 (score 0.404502), the score
    # from unrounded parts 0.404502, the score from an unrounded efficiency 0.404502.
    spec = [(None, None), (3, 2), (3, 7), (10, 9), (None, None), (8, 9), (10, 6), (None, None),
            (None, None), (6, 6), (9, 10)]
    s = P.summarize(_results(spec))
    assert s == {"sample_count": 11, "hit_rate_at_10": 0.636364, "mrr": 0.118038, "mttc": 8.454545,
                 "efficiency": 0.254546, "recommended_technical_score": 0.404503}
    # a single hit in eleven: efficiency 0.045454 (not 0.045455), score 0.058441
    s = P.summarize(_results([(6, 7)] + [(None, None)] * 10))
    assert (s["mttc"], s["efficiency"], s["recommended_technical_score"]) == (10.545455, 0.045454, 0.058441)


def test_reveal_for_one_question_equals_reveal_for_several() -> None:
    import itertools

    from contest.messages import reveal, reveal_each
    values = ["cotton", "color: black", "Machine Wash", "Size: M", "Imported"]
    types = [P.classify(v) for v in values]
    for disclosed in (set(), {"cotton"}, {"cotton", "Imported", "Size: M"}):
        for hidden in (frozenset(), frozenset({"Machine Wash"})):
            each = reveal_each(values, types, disclosed, P.ALLOWED_ATTRIBUTES + ("weird",), hidden)
            for a in itertools.chain(P.ALLOWED_ATTRIBUTES, ("weird",)):
                assert reveal(values, types, disclosed, a, hidden) == each[a]
