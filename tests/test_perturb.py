"""The perturbed customer voice (evaluator/perturb.py and its use in the evaluator)."""
from __future__ import annotations

import json
import random

import pytest

from evaluator import local_evaluator as E
import contest as P
from evaluator.data import load_catalog
from evaluator.perturb import MODES, OFFICIAL, damage_category, drop_words, make_phrasing, parse_modes


def product(pid: str, features: list[str], title: str = "Plain Belt Thing") -> dict:
    return {"parent_asin": pid, "title": title, "features": features, "description": [], "price": 12.5,
            "categories": ["Clothing, Shoes & Jewelry", "Men", "Accessories", "Leisure Belts"],
            "details": {}, "average_rating": 4.0, "rating_number": 5, "store": None}


# category "Accessories Leisure Belts"; no material or colour word anywhere
RICH = product("RICH", ["Alpha strap", "Beta loop", "Gamma clasp", "Delta ring", "Epsilon tip"])
ONE = product("ONE", ["Alpha strap"])
TWO = product("TWO", ["Alpha strap", "Beta loop"])
THREE = product("THREE", ["Alpha strap", "Beta loop", "Gamma clasp"])
LEATHER = product("LEATHER", ["Genuine leather strap with brass buckle", "Black finish", "Fits waist 30-40 inches"],
                  title="Classic Leather Belt")
PRODUCTS = [RICH, ONE, TWO, THREE, LEATHER]
ASKS = ["other", "material", "color", None, "size", "style", "bogus", "budget", "other", "feature"]


class Asker:
    """Asks ASKS in order; recommends nothing (so every session lasts ten turns)."""

    def __init__(self, catalog_path: str | None = None) -> None:
        self.catalog_path = catalog_path

    def reset(self, session_id, user_profile):
        pass

    def respond(self, session_id, user_message, turn, top_k):
        return {"message": "", "ask_attribute": ASKS[turn - 1], "recommendations": []}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> dict[str, dict]:
    path = tmp_path_factory.mktemp("perturb") / "catalog.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in PRODUCTS), encoding="utf-8")
    return load_catalog(path)


def row(sample_id: str, scenario: str, target: str = "RICH") -> dict:
    return {"sample_id": sample_id, "scenario_type": scenario, "ground_truth": {"parent_asin": target},
            "user_profile": {}}


def messages(catalog, r: dict, modes=frozenset(), drop_rate: float = 0.35) -> list[str]:
    rec = E.run_session(Asker(), r, 0, catalog, modes, drop_rate, transcripts=True)
    return [t["customer"] for t in rec["transcript"]]


def official_messages(catalog, r: dict) -> list[str]:
    """The same session played by a bare protocol Customer (no perturbation machinery)."""
    target = catalog[r["ground_truth"]["parent_asin"]]
    card = P.intent_card(target)
    c = P.Customer(r["scenario_type"], P.coarse_category(target["categories"]), card,
                   P.derive_behavior(r["sample_id"], r["scenario_type"], card))
    out = [c.opening()]
    for turn in range(1, 10):
        out.append(c.override_message() if c.is_override_turn(turn + 1) else c.reply(ASKS[turn - 1]))
    return out


ALL_ROWS = [row(f"ovr_{i}", s, p["parent_asin"]) for i, s in enumerate(P.SCENARIOS * 2) for p in PRODUCTS]


# ---------------------------------------------------------------- parse_modes

@pytest.mark.parametrize("spec, modes", [
    ("none", set()), ("", set()), (None, set()), (" NONE ", set()),
    ("para", {"para"}), ("para+drop", {"para", "drop"}), (" Drop + PARA ", {"para", "drop"}),
    ("para+drop+catdamage+hideclue", set(MODES)),
])
def test_parse_modes(spec, modes):
    assert parse_modes(spec) == frozenset(modes)


@pytest.mark.parametrize("spec", ["bogus", "para+bogus", "paraphrase", "none+para"])
def test_parse_modes_rejects_unknown_modes(spec):
    with pytest.raises(ValueError, match="unknown --perturb"):
        parse_modes(spec)


# ---------------------------------------------------------------- none = the official voice

def test_none_is_byte_identical_to_the_official_messages(catalog):
    r = row("n1", "buying", "LEATHER")
    assert E.build_customer(r, catalog["LEATHER"], parse_modes("none"), 0.35).phrasing is None
    msgs = messages(catalog, r, parse_modes("none"))
    assert msgs[:4] == [
        "I'm looking for Accessories Leisure Belts. A key requirement is: leather.",
        "For that, what matters is: color: black; Genuine leather strap with brass buckle.",
        "I don't have an additional preference for material.",
        "For that, what matters is: Black finish.",
    ]
    for r in ALL_ROWS:
        assert messages(catalog, r, parse_modes("none")) == official_messages(catalog, r)


def test_official_templates_match_the_protocol(catalog):
    # with only hideclue (nothing hidden here), the phrasing path must render the official text
    for r in ALL_ROWS:
        target = catalog[r["ground_truth"]["parent_asin"]]
        c = E.build_customer(r, target, frozenset({"hideclue"}), 0.35)
        c.hidden = frozenset()
        ref = P.Customer(c.scenario_type, c.category, c.card, c.behavior)
        assert c.phrasing is not None
        assert c.opening() == ref.opening()
        for turn in range(1, 10):
            if c.is_override_turn(turn + 1):
                assert c.override_message() == ref.override_message()
            else:
                assert c.reply(ASKS[turn - 1]) == ref.reply(ASKS[turn - 1])
    assert set(OFFICIAL) == {"open_buying", "open_override", "open_browsing", "override", "boundary",
                             "no_attribute", "no_preference", "values"}


def test_cli_perturb_none_equals_no_flag(tmp_path):
    cat = tmp_path / "c.jsonl"
    cat.write_text("".join(json.dumps(p) + "\n" for p in PRODUCTS), encoding="utf-8")
    ds = tmp_path / "d.jsonl"
    ds.write_text("".join(json.dumps(r) + "\n" for r in ALL_ROWS[:8]), encoding="utf-8")
    outs = []
    for extra in ([], ["--perturb", "none"]):
        out = tmp_path / f"r{len(outs)}.json"
        assert E.main(["--catalog", str(cat), "--dataset", str(ds), "--agent", "tests.test_perturb:Asker",
                       "--output", str(out), "--quiet", "--transcripts"] + extra) == 0
        s = json.loads(out.read_text())
        outs.append([[t["customer"] for t in x["transcript"]] for x in s["sessions"]])
    assert outs[0] == outs[1]
    assert outs[0][0][0].startswith("I'm looking for Accessories Leisure Belts")


# ---------------------------------------------------------------- each mode

@pytest.mark.parametrize("spec", ["para", "drop", "catdamage", "para+drop", "drop+catdamage"])
def test_mode_changes_text_deterministically_per_sample_id(catalog, spec):
    modes = parse_modes(spec)
    variants = set()
    for i in range(6):
        r = row(f"p{i}", P.SCENARIOS[i % 4], "LEATHER")
        a = messages(catalog, r, modes)
        assert a == messages(catalog, r, modes)                  # same sample id, same words
        assert a != official_messages(catalog, r)                # and not the official ones
        assert len(a) == 10
        variants.add((r["scenario_type"], tuple(a)))
    # another sample id of the same scenario words it differently
    same_scenario = [messages(catalog, row(f"q{i}", "buying", "LEATHER"), modes) for i in range(4)]
    assert len({tuple(m) for m in same_scenario}) > 1


@pytest.mark.parametrize("spec", ["para", "drop", "catdamage", "para+drop+catdamage"])
def test_modes_keep_the_policy(catalog, spec):
    for r in ALL_ROWS:
        target = catalog[r["ground_truth"]["parent_asin"]]
        c = E.build_customer(r, target, parse_modes(spec), 0.35)
        ref = E.build_customer(r, target, frozenset(), 0.35)
        c.opening(), ref.opening()
        for turn in range(1, 10):
            if ref.is_override_turn(turn + 1):
                assert c.is_override_turn(turn + 1)
                c.override_message(), ref.override_message()
            else:
                c.reply(ASKS[turn - 1]), ref.reply(ASKS[turn - 1])
            assert c.disclosed == ref.disclosed and c.boundary_used == ref.boundary_used


def test_catdamage_only_touches_the_category(catalog):
    r = row("cd", "buying", "LEATHER")
    msgs = messages(catalog, r, parse_modes("catdamage"))
    assert msgs[0].endswith(". A key requirement is: leather.")
    assert "Accessories Leisure Belts" not in msgs[0]
    assert msgs[1:] == official_messages(catalog, r)[1:]


# ---------------------------------------------------------------- hideclue

@pytest.mark.parametrize("spec", ["hideclue", "para+hideclue", "catdamage+hideclue"])
def test_hideclue_never_reveals_the_last_constraint(catalog, spec):
    modes = parse_modes(spec)
    revealed_others = 0
    for r in ALL_ROWS:
        card = P.intent_card(catalog[r["ground_truth"]["parent_asin"]])
        last = card.constraints[-1]
        msgs = messages(catalog, r, modes)
        assert not any(last.lower() in m.lower() for m in msgs), (r, last, msgs)
        revealed_others += sum(any(v.lower() in m.lower() for m in msgs)
                               for v in set(card.constraints) - {last})
    assert revealed_others > 0   # the rest of the card is still given


def test_hideclue_rich_card_details(catalog):
    modes = parse_modes("hideclue")
    buying = messages(catalog, row("h1", "buying", "RICH"), modes)
    assert buying[0] == "I'm looking for Accessories Leisure Belts. A key requirement is: Alpha strap."
    assert buying[1] == "For that, what matters is: Beta loop; Gamma clasp."    # "Delta ring" held back
    nothing = "I don't have an additional preference for {}."
    assert buying[2:] == [nothing.format("material"), nothing.format("color"), P.NO_ATTRIBUTE_MESSAGE,
                          nothing.format("size"), nothing.format("style"), nothing.format("other"),
                          nothing.format("budget"), nothing.format("other")]
    # override: the old value (soft[-1]) is the hidden one, so the opening uses the fallback
    override = messages(catalog, row("ovr_0", "intent_override", "RICH"), modes)
    assert override[0] == "I'm looking for Accessories Leisure Belts. I prefer a different style."
    assert override[2] == "Actually, ignore my earlier preference. What I need is: Alpha strap."
    # one-value card: hard[0] is also the last value, so even the opening keeps it back
    one = messages(catalog, row("h2", "buying", "ONE"), modes)
    assert one[0] == "I'm looking for Accessories Leisure Belts, but I'm still exploring."


# ---------------------------------------------------------------- drop and catdamage helpers

def test_drop_words_keeps_at_least_one_word():
    for seed in range(50):
        out = drop_words("one two three four", 1.0, random.Random(seed))
        assert out in {"one", "two", "three", "four"}
        out = drop_words("one two three four", 0.99, random.Random(seed))
        assert out and set(out.split()) <= {"one", "two", "three", "four"}
    assert drop_words("single", 1.0, random.Random(0)) == "single"
    assert drop_words("a  b\tc", 0.0, random.Random(0)) == "a b c"
    assert drop_words("one two three four five six", 0.5, random.Random(3)) == \
        drop_words("one two three four five six", 0.5, random.Random(3))


def test_drop_rate_one_still_says_one_word_of_each_value():
    phrase = make_phrasing(frozenset({"drop"}), "s1", 1.0)
    values = ("Genuine leather strap", "Black finish")
    out = phrase("values", "unused", {"category": "Accessories Leisure Belts", "values": values})
    head, _, rest = out.partition(": ")
    assert head == "For that, what matters is"
    w1, w2 = rest.rstrip(".").split("; ")
    assert w1 in values[0].split() and w2 in values[1].split()


def test_damage_category():
    assert damage_category("Belts", random.Random(0)) == "Belts"
    for seed in range(20):
        out = damage_category("Accessories Leisure Belts", random.Random(seed)).split()
        assert len(out) == 2 and set(out) < {"Accessories", "Leisure", "Belts"}


def test_phrasing_is_seeded_by_sample_id_and_modes():
    def run(sample_id, modes):
        phrase = make_phrasing(frozenset(modes), sample_id)
        return [phrase(k, "", {"category": "Accessories Leisure Belts", "values": ("Alpha strap", "Beta loop")})
                for k in OFFICIAL for _ in range(3)]
    assert run("a", {"para", "drop"}) == run("a", {"drop", "para"})
    assert run("a", {"para"}) != run("b", {"para"})
    assert run("a", {"para"}) != run("a", {"para", "catdamage"})
