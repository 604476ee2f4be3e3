"""The moves people make in a chat, read by the people path's fact readers: corrections and changes of
mind (later wins), who it is not for, prices relative to what was shown, and everyday budget wording."""
from __future__ import annotations

from pathlib import Path

import pytest

from grounding.audience import audiences_said
from grounding.budget import Budget, budget_ceiling, names_price, parse_budget, relative_price, without_measures
from grounding.counts import count_agreement, count_of
from starter.index.catalog import CatalogIndex
from starter.people.features import FEATURES
from starter.people.facts import budget_misfit, conversation_facts
from starter.people.ranking import rank_people
from starter.people.words import query_words
from starter.reading.parse import parse_message
from starter.reading.understand import Reading, quoted_negations
from starter.settings import SETTINGS
from tests.test_people import people_catalog, rank  # noqa: F401 (people_catalog: a fixture)


def said(*messages: str) -> list[Reading]:
    return [Reading.of(parse_message(m, t)) for t, m in enumerate(messages, 1)]


@pytest.mark.parametrize("text,budget", [
    ("35ish", Budget(around=35.0)), ("like 15", Budget(around=15.0)), ("40 or so", Budget(around=40.0)),
    ("up to like 75", Budget(max_price=75.0)), ("Around a hundred dollars is fine.", Budget(around=100.0)),
    ("About a hundred for the set.", Budget(around=100.0)), ("fifty bucks", Budget(around=50.0)),
    ("bout 25", Budget(around=25.0)), ("abt 30 bucks", Budget(around=30.0)), ("arnd 20", Budget(around=20.0)),
])
def test_everyday_budget_wording_is_a_budget(text: str, budget: Budget) -> None:
    assert names_price(text) and parse_budget(text) == budget


@pytest.mark.parametrize("text", ["I like 2 pairs", "size 8ish", "a hundred pairs", "I like 30 pockets",
                                  "one hundred percent cotton", "It's light, under 2 pounds.",
                                  "rated from below freezing up to about 65 degrees", "About 7 inches long.",
                                  "Medium, around 9 and a half inches wide.", "about 3 by 4 inches",
                                  "they go from about 7 up to 10 inches", "Sizes go up to 5XL.", "up to 3X",
                                  "do any of these hold around 8 cards?", "Women's 5 to 8.", "Medium, I'm a US 8-10.",
                                  "works on bands up to 30 mm wide", "22 x 22", "about 57 in long",
                                  'about 30" inseam'])
def test_counts_sizes_and_measures_are_not_budgets(text: str) -> None:
    assert not names_price(text) and parse_budget(text) is None


def test_a_unit_closes_a_chain_of_at_most_three_numbers() -> None:
    """"3 by 4 by 5 inches" is one measure; a longer chain of numbers ("1 or 1 or ...") loses only its last
    three to a unit, which keeps the reading linear in the text."""
    assert without_measures("about 3 by 4 by 5 inches").strip() == "about"
    text = "1 or " * 200
    assert without_measures(text + "2 inches").split() == ("1 or " * 198).split()
    assert without_measures(text) == text


@pytest.mark.parametrize("text,budget", [
    ("under 2 lbs and under $40", Budget(max_price=40.0)), ("size 10, under 80 dollars", Budget(max_price=80.0)),
    ("womens 40 dollars max", Budget(max_price=40.0)),
    ("Around 60 to 70 dollars.", Budget(min_price=60.0, max_price=70.0)),
])
def test_a_price_beside_a_measure_is_still_read(text: str, budget: Budget) -> None:
    assert names_price(text) and parse_budget(text) == budget


@pytest.mark.parametrize("text", [
    "Nothing over 15 dollars.", "nothing more than $30", "I don't want to spend more than 30",
    "dont wanna go over 30", "won't go above $30", "cannot go over 30", "anything over 30 is way too much",
    "Cheaper please, 15 dollars max.", "around 30 or less", "Around 30 bucks at most.", "$30 is my limit",
])
def test_a_limit_is_a_cap(text: str) -> None:
    assert parse_budget(text).max_price in (30.0, 15.0)
    assert budget_ceiling(text.lower()) == parse_budget(text).max_price          # the template path's cap too


@pytest.mark.parametrize("text,cap", [("less than a hundred", 100.0), ("max budget 70", 70.0),
                                      ("no more than a hundred dollars", 100.0), ("maximum price of 40", 40.0)])
def test_a_cap_in_other_words(text: str, cap: float) -> None:
    assert parse_budget(text) == Budget(max_price=cap)


def test_around_an_amount_as_a_cap_is_both() -> None:
    assert parse_budget("keep it around 25 or less please") == Budget(max_price=25.0, around=25.0)
    assert parse_budget("Cheaper please, 15 dollars max.") == Budget(max_price=15.0)


@pytest.mark.parametrize("text", ["over $30 please", "I want something over 30 dollars", "polka dot, over $30"])
def test_a_minimum_stays_a_minimum(text: str) -> None:
    assert parse_budget(text) == Budget(min_price=30.0) and budget_ceiling(text.lower()) is None


def test_who_it_is_not_for() -> None:
    assert audiences_said("its for a boy not a girl") == ({"boys"}, {"girls"})
    assert audiences_said("not for women") == (frozenset(), {"women"})
    assert audiences_said("not womens shoes, mens") == ({"men"}, {"women"})
    assert audiences_said("women's fit, not a boxy men's tee") == ({"women"}, {"men"})
    assert audiences_said("no heels womens 8") == ({"women"}, frozenset())    # a word between needs an article


def test_a_correction_of_who_it_is_for_replaces_the_earlier_one() -> None:
    facts = conversation_facts(said("shopping for my baby nephew", "oh sorry, niece, it's a baby girl"))
    assert facts.audiences == {"girls", "baby"}
    facts = conversation_facts(said("sneakers for my husband", "these are mostly women's, not for women"))
    assert facts.audiences == {"men"} and facts.not_for == {"women"}
    facts = conversation_facts(said("sneakers for my husband", "they're all women's, anything else?"))
    assert facts.audiences == {"men"} and not facts.not_for


def test_they_describe_the_product_wished_for_unless_they_judge_the_list() -> None:
    assert conversation_facts(said("high waisted briefs for myself", "They're women's high-rise briefs")
                              ).audiences == {"women"}
    assert conversation_facts(said("boots", "They are men's, waterproof")).audiences == {"men"}
    assert conversation_facts(said("boots for my wife", "they look like men's boots")).audiences == {"women"}


def test_a_remark_about_the_list_names_nothing_wished_for() -> None:
    readings = said("sneakers for my husband", "these are mostly women's shoes, anything in suede?")
    assert "shoes" not in query_words(readings) and "suede" in query_words(readings)
    assert query_words(said("boots", "these look thin and cheap, I'd pay up to 40")) == ["boots"]
    # "they" alone describes the product wished for, whose words count
    assert "athletic" in query_words(said("shoes for me", "They look athletic, like a sneaker"))


def test_a_corrected_word_stops_counting_for_the_earlier_message() -> None:
    readings = said("nightgown for me", "in white", "sry beige not white")
    assert "white" not in query_words(readings) and "beige" in query_words(readings)
    assert conversation_facts(readings).negated == {"white"}
    # later wins both ways: the word said again without a negation is wanted after all
    readings = said("nightgown for me", "not white", "actually white instead of black")
    assert "white" in query_words(readings)
    assert conversation_facts(readings).negated == {"black"}


@pytest.mark.parametrize("text,move", [("cheaper please", "lower"), ("those look pricey", "lower"),
                                       ("these look too cheap, I want something nicer", "higher"),
                                       ("I can spend more", "higher"), ("black leather boots", None),
                                       ("actually a nightgown would be nicer", None),
                                       ("he'd wear it to work and to nicer dinners", None),
                                       ("Not too pricey", None), ("nothing too expensive please", None),
                                       ("those are too pricey", "lower")])
def test_relative_price_moves(text: str, move: str | None) -> None:
    assert relative_price(text) == move


def test_not_too_pricey_is_a_wish_not_a_cap_at_what_was_shown() -> None:
    """"nothing too expensive" after a $17.99 item is a wish for an inexpensive one (qualitative), not
    "cheaper than $17.99" with no slack."""
    readings = said("a silver bracelet for my wife", "nothing too expensive")
    assert conversation_facts(readings, None, [[17.99]]).budget == Budget(qualitative="low")
    # a complaint about price with nothing shown to compare is a wish for cheap, never for premium
    assert parse_budget("those are too pricey") == Budget(qualitative="low")
    assert parse_budget("something premium") == Budget(qualitative="high")


def test_a_relative_price_move_reads_against_what_was_shown() -> None:
    readings = said("black boots for my husband", "those look pricey")
    assert conversation_facts(readings, None, [[79.0, 120.0]]).budget == Budget(max_price=79.0, firm=True)
    readings = said("black boots for my husband", "these look too cheap")
    assert conversation_facts(readings, None, [[79.0, 45.0]]).budget == Budget(min_price=79.0, firm=True)
    # relative to a number said before too: "under 60" ... shown 79 ... "anything cheaper?"
    readings = said("black boots for my husband, under 60", "anything cheaper?")
    assert conversation_facts(readings, None, [[79.0]]).budget == Budget(max_price=60.0, firm=True)
    # a number said wins over the relative move
    readings = said("black boots for my husband", "cheaper please, under 50")
    assert conversation_facts(readings, None, [[79.0]]).budget == Budget(max_price=50.0)
    # a vague wish does not erase a number said before
    readings = said("black boots under 80 dollars", "nothing too pricey")
    assert conversation_facts(readings).budget == Budget(max_price=80.0)


def test_cheaper_than_shown_has_no_slack() -> None:
    """"Cheaper" than a $50 item rules out a $54 one (a stated "under 50" lets it by within the slack)."""
    people = SETTINGS.people
    assert budget_misfit(54.0, Budget(max_price=50.0), people)[0] == 0.0
    assert budget_misfit(54.0, Budget(max_price=50.0, firm=True), people)[0] > 0.0
    assert budget_misfit(49.0, Budget(max_price=50.0, firm=True), people) == (0.0, 0.0, 0.0)


def test_not_for_women_lowers_womens_items(people_catalog: Path) -> None:
    index = CatalogIndex(people_catalog, SETTINGS.index)

    def probs(*messages: str) -> dict[str, float]:
        ranked = rank(index, said(*messages), set())[0]
        return {index.products[r.idx].pid: r.prob for r in ranked}

    before, after = probs("leather ankle boot black"), probs("leather ankle boot black", "not for women")
    for women in ("W1", "W2"):          # each women's item loses ground to the men's boot
        assert after[women] / after["M1"] < before[women] / before["M1"]


def test_what_was_understood_shows_corrections() -> None:
    from starter.people.facts import understood
    readings = said("black sneakers for my husband", "not that one, white instead of black", "not for women")
    assert understood(readings, conversation_facts(readings)) == ("men's", "black → white", "not for women")
    readings = said("a black dress", "not too pricey")
    assert understood(readings, conversation_facts(readings)) == ("black", "not too pricey")   # said once


STEERING = Path(__file__).resolve().parents[1] / "demo" / "conversations" / "steering.txt"


def test_the_steering_conversation_behaves_as_a_shopper_expects(proxy_agent) -> None:
    """The six turns of demo/conversations/steering.txt on the proxy catalog: men's black sneakers first,
    each correction in what was understood, a product not re-shown after "not that one", nothing dearer
    first after "anything cheaper?", and a men's item (unisex or not) first after "not for women"."""
    agent, lines = proxy_agent, STEERING.read_text(encoding="utf-8").splitlines()
    agent.reset("steer", {})
    firsts = []
    for turn, line in enumerate(lines, 1):
        resp = agent.respond("steer", line, turn, 10)
        p = agent.index.products[agent.index.by_pid[resp["recommendations"][0]["parent_asin"]]]
        firsts.append(p)
        understood = agent.sessions["steer"].traces[-1].understood
        if turn == 1:
            assert "men" in p.audience and "black" in p.title.lower() and "sneaker" in p.title.lower()
        if turn == 2:                                          # "size 10" matches no women's "... Size 10"
            assert "men" in p.audience and "women" not in p.title.lower()
        if turn >= 4:
            assert "black → white" in understood and "black" not in understood
        if turn == 4:
            assert p.pid != firsts[2].pid                       # "not that one"
        if turn >= 5:                                          # "anything cheaper?": none dearer after it
            assert p.price is not None and p.price <= firsts[3].price
        if turn == 6:                                          # a unisex shoe is the men's too; a women's is not
            assert "not for women" in understood and "men" in p.audience
    assert len(firsts) == 6


@pytest.mark.parametrize("message,shelf_word,never", [
    ("i need comfy black sneakers for my husband", None, ("tote", "bag", "watch")),
    ("a leather tote for work", None, ("sneaker", "shoe", "boot")),
    ("a watch for my dad", "watch", ()),
    ("a romper for my daughter", "romper", ()),
])
def test_the_noun_a_shopper_uses_decides_the_kind_of_product(proxy_agent, message, shelf_word, never) -> None:
    """The product noun is grounded in titles and shelves, not in marketing bullets: none of the first ten
    for "sneakers" is a bag (whose bullets may say "sneakers"), and the first three are of the kind named."""
    agent = proxy_agent
    agent.reset("noun", {})
    agent.respond("noun", message, 1, 10)
    from starter.people.ranking import rank_people
    state, people = agent.sessions["noun"], agent.pipeline.people
    ranked, _ = rank_people(agent.index, state.readings, conversation_facts(state.readings, people.brands), set(),
                            agent.settings.people, people.brands, people.weights)
    first = [agent.index.products[r.idx] for r in ranked[:10]]
    for p in first:
        kind = p.shelf.lower().replace("shoes & jewelry", "")      # the root's name is every product's
        assert not any(w in kind for w in never), (p.title, p.shelf)
    if shelf_word:
        assert all(shelf_word in (p.title + " " + p.shelf).lower() for p in first[:3])


@pytest.mark.parametrize("text,count", [
    ("its a 10 pack", 10), ("comes as a set of 5", 5), ("pack of three", 3), ("Soft fabric, two in the pack.", 2),
    ("It's two pairs for one price.", 2), ("Pack of 3", 3), ("3-Pack", 3), ("10 Pairs", 10), ("12pcs", 12),
    ("I thought I wanted one pair, but a two-pack would be even better.", 2),
    ("I was thinking just one, but I'd rather a multipack of six.", 6),
    ("Two lockets in one pack.", 2), ("3 socks in a pack", 3),
    ("a multipack, like six of them", 6), ("You get two of them", 2),
])
def test_a_pack_count_is_read_from_a_message_and_a_title(text: str, count: int) -> None:
    assert count_of(text) == count


@pytest.mark.parametrize("text", ["for my 2 kids", "size 10", "a pair of socks", "8 steel ribs", "multipack",
                                  "under 15 for the pack", "one piece swimsuit", "2 Piece Outfit",
                                  "need backpacks for my girls, I have three of them", "not one of those bubble ones"])
def test_a_number_without_its_unit_is_no_count(text: str) -> None:
    assert count_of(text) is None


def test_the_quick_unit_test_never_changes_a_count(proxy_agent) -> None:
    """`count_of` skips the patterns when no unit word is in the text: the same answer as running them,
    for every proxy title and for odd case ("SET OF 2", the long s of "ſet of 2")."""
    from grounding.counts import by_patterns
    texts = [p.title for p in proxy_agent.index.products] + ["SET OF 2", "ſet of 2", "3 PK", "Twelve-Count"]
    assert [count_of(t) for t in texts] == [by_patterns(t) for t in texts]
    assert sum(count_of(t) is not None for t in texts) > 1000


def test_the_latest_count_said_wins_and_agreement_is_signed() -> None:
    facts = conversation_facts(said("no show socks for my husband", "a 3 pack", "sorry, six pairs"))
    assert facts.count == 6
    assert count_agreement(6, "Men's No Show Socks, Pack of 6") == 1.0
    assert count_agreement(6, "Men's No Show Socks 3 Pairs") == -1.0
    assert count_agreement(6, "Men's No Show Socks") == 0.0 and count_agreement(None, "Socks 6 Pack") == 0.0


def test_a_count_said_lifts_the_listings_that_state_it(proxy_agent) -> None:
    """On the proxy catalog: with "six pairs" said, more of the first ten state six than without it,
    and none of them states another count above one stating six."""
    index, people = proxy_agent.index, proxy_agent.settings.people
    plain = said("no show socks for my husband")
    counted = said("no show socks for my husband, six pairs")
    with_count = [index.products[r.idx].title for r in rank_people(
        index, counted, conversation_facts(counted), set(), people)[0][:10]]
    without = [index.products[r.idx].title for r in rank_people(
        index, plain, conversation_facts(plain), set(), people)[0][:10]]
    agree = [count_agreement(6, t) for t in with_count]
    assert agree.count(1.0) > [count_agreement(6, t) for t in without].count(1.0)
    assert -1.0 not in agree[:agree.index(1.0)]


@pytest.mark.parametrize("text,taken_back", [
    ("actually scratch the beanie, a baseball cap would suit him better", "beanie"),
    ("I was going to get a fleece but changed my mind, a puffer is way warmer", "fleece"),
    ("hmm, changed my mind on puffy, something lighter in cotton", "puffy"),
    ("Actually never mind cotton, a nylon blend is better", "cotton"),
    ("a maxi... sorry no, a short one, above the knee", "maxi"),
    ("white ones... no, sorry, tan", "white"),
    ("was thinking braided but actually let's do one of those ratchet ones", "braided"),
    ("I was going to get heavy insulated winter ones but changed my mind", "heavy"),
    ("I was going to get heavy insulated winter ones but changed my mind", "insulated"),
    ("I was going to get heavy insulated winter ones but changed my mind", "winter"),
    ("maybe something dainty and thin... no, actually I want it chunky", "dainty"),   # coordinated, all of them
    ("maybe something dainty and thin... no, actually I want it chunky", "thin"),
    ("hmm or a folding compact one... nah, the long stick kind", "folding"),        # the modifiers of "one"
    ("hmm or a folding compact one... nah, the long stick kind", "compact"),
    ("black... hmm, no, grey with a printed graphic", "black"),
    ("size large... no wait, medium", "large"),                                     # not the attribute's name
    ("plain white... no, actually he wants plaid ones", "white"),                   # a colour is no noun
    ("long sleeve maybe... nah, short sleeve, it's summer", "long"),
    ("I was picturing a tight fitted one at first but I changed my mind", "tight"),
    ("I was leaning toward cotton ones but honestly the silky nylon kind", "cotton"),
    ("I had my heart set on high rise but thinking about it, mid rise", "high"),
    ("I was gonna say chunky knit, but no, thin and lightweight", "chunky"),
    ("I was going to get him a thin cotton jersey one but let's do flannel", "jersey"),
])
def test_a_preference_taken_back_is_negated(text: str, taken_back: str) -> None:
    reading = said(text)[0]
    assert taken_back in reading.negated and taken_back not in query_words([reading])


@pytest.mark.parametrize("text,taken_back", [
    ("a maxi... sorry no, a short one, above the knee", "maxi"),
    ("white ones... no, sorry, tan", "white"),
    ("actually scratch the beanie, a baseball cap would suit him better", "beanie"),
])
def test_a_preference_taken_back_survives_understanding(proxy_agent, text: str, taken_back: str) -> None:
    """The agent's own reading (through the understander, which drops negations inside quoted catalog
    values) keeps the word taken back, wherever it stands in the phrase that takes it back."""
    sid = f"taken-back-{taken_back}"
    proxy_agent.reset(sid, {})
    proxy_agent.respond(sid, "looking for something for me", 1, 10)
    proxy_agent.respond(sid, text, 2, 10)
    reading = proxy_agent.sessions[sid].readings[-1]
    proxy_agent.close_session(sid)
    assert taken_back in reading.negated


def test_a_negation_inside_a_quoted_value_is_a_claim() -> None:
    kept = quoted_negations(("maxi", "rust"), ("maxi... sorry", "never rust"), [("Never Rust Finish", 1.0)], 0.5)
    assert kept == (("maxi",), ("maxi... sorry",))


@pytest.mark.parametrize("text,kept", [
    ("I was thinking blue would be nice", "blue"),                         # no turn of the clause
    ("a one piece... no sorry, I meant a two piece bikini", "piece"),      # said again after
    ("low rise bikini style... oh sorry, I meant high waisted", "bikini"),  # the noun after its modifiers
    ("long sleeve maybe... nah, short sleeve, it's summer", "sleeve"),     # said again after
    ("the cheap ones never last, I'm fine going up to around 50", "last"),   # how it wears, not a part
    ("i was thinking of a red dress for the party but actually green", "dress"),   # a noun after a modifier
    ("I was after a leather tote bag but actually canvas", "tote"),
])
def test_a_preference_kept_is_not_negated(text: str, kept: str) -> None:
    reading = said(text)[0]
    assert kept not in reading.negated and kept in query_words([reading])


def test_a_store_named_lifts_its_products(proxy_agent) -> None:
    """On the proxy catalog: with "vota brand" said, a Vota umbrella comes first (none is first without it,
    and fewer are in the first five), and the brand's fitted weight keeps at least as many Vota ones in the
    first five as BM25 over the store field alone brings."""
    index, people = proxy_agent.index, proxy_agent.pipeline.people
    plain = said("need an umbrella for me", "classic look, with a cotton canopy")
    named = said("need an umbrella for me", "classic look, with a cotton canopy", "the one I saw was vota brand")
    without_brand = people.weights.copy()
    without_brand[FEATURES.index("brand")] = 0.0
    stores = []
    for readings, weights in ((plain, people.weights), (named, people.weights), (named, without_brand)):
        facts = conversation_facts(readings, people.brands)
        ranked, _ = rank_people(index, readings, facts, set(), proxy_agent.settings.people, people.brands, weights)
        stores.append([index.products[r.idx].store for r in ranked[:5]])
    assert stores[0][0] != "Vota" and stores[1][0] == "Vota" and stores[1].count("Vota") > stores[0].count("Vota")
    assert stores[1].count("Vota") >= stores[2].count("Vota")


def test_a_style_named_after_a_wearer_names_no_wearer() -> None:
    assert audiences_said("high waisted boy shorts for women") == ({"women"}, frozenset())
    assert audiences_said("custom dad hat") == (frozenset(), frozenset())
    assert audiences_said("a hat for my dad") == ({"men"}, frozenset())
    assert query_words(said("custom dad hat")) == ["custom", "dad", "hat"]     # the product's word here
    assert query_words(said("a hat for my dad")) == ["hat"]


def test_not_see_through_rejects_no_word() -> None:
    """"see" is in most size-chart bullets; the products that answer "not see-through" say so themselves."""
    assert said("Lightweight and not see-through.")[0].negated == ()
    assert "see" in query_words(said("Lightweight and not see-through."))


def test_what_comes_in_one_pack_is_the_count() -> None:
    assert count_of("It's 30 pairs in one pack.") == 30 and count_of("There are four pairs in one pack.") == 4
    assert count_of("I thought I wanted one pair, but a two-pack would be even better.") == 2


def test_a_son_may_be_grown_up() -> None:
    """"for my son": a boy's product agrees, a man's neither agrees nor disagrees, a woman's disagrees."""
    from starter.people.features import _audience_agreement
    facts = conversation_facts(said("basketball shorts for my son"))
    assert facts.audiences == {"boys"} and facts.grown_up == {"men"}
    assert [_audience_agreement(frozenset({a}), facts) for a in ("boys", "men", "women")] == [1.0, 0.0, -1.0]
    facts = conversation_facts(said("basketball shorts for my son", "sorry, for my husband"))
    assert facts.audiences == {"men"} and facts.grown_up == frozenset()       # the correction replaces both
    facts = conversation_facts(said("shorts for my son", "not for a grown man, he's 8"))
    assert facts.grown_up == frozenset()


def test_not_after_an_auxiliary_says_what_the_product_does() -> None:
    assert said("Rubber sole that does not slip.")[0].negated == ()
    assert said("it will not fade, not polyester")[0].negated == ("polyester",)


@pytest.mark.parametrize("text", ["Cotton and polyester, about 60/40.", "like 40+ pairs, boho",
                                  "fits wrists up to 8 in"])
def test_ratios_and_measures_are_no_prices(text: str) -> None:
    assert not names_price(text)


def test_one_piece_keeps_one() -> None:
    assert query_words(said("one piece, no ruffles")) == ["one", "piece"]          # not any "2 Piece"
    assert query_words(said("the one with pockets")) == ["pockets"]


def test_plus_size_keeps_plus() -> None:
    assert query_words(said("plus size leggings")) == ["plus", "size", "leggings"]
    assert query_words(said("my size is plus")) == ["size", "plus"]
    assert query_words(said("Plus, it has pockets")) == ["pockets"]       # "plus" as "also" stays out


def test_a_size_said_is_no_query_word() -> None:
    """The catalog lists a product once for all its sizes: "size 10" would match only titles naming one."""
    assert query_words(said("no, I meant shoes, size 10")) == ["shoes"]
    assert query_words(said("my size is medium")) == []
    assert query_words(said("24 inch chain")) == ["24", "inch", "chain"]
    assert query_words(said("for my 10 year old, she's 12 years old")) == []          # ages neither
    assert query_words(said("a 3 pack")) == ["3", "pack"]


@pytest.mark.parametrize("text,rejected", [
    ("I don't like polyester", ("polyester",)), ("mine doesnt have buttons", ("buttons",)),
    ("she wont wear heels", ("heels",)), ("not a fan of zippers", ("zippers",)),
    ("I don't like them super tight", ("tight",)), ("dont want anything with a hood", ("hood",)),
    ("A waistband that doesn't roll down", ()), ("so I don't have to unlace them", ()),
    ("I don't want to pay more than 30", ()),
])
def test_a_negated_verb_of_wanting_or_having_rejects_its_object(text: str, rejected: tuple[str, ...]) -> None:
    """"don't like X" rules X out; "doesn't roll", "don't have to" say what the product does."""
    assert said(text)[0].negated == rejected


def test_for_him_names_a_sex_only_while_no_wearer_was_named() -> None:
    assert conversation_facts(said("a gift for him")).audiences == {"men", "boys"}
    assert conversation_facts(said("something for her, a scarf")).audiences == {"women", "girls"}
    assert conversation_facts(said("a tote for my son", "canvas would be better for him")).audiences == {"boys"}


@pytest.mark.parametrize("text,count", [("Three pairs come together in one pack.", 3), ("Lots in one pack.", None),
                                        ("It comes three in one pack.", 3), ("I thought one pair, but a two-pack", 2),
                                        ("just one pack please", 1)])
def test_in_one_pack_names_what_they_come_in_not_how_many(text: str, count: int | None) -> None:
    assert count_of(text) == count
