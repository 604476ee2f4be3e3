"""Everyday ways of saying a price floor, a price by its decade, a wish for dearer, and whom a product is not
for, read by the shared fact readers (`grounding.budget`, `grounding.audience`) and seen in a conversation's
facts."""
from __future__ import annotations

import pytest

from grounding.audience import audiences_said, grown_up_audiences, wearers_agree
from grounding.budget import Budget, names_price, parse_budget, relative_price, speaks_of_price, states_an_amount
from starter.people.facts import conversation_facts
from starter.people.features import _audience_agreement
from starter.people.words import query_words
from tests.test_moves import said


@pytest.mark.parametrize("text,budget", [
    ("70+ is fine", Budget(min_price=70.0)), ("can spend a bit more, 70+ is fine", Budget(min_price=70.0)),
    ("$40+", Budget(min_price=40.0)), ("I can go 70+", Budget(min_price=70.0)),
    ("nothing cheap looking, 75+ is fine", Budget(min_price=75.0)),
])
def test_a_floor_said_with_a_plus_is_a_minimum(text: str, budget: Budget) -> None:
    assert names_price(text) and parse_budget(text) == budget


@pytest.mark.parametrize("messages,budget", [
    (("footies for my girl", "those look like 30+, something around 15?"), Budget(around=15.0)),
    (("briefs for him", "these are all like 60 bucks, under 30 please"), Budget(max_price=30.0)),
    (("briefs for him", "these look cheap, he'd spend 100 plus"), Budget(min_price=100.0)),
])
def test_a_price_said_of_the_list_shown_is_no_budget(messages: tuple[str, ...], budget: Budget) -> None:
    """"those look like 30+" says what the list costs; the wish is the amount said outside the remark."""
    assert conversation_facts(said(*messages)).budget == budget


@pytest.mark.parametrize("text,floor", [
    ("these look cheap, he'd spend 100 plus", 100.0), ("$100 plus", 100.0), ("willing to spend 100 or more", 100.0),
    ("these look cheap, 45 or more is fine", 45.0), ("something nicer, 60 and up", 60.0),
    ("50 or a bit more is ok", 50.0), ("happy to go 150+ for a good pair", 150.0),
])
def test_a_floor_said_in_words_after_the_amount_is_a_minimum(text: str, floor: float) -> None:
    assert names_price(text) and parse_budget(text) == Budget(min_price=floor)


@pytest.mark.parametrize("text", ["40+ pairs", "ages 3+", "size 10+", "comes with 50+ colors", "I'm a 16 plus size",
                                  "2 big pockets plus a zip pocket", "size 8 or 9", "2 or 3 pairs",
                                  "a big set with 40 plus pairs", "UPF 50 plus for the sun", "UPF 50+ for the sun"])
def test_a_count_or_a_size_with_a_plus_is_no_price(text: str) -> None:
    assert not names_price(text) and parse_budget(text) is None


@pytest.mark.parametrize("text,around", [("she's happy paying 60 or 70 for a good pair", 65.0),
                                         ("she'd rather spend 70 or 80 on something nice", 75.0),
                                         ("Cheap, like 10 or 15 bucks.", 12.5), ("like $25 or $20", 22.5)])
def test_two_amounts_said_as_alternatives_are_near_their_middle(text: str, around: float) -> None:
    assert names_price(text) and parse_budget(text) == Budget(around=around)


def test_a_floor_said_with_a_relative_move_wins_over_the_prices_shown() -> None:
    facts = conversation_facts(said("hiking boots for my husband", "these look cheap, he'd spend 100 plus"),
                               shown_prices=[[310.99]])
    assert facts.budget == Budget(min_price=100.0)
    facts = conversation_facts(said("hiking boots for my husband", "these look cheap"), shown_prices=[[310.99]])
    assert facts.budget == Budget(min_price=310.99, firm=True)


@pytest.mark.parametrize("text,around", [("Pretty inexpensive, mid teens.", 15.0), ("low 20s please", 23.0),
                                         ("upper thirties", 38.0), ("mid-40s", 45.0)])
def test_a_price_said_by_its_decade_is_near_its_middle(text: str, around: float) -> None:
    assert names_price(text) and parse_budget(text) == Budget(around=around)
    assert audiences_said(text) == (frozenset(), frozenset())          # "mid teens" names no wearer


@pytest.mark.parametrize("text", [
    "in purple... wait no, teal, purple was what her sister wanted", "he'll wear it fishing with his dad",
    "fishing trips w her dad", "she wants to carry her stuff around like mommy", "like my grandma's old carpet bag",
    "wait, my wife says small, not medium", "my wife just said long sleeves actually", "her grandma is paying",
])
def test_people_mentioned_who_are_not_the_wearer_name_no_wearer(text: str) -> None:
    assert audiences_said(text) == (frozenset(), frozenset())


@pytest.mark.parametrize("text,named", [
    ("a gift for her sister", {"women"}), ("my dad said he wants a cap", {"men"}),
    ("they call her grandma", {"women"}), ("his mens size is 10", {"men"}), ("I'd like womens", {"women"}),
    ("a camping trip with my wife", {"women"}), ("my wife asked for a bra", {"women"}),
])
def test_a_wearer_is_still_named_beside_those_frames(text: str, named: set[str]) -> None:
    assert audiences_said(text)[0] == named


def test_a_person_mentioned_later_keeps_the_wearer() -> None:
    facts = conversation_facts(said("my daughter needs new walking shoes",
                                    "in purple... wait no, sorry, teal, purple was what her sister wanted"))
    assert facts.audiences == {"girls"}
    facts = conversation_facts(said("a little crossbody bag for my toddler girl",
                                    "she wants to carry her stuff around like mommy, it's adorable"))
    assert facts.audiences == {"baby", "girls"}


def test_the_numbers_of_a_range_of_prices_are_no_words_of_the_product() -> None:
    text = "the cheap ones always fall apart on me, I'd pay 30 to 40"
    assert states_an_amount(text) and speaks_of_price("happy to pay 30 to 40")
    assert parse_budget("happy to pay 30 to 40") == Budget(min_price=30.0, max_price=40.0)
    words = query_words(said("I need workout shorts for myself", text))
    assert "30" not in words and "40" not in words and "pay" not in words and "shorts" in words
    assert not speaks_of_price("sizes 8 to 10") and not states_an_amount("sizes 8 to 10")
    assert query_words(said("bootcut jeans", "50ish")) == ["bootcut", "jeans"]        # a rough price, no word


def test_an_age_said_by_its_decade_is_no_price() -> None:
    assert parse_budget("she's in her mid 20s") is None
    assert parse_budget("for my son, he's in his mid teens") is None
    assert audiences_said("for my son, he's in his mid teens")[0] == {"boys"}      # "teens" narrowed: a son


def test_a_small_rough_number_is_a_price_only_beside_a_price_word() -> None:
    assert parse_budget("super cheap like 7") == Budget(around=7.0)
    assert parse_budget("like 7") is None and parse_budget("cheap, like 2 pack") == Budget(qualitative="low")


@pytest.mark.parametrize("text,move", [("I'm willing to spend a bit more", "higher"),
                                       ("I don't mind spending a lot more for a good pair", "higher"),
                                       ("happy to pay a little more", "higher"), ("wouldn't mind paying more", "higher"),
                                       ("I don't want to spend more", None), ("can't pay more than that", None)])
def test_spending_more_asks_for_dearer_unless_negated(text: str, move: str | None) -> None:
    assert relative_price(text.lower()) == move


def test_not_cheap_is_a_wish_for_dearer() -> None:
    assert parse_budget("not cheap looking please") == Budget(qualitative="high")
    assert parse_budget("cheap is fine") == Budget(qualitative="low")


@pytest.mark.parametrize("text,named,ruled_out", [
    ("nothing made for men please, it's for me", set(), {"men"}),
    ("not meant for kids", set(), {"boys", "girls"}),
    ("nothing for men or kids, they're for me", set(), {"men", "boys", "girls"}),
    ("no kids or mens sizes", set(), {"men", "boys", "girls"}),
    ("not for men or women, a kids one", {"boys", "girls"}, {"men", "women"}),
    ("sorry, nephew not son. same size tho", {"boys"}, set()),
    ("not for my son, for my daughter", {"girls"}, {"boys"}),
])
def test_whom_a_message_rules_out(text: str, named: set[str], ruled_out: set[str]) -> None:
    assert audiences_said(text) == (named, ruled_out)


def test_ruling_out_joined_wearers_keeps_the_wearer_named_before() -> None:
    facts = conversation_facts(said("I need women's climbing shoes", "nothing for men or kids, they're for me"))
    assert facts.audiences == {"women"} and facts.not_for == {"men", "boys", "girls"}
    facts = conversation_facts(said("loafers for my dad", "pretty inexpensive, mid teens"))
    assert facts.audiences == {"men"} and facts.budget == Budget(around=15.0)
    facts = conversation_facts(said("a blanket sleeper for my son", "sorry, nephew not son. same size tho"))
    assert facts.audiences == {"boys"} and not facts.not_for


@pytest.mark.parametrize("text,budget", [
    ("Around twelve dollars.", Budget(around=12.0)), ("around twenty five dollars", Budget(around=25.0)),
    ("about thirty-five bucks", Budget(around=35.0)), ("under forty five", Budget(max_price=45.0)),
    ("20 something.", Budget(around=25.0)), ("Cheap, like 20 something.", Budget(around=25.0)),
    ("thirty-something dollars", Budget(around=35.0)),
])
def test_amounts_spelled_out_or_by_their_decade(text: str, budget: Budget) -> None:
    assert names_price(text) and parse_budget(text) == budget


@pytest.mark.parametrize("text", ["my 20 something daughter", "about five pockets", "twelve pockets"])
def test_an_age_or_a_count_in_words_is_no_price(text: str) -> None:
    assert parse_budget(text) is None


def test_a_later_wearer_already_said_keeps_the_fuller_answer() -> None:
    """"baby girl" ... "for my niece" still says baby; "my daughter" ... "girls' shorts" drops the grown-up
    reading of "daughter"; a wearer not said before replaces (a correction)."""
    facts = conversation_facts(said("newborn sweaters, 3 pack, baby girl", "3 pack for my niece"))
    assert facts.audiences == {"baby", "girls"} and not facts.grown_up
    facts = conversation_facts(said("active shorts for my daughter", "girls active shorts"))
    assert facts.audiences == {"girls"} and not facts.grown_up
    facts = conversation_facts(said("shorts for my son", "for my son, he is 15"))
    assert facts.audiences == {"boys"} and facts.grown_up == {"men"}
    facts = conversation_facts(said("shorts for my son", "for my son, he is 12"))     # a child: no grown-up
    assert facts.audiences == {"boys"} and not facts.grown_up
    facts = conversation_facts(said("hoodie for my son", "sorry, for my daughter"))
    assert facts.audiences == {"girls"} and facts.grown_up == {"women"}


def test_a_little_guy_is_a_boy() -> None:
    assert audiences_said("size small, he's a skinny little guy") == ({"boys"}, frozenset())
    assert audiences_said("for my little lady") == ({"girls"}, frozenset())
    assert audiences_said("a little bit loose for my husband") == ({"men"}, frozenset())
    facts = conversation_facts(said("my son needs a tech suit", "size small, he's a skinny little guy"))
    assert facts.audiences == {"boys"}


@pytest.mark.parametrize("text,budget", [("around $0", None), ("under $0", None), ("$0-$50", Budget(max_price=50.0)),
                                         ("cheap, around 0", Budget(qualitative="low"))])
def test_an_amount_of_zero_is_no_price(text: str, budget: Budget | None) -> None:
    assert parse_budget(text) == budget


def test_a_people_turn_that_says_a_price_of_zero_still_ranks(proxy_agent) -> None:
    proxy_agent.reset("zero-price", {})
    response = proxy_agent.respond("zero-price", "sneakers for my son, around $0", 1, 10)
    assert response["recommendations"]
    assert proxy_agent.debug_snapshot("zero-price")["turns"][0]["fault"] is None


@pytest.mark.parametrize("text,named,grown", [
    ("a winter coat for my 8 year old", {"boys", "girls"}, set()), ("my 8 year old son", {"boys"}, set()),
    ("sorry, men's sizes, he's 20 lol", {"men"}, set()), ("oops sorry for my son, hes 3", {"baby", "boys"}, set()),
    ("she's 14, no need to go crazy", {"girls"}, {"women"}), ("for my 6 month old", {"baby"}, set()),
    ("my daughter is turning 5", {"girls"}, set()), ("undies for my toddler daughter", {"baby", "girls"}, set()),
    ("need jeans for my teenage son", {"boys"}, {"men"}), ("a 3yo girl", {"baby", "girls"}, set()),
    ("My daughter needs comfy mary janes, she's seven.", {"girls"}, set()), ("my 2 week old", {"baby"}, set()),
    ("for my granddaughter, she is just a few months old", {"baby"}, set()), ("my twelve-year-old", {"boys", "girls"},
                                                                            set()),
])
def test_an_age_or_a_child_word_says_how_old_the_wearer_is(text: str, named: set[str], grown: set[str]) -> None:
    assert audiences_said(text)[0] == named and grown_up_audiences(text) == grown


@pytest.mark.parametrize("text,named,grown", [
    ("cleats 4 my lil bro", {"boys"}, {"men"}), ("soccer cleats for my little brother", {"boys"}, {"men"}),
    ("a gift for my younger sister", {"girls"}, {"women"}), ("for my little brother, hes 8", {"boys"}, set()),
    ("for my brother", {"men"}, set()), ("for my big sis", {"women"}, set()),
    ("a hoodie for my stepson", {"boys"}, {"men"}), ("for my preteen", {"boys", "girls"}, set()),
    ("sorry, not niece, goddaughter", {"girls"}, {"women"}),
])
def test_a_younger_sibling_or_a_stepchild_is_read_as_a_son_or_a_daughter(text: str, named: set[str],
                                                                         grown: set[str]) -> None:
    assert audiences_said(text)[0] == named and grown_up_audiences(text) == grown


def test_someone_elses_little_brother_is_no_wearer() -> None:
    assert audiences_said("her little brother has the same one, I want it for me, womens") == ({"women"},
                                                                                               frozenset())


@pytest.mark.parametrize("text", ["battery's supposed to last 3 yrs", "do u have tall sizes? hes 6'5",
                                  "she's 5 foot 2", "he's 32 waist", "she's two sizes up from me",
                                  "he's one of those who hates laces"])
def test_a_duration_a_height_or_a_size_is_no_age(text: str) -> None:
    assert audiences_said(text)[0] == frozenset() and grown_up_audiences(text) == frozenset()


def test_a_product_for_the_other_sex_is_for_someone_else() -> None:
    """A toddler boy's brief shares "toddler" with a toddler girl but is not hers; a baby's or a kids' product
    of no one sex is."""
    assert not wearers_agree(frozenset({"boys", "baby"}), frozenset({"girls", "baby"}))
    assert wearers_agree(frozenset({"baby"}), frozenset({"girls", "baby"}))
    assert wearers_agree(frozenset({"boys", "girls"}), frozenset({"girls"}))
    facts = conversation_facts(said("undies for my toddler daughter"))
    assert _audience_agreement(frozenset({"boys", "baby"}), facts) == -1.0
    assert _audience_agreement(frozenset({"girls", "baby"}), facts) == 1.0


@pytest.mark.parametrize("text,named", [
    ("Girls' cold weather gloves, they're unisex", {"boys", "girls"}), ("unisex is fine", {"men", "women"}),
    ("unisex so me n my husband can share", {"men", "women"}), ("a unisex tee for my 8 year old", {"boys", "girls"}),
    ("a baby footie, unisex", {"baby"}),
])
def test_unisex_widens_the_wearer_named_to_both_sexes(text: str, named: set[str]) -> None:
    assert audiences_said(text)[0] == named


@pytest.mark.parametrize("messages,named", [
    (("boho footie for baby party", "unisex is fine"), {"baby"}),
    (("Girls' cold weather gloves.", "They're unisex, so her brother could wear them."), {"boys", "girls"}),
    (("for my husband", "a unisex tee for my 8 year old"), {"boys", "girls"}),
    (("a hat for me", "unisex is fine"), {"men", "women"}),
])
def test_a_later_unisex_keeps_the_wearers_age(messages: tuple[str, ...], named: set[str]) -> None:
    assert conversation_facts(said(*messages)).audiences == named


@pytest.mark.parametrize("text,named", [
    ("a baby blue cardigan for me", set()), ("baby pink hoodie for my wife", {"women"}),
    ("a babydoll dress, baby doll style", set()),
    ("Just everyday this summer until the baby comes in September.", set()),
    ("thanks, baby brain is real", set()), ("something to fit my baby bump", set()),
    ("a baby blue onesie for my baby", {"baby"}), ("A baby shower gift.", {"baby"}),
])
def test_a_shade_a_style_or_a_baby_on_the_way_names_no_baby(text: str, named: set[str]) -> None:
    assert audiences_said(text)[0] == named


def test_a_baby_shade_is_a_word_of_the_product() -> None:
    assert "baby" in query_words(said("a baby blue cardigan for me"))


@pytest.mark.parametrize("message,named", [
    ("graphic tee for my husbnd", {"men"}), ("crop sweatshirt for daugther", {"girls"}),
    ("cotton nightgown for my gradnma", {"women"}), ("for my lil sistr", {"girls"}),
    ("dont bother with leather", set()), ("a Chili Peppers band tee for a fan", set()),
])
def test_a_wearer_typed_with_a_slip_is_read_after_a_possessive_or_for(proxy_agent, message: str,
                                                                       named: set[str]) -> None:
    """A slip of a wearer's word counts where a wearer is named ("for my husbnd"); an English word the catalog
    lacks that is one letter from one ("bother", "chili") is no wearer."""
    proxy_agent.reset("slip", {})
    proxy_agent.respond("slip", message, 1, 10)
    assert conversation_facts(proxy_agent.sessions["slip"].readings).audiences == named


@pytest.mark.parametrize("messages,named", [
    (("my son needs cleats", "They come in toddler to big kid sizes."), {"baby", "boys"}),
    (("my daughter needs an umbrella for school", "sorry, my kid is asking me a million things lol"), {"girls"}),
    (("sneakers for my son", "kids size"), {"boys"}),
    (("slim wallet for my son", "works for men or women"), {"men"}),
])
def test_a_child_named_later_as_of_either_sex_keeps_the_sex_said_before(messages: tuple[str, ...],
                                                                         named: set[str]) -> None:
    assert conversation_facts(said(*messages)).audiences == named


@pytest.mark.parametrize("messages,named", [
    (("undershirts for my toddler son", "sorry!! daughter, I was just shopping for her brother"), {"girls", "men"}),
    (("a robe for my wife", "my kid is asking me a million things"), {"boys", "girls"}),
    (("for my daughter", "actually for my son"), {"boys"}),
    (("footies for a baby", "unisex is fine"), {"baby"}),
])
def test_a_new_wearer_or_a_grown_up_before_is_not_narrowed(messages: tuple[str, ...], named: set[str]) -> None:
    assert conversation_facts(said(*messages)).audiences == named


@pytest.mark.parametrize("messages,named", [
    (("a bodycon dress for a night out, for me", "thanks, girls night is saturday!"), set()),
    (("something boho to wear on a girls trip, a one piece jumpsuit for women",), {"women"}),
    (("swim trunks for my husband", "it's for our boys' weekend in vegas"), {"men"}),
    (("pjs for my girls, for a sleepover",), {"girls"}),
])
def test_an_outing_named_after_a_group_names_no_wearer(messages: tuple[str, ...], named: set[str]) -> None:
    assert conversation_facts(said(*messages)).audiences == named


def test_free_text_is_read_as_spelled_right(proxy_agent) -> None:
    """A slip of the keyboard reaches the readers of words ruled out ("no lces") and of cuts ("sliip on"), not only
    the query's words; stores and prices are read as typed ("hiya" is no misspelt store); the trace keeps the message
    as typed; a slip of a wearer's word is spelled right only where it is owned ("a girly top" names no girl)."""
    proxy_agent.reset("spelled", {})
    for turn, message in enumerate(["hiya, need some fabric sliip on sneakers for myself", "no lces please"], 1):
        proxy_agent.respond("spelled", message, turn, 10)
    readings = proxy_agent.sessions["spelled"].readings
    facts = conversation_facts(readings, proxy_agent.pipeline.people.brands)
    assert "laces" in facts.negated and ("closure", "slip_on") in facts.styles and not facts.brands
    assert readings[-1].text == "no lces please" and readings[-1].spelled_text == "no laces please"
    proxy_agent.reset("girly", {})
    proxy_agent.respond("girly", "looking for a girly top", 1, 10)
    assert not conversation_facts(proxy_agent.sessions["girly"].readings).audiences
