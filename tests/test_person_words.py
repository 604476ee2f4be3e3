"""How a person's words are read: how far a negation reaches, which unknown words are typing slips, and
the words of conversation and chat shorthand that say nothing about the product."""
from __future__ import annotations

from pathlib import Path

import pytest

from grounding import read_facts
from grounding.audience import audiences_said
from grounding.negation import states_present
from grounding.slips import cue_slip, nearer_a_plain_word, plausible_slip, respell_cues
from starter.agent import Agent
from starter.reading.kinds import MessageKind
from starter.reading.parse import parse_message
from starter.people.facts import conversation_facts
from starter.people.words import message_words, query_words
from starter.reading.understand import Reading
from tests.conftest import SMALL_PRODUCTS, product, write_rows


@pytest.mark.parametrize("text,rejected", [
    ("slip on, no laces or zips", {"laces", "zips"}),
    ("not clingy or tight please", {"clingy", "tight"}),
    ("not a regular or loose cut", {"regular", "loose"}),
    ("not one of those clear plastic bubble ones", {"clear", "plastic", "bubble"}),
    ("not a heavy chunky one", {"heavy", "chunky"}),
    ("not super thick", {"thick"}),
    ("not black or dark brown please", {"black", "brown"}),
    # A noun after a modifier stays wanted: the shopper still wants a dress, briefs, a card holder.
    ("not a party dress", {"party"}),
    ("not full briefs", {"full"}),
    ("not a tiny card holder, she needs room for cash", {"tiny"}),
    ("no leather", {"leather"}),
    ("not sure, no idea really", set()),
    # What the product does, not a part rejected; a product phrase, not a retraction.
    ("The seams are sealed so no water gets in.", set()),
    ("Smooth so no lines show.", set()),
    ("no tag to scratch", {"tag"}),
    ("The lenses are scratch resistant.", set()),
    ("actually scratch the beanie, a cap", {"beanie"}),
    # "nothing" rejects as "not" does, but not what the product does nor a price.
    ("plain cotton, nothing fancy", {"fancy"}),
    ("nothing tight or clingy please", {"tight", "clingy"}),
    ("The seams are flat so nothing digs in.", set()),
    ("seamless so nothing rubs", set()),
    ("Nothing over 15 dollars.", set()),
    ("Nothing more than 25 please.", set()),
    ("Has to be clip-ons, nothing through the ear.", set()),
    ("he hates seams rubbing", {"seams"}),
    # A letter joined to a word is one word: the letter alone names nothing.
    ("not a t-shirt, a button down", {"t-shirt"}),
    ("no v-necks or t shirts", {"v-necks", "t-shirts"}),
    ("no v neck", {"v-neck"}),
    ("no a-line skirts", {"a-line"}),
    # A refusal of what lacks a part wants the part.
    ("I refuse to buy dresses without pockets", set()),
    ("he won't wear anything without a hood, and not leather", {"leather"}),
    ("a rain jacket without a hood", {"hood"}),
])
def test_a_negation_reaches_coordinated_words_and_the_modifiers_of_ones(text: str, rejected: set[str]) -> None:
    assert set(read_facts(text).negated) == rejected


@pytest.mark.parametrize("typed,meant,slip", [
    ("jeens", "jeans", True), ("wieght", "weight", True), ("windbreker", "windbreaker", True),
    ("jeanss", "jeans", True), ("umbrela", "umbrella", True),
    ("hates", "hats", False), ("heard", "head", False), ("brain", "rain", False), ("dropped", "cropped", False),
    ("supposed", "supported", False), ("sorry", "worry", False), ("casio", "occasio", False),
])
def test_a_slip_keeps_the_first_letter_and_is_one_edit_away(typed: str, meant: str, slip: bool) -> None:
    assert plausible_slip(typed, meant) is slip


@pytest.mark.parametrize("typed,meant", [
    ("undre", "under"), ("udner", "under"), ("nne", "none"), ("nothign", "nothing"), ("insted", "instead"),
    ("dolars", "dollars"), ("tehse", "these"), ("aroud", "around"), ("cheaepr", "cheaper"),
    ("hers", None), ("chili", None), ("newer", None), ("blow", None), ("fifth", None),
    ("thse", None),             # "these" or "those": a slip of two cue words stands for neither
])
def test_a_slip_of_a_cue_word_is_read_as_the_word_meant(typed: str, meant: str | None) -> None:
    assert cue_slip(typed) == meant


@pytest.mark.parametrize("typed,meant,plain", [
    ("wiith", "width", True), ("lke", "lake", True),
    ("husbnd", "husband", False),          # a wearer's word in the catalog is the word meant
    ("sumer", "summer", False),            # nearer "summer" than "super"
    ("jeens", "jeans", False),
])
def test_a_slip_of_a_plain_word_is_no_catalog_word(typed: str, meant: str, plain: bool) -> None:
    """"wiith" is "with" typed with a slip, never the catalog's "width"."""
    assert nearer_a_plain_word(typed, meant) is plain


def test_cue_words_are_respelled_in_place_and_known_words_never() -> None:
    known = {"none", "these", "boots", "fun", "print"}.__contains__
    assert respell_cues("Nne of thse boots, undre 40 dolars!", known) == "none of thse boots, under 40 dollars!"
    assert respell_cues("none of these, a fun print", known) == "none of these, a fun print"


def test_chat_shorthand_is_read_as_the_word_meant() -> None:
    """"wmns blk lthr", "w/o": shorthand no listing uses, read before the fact readers see the message."""
    known = {"boots", "hood"}.__contains__
    assert respell_cues("wmns blk lthr boots w/o laces", known) == "womens black leather boots without laces"
    readings = [Reading.of(parse_message(m, t, respell=lambda text: respell_cues(text, known)))
                for t, m in enumerate(("2pk wmns socks, blk", "sz m hoodie w/o hood"), 1)]
    facts = conversation_facts(readings)
    assert facts.audiences == {"women"} and facts.negated == {"hood"}
    assert readings[0].obs.said == "2pk wmns socks, blk"             # kept as typed for the trace


def test_a_message_read_with_its_cue_words_spelled_right(slang_catalog: Path) -> None:
    """The budget, "none of these" and the words ruled out are read in a message typed with slips of their cue
    words; the trace keeps the message as typed and shows how it was read; a template message is read as it is."""
    agent = Agent(str(slang_catalog))
    agent.reset("s", {})
    opening = _reading(agent, "s", "jeans for my son undre 40, nothign too baggy")
    assert opening.obs.facts.budget_max == 40.0 and "baggy" in opening.negated
    assert opening.obs.said == "jeans for my son undre 40, nothign too baggy"
    turn = agent.debug_snapshot("s")["turns"][-1]
    assert turn["message"] == opening.obs.said
    assert turn["parsed"]["read_as"] == "jeans for my son under 40, nothing too baggy"
    assert _reading(agent, "s", "nne of these").kind == MessageKind.NO_ATTRIBUTE
    agent.reset("t", {})
    agent.respond("t", "I'm looking for Jeans. A key requirement is: Undre Armour.", 1, 10)
    assert agent.sessions["t"].readings[-1].obs.text.endswith("Undre Armour.")
    assert agent.debug_snapshot("t")["turns"][-1]["parsed"]["read_as"] is None


def test_a_word_broken_off_a_cut_card_value_is_no_slip_target(tmp_path: Path) -> None:
    """A feature cut at the card's length ends in a broken-off word ("... damaged thr"): "thru" is no slip of it,
    while a word the same catalog holds whole ("blanket") still is a slip target."""
    from contest.card import VALUE_LIMIT
    cut = ("Covers the seams and the cuffs; the warranty does not cover lenses or products that have been damaged "
           "through misuse, scratches, dents, stains, and other kinds of wear " + "x" * 80)[:VALUE_LIMIT - 6] + " throu"
    shelf = ["Clothing, Shoes & Jewelry", "Men", "Accessories", "Hats"]
    path = tmp_path / "catalog.jsonl"
    row = product("Y1", "Throw blanket hat", [cut, "Soft blanket lining"], shelf, 40, 20.0)
    write_rows(path, SMALL_PRODUCTS + [row])
    agent = Agent(str(path))
    assert len(cut) == VALUE_LIMIT and "throu" in agent.gate.clues.cut_fragments()
    assert agent.gate.slip_of("thru", 0.8) is None and agent.gate.slip_of("blankte", 0.8) == "blanket"


def test_a_word_of_plain_english_is_no_slip_of_a_catalog_word(tmp_path: Path) -> None:
    """"heard", "silly" and "sick" are English a person types on purpose (whole words of the meaning model's
    tokenizer), not slips of the catalog's "heart", "silky" and "stick"; a slip is still read ("jeens")."""
    shelf = ["Clothing, Shoes & Jewelry", "Women", "Clothing", "Tops"]
    rows = [product("H1", "Silky heart print top", ["Silky heart print", "Stick-on pocket", "Soft jeans-look fabric"], shelf, 40, 20.0)]
    agent = Agent(str(write_rows(tmp_path / "catalog.jsonl", SMALL_PRODUCTS + rows)))
    assert {"heart", "silky", "stick"} <= agent.gate.clues.vocab
    assert [agent.gate.slip_of(w, 0.8) for w in ("heard", "silly", "sick")] == [None, None, None]
    assert agent.gate.slip_of("jeens", 0.8) == "jeans" and agent.gate.slip_of("hearrt", 0.8) == "heart"
    agent.reset("s", {})
    reading = _reading(agent, "s", "I heard silky tops are nice, I'm sick of cotton")
    assert "heart" not in reading.extra_tokens and "stick" not in reading.extra_tokens


def test_a_number_word_is_no_slip_of_a_catalog_word(slang_catalog: Path) -> None:
    agent = Agent(str(slang_catalog))
    agent.reset("s", {})
    reading = _reading(agent, "s", "jeans around forty dollars, or a hundred tops")
    assert not reading.extra_tokens & {"forth", "hundreds"}
    assert respell_cues("nine of these", agent.gate.knows) == "nine of these"      # a number word is typed on purpose


def _reading(agent: Agent, sid: str, text: str) -> Reading:
    agent.respond(sid, text, len(agent.sessions[sid].readings) + 1, 10)
    return agent.sessions[sid].readings[-1]


@pytest.fixture()
def slang_catalog(tmp_path: Path) -> Path:
    shelf = ["Clothing, Shoes & Jewelry", "Men", "Accessories", "Hats"]
    extra = [product("X1", "Worry-free travel hats for men", ["Zones of comfort", "Cat print"], shelf, 40, 20.0),
             product("X2", "Cubby organiser for jeans", ["Holds hats", "Re-usable"],
                     ["Clothing, Shoes & Jewelry", "Men", "Clothing", "Jeans"], 30, 15.0)]
    path = tmp_path / "catalog.jsonl"
    write_rows(path, SMALL_PRODUCTS + extra)
    return path


def test_words_of_conversation_are_neither_query_words_nor_corrected_into_catalog_words(slang_catalog: Path) -> None:
    agent = Agent(str(slang_catalog))
    agent.reset("s", {})
    said = ["wait no sorry, they're for my hubby i guess", "thats fine, cant say, kinda",
            "boots 4 my boy, a 4 pack"]
    readings = [_reading(agent, "s", text) for text in said]
    words = query_words(readings)
    assert not {"worry", "zones", "hats", "cat", "cubby", "re", "thats", "cant", "kinda"} & set(words)
    assert words == ["boots", "4", "pack"]     # "4 my boy" is "for my boy"; "a 4 pack" is a number
    assert message_words(readings[0]) == []


@pytest.mark.parametrize("text,audiences", [
    ("The band tapers a couple millimeters toward the buckle.", set()),
    ("There's space for a couple of photos inside", set()),
    ("a couple of heart lockets for a guy", {"men"}),
    ("matching rings for a couple", {"men", "women"}),
    ("a couples costume", {"men", "women"}),
])
def test_a_couple_of_things_names_nobody(text: str, audiences: set[str]) -> None:
    assert audiences_said(text)[0] == audiences


def test_casual_and_apostrophe_less_wearers_are_audiences() -> None:
    assert audiences_said("flowy swimwear for my boyfriends vacation")[0] == {"men"}
    assert audiences_said("steve madden belt 4 hubby")[0] == {"men"}
    assert audiences_said("a gift for my wifey, or my gf")[0] == {"women"}
    assert audiences_said("something for the kiddos")[0] == {"boys", "girls"}
    assert audiences_said("not for moms")[1] == {"women"}
    assert audiences_said("not 4 women") == (frozenset(), frozenset({"women"}))
    assert audiences_said("a pack of hankies for my nan")[0] == {"women"}


def test_a_typed_slip_adds_the_catalog_word_it_meant(slang_catalog: Path) -> None:
    agent = Agent(str(slang_catalog))
    agent.reset("s", {})
    reading = _reading(agent, "s", "organiser for my jeens")
    assert "jeans" in message_words(reading)


@pytest.mark.parametrize("text,word,present", [
    ("soft tag-free underwear", "tag", False), ("no tags, printed label", "tag", False),
    ("tag at the back", "tag", True), ("nickel free hoops", "nickel", False),
    ("no visible seams", "seams", False), ("slip on, non-slip sole", "slip", True),
    ("removable straps", "straps", True), ("no show socks with lace", "lace", True),
    ("soft and not see-through", "see", False),
])
def test_a_product_lacking_a_word_does_not_state_it(text: str, word: str, present: bool) -> None:
    assert states_present(text, word) is present


def test_a_compound_ruled_out_counts_against_products_that_name_it_however_written() -> None:
    """"not a t-shirt" counts against "T-Shirt", "T Shirt" and "Tshirt", not against a "Button-Down Shirt"."""
    for title in ("Boys Slim Fit T-Shirt", "Boys Slim Fit T Shirt", "Boys Slim Fit Tshirt"):
        assert states_present(title.lower(), "t-shirt"), title
    assert not states_present("boys slim fit button-down shirt", "t-shirt")


def test_a_v_neck_ruled_out_takes_back_the_cut_and_its_words(slang_catalog: Path) -> None:
    """"no v-necks, a crew neck" wants the crew neck and no longer the v-neck; "no v-necks" says no "necks"."""
    agent = Agent(str(slang_catalog))
    agent.reset("s", {})
    readings = [_reading(agent, "s", "a v neck sweater"), _reading(agent, "s", "no v-necks, a crew neck please")]
    assert conversation_facts(readings).styles == {("neck", "crew")}
    assert conversation_facts(readings).negated == {"v-necks"}
    assert "necks" not in message_words(_reading(agent, "s", "no v-necks"))
    agent.reset("t", {})
    readings = [_reading(agent, "t", "a v neck sweater"), _reading(agent, "t", "no v-necks")]
    assert conversation_facts(readings).styles == frozenset()
    readings.append(_reading(agent, "t", "ok a v-neck is fine after all"))
    assert conversation_facts(readings).negated == frozenset()


def test_a_compound_ruled_out_counts_against_a_product_that_writes_it_as_one_word(tmp_path: Path) -> None:
    """"not a t-shirt" counts against "Tshirt" as against "T-Shirt" (the postings hold "tshirt", not "shirt")."""
    from starter.people.features import states_any
    shelf = ["Clothing, Shoes & Jewelry", "Men", "Clothing", "Shirts"]
    rows = [product("C1", "Graphic Tshirt for men", ["Cotton"], shelf, 40, 20.0),
            product("C2", "Graphic T-Shirt for men", ["Cotton"], shelf, 40, 20.0),
            product("C3", "Button down shirt for men", ["Cotton"], shelf, 40, 20.0)]
    index = Agent(str(write_rows(tmp_path / "catalog.jsonl", SMALL_PRODUCTS + rows))).index
    stated = {p.pid: states_any(index, i, {"t-shirt"}) for i, p in enumerate(index.products) if p.pid[0] == "C"}
    assert stated == {"C1": True, "C2": True, "C3": False}


def test_small_talk_leaves_no_words_in_the_query(slang_catalog: Path) -> None:
    """"hiya, so excited, the trip is next week": small talk changes nothing the query holds."""
    agent = Agent(str(slang_catalog))
    agent.reset("s", {})
    words = message_words(_reading(agent, "s", "hiya! ugh so excited, appreciate it, hoping to get them today"))
    assert not {"hiya", "ugh", "excited", "appreciate", "hoping", "today"} & set(words)
    assert "trip" in message_words(_reading(agent, "s", "the beach trip is next week"))
