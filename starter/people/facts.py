"""What a person's conversation says about the product beyond its words: who it is for, what it is not,
the budget and the brands named; and how far a price is off that budget."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from grounding.audience import (LIST_REMARK_RE, SHOPPER_WORDS, audiences_said, either_sex, grown_up_audiences,
                                names_either_sex_only, of_the_sex_said, pronoun_audiences)
from grounding.brands import BrandMention, BrandRejection
from grounding.budget import NEGATABLE_PRICE_WORDS, Budget, parse_budget, relative_price, speaks_of_price
from grounding.changes import replaced_words
from grounding.colours import colours_said
from grounding.counts import count_of
from grounding.negation import number_forms, words_said
from grounding.styles import Style, style_mentions
from grounding.words import tokens
from starter.people.brands import Brands
from starter.reading.understand import Reading
from starter.settings import PeopleSettings


@dataclass(frozen=True)
class Facts:
    """What the whole conversation says about the product, beyond its words."""

    audiences: frozenset[str]
    negated: frozenset[str]
    budget: Budget | None
    brands: tuple[str, ...] = ()                        # catalog store names, in the order said
    misspelt: tuple[str, ...] = ()                      # of them, those named with a slip (BM25 cannot see them)
    brand_mentions: tuple[BrandMention, ...] = ()       # the latest message's, and its refusals
    brand_refusals: tuple[BrandRejection, ...] = ()
    not_for: frozenset[str] = frozenset()               # audiences ruled out ("not for women")
    count: int | None = None                            # how many in the pack ("a 3 pack"), the latest said
    grown_up: frozenset[str] = frozenset()              # whom the audience words may also mean ("son": men)
    styles: frozenset[Style] = frozenset()              # cuts said and not taken back ("long sleeve", "v neck")


def conversation_facts(readings: list[Reading], brands: Brands | None = None,
                       shown_prices: list[list[float]] | None = None) -> Facts:
    """Who it is for (the latest message that names another wearer wins: a correction replaces, never adds;
    one that names only wearers already said keeps the earlier, fuller answer, and the grown-ups both may mean)
    and which grown-ups its family words may also mean ("my son": men), who it is not for, how many in the pack
    (the latest said), negated words (a word said again later, in either number, without a negation is wanted
    after all), the latest budget said, and the brands named.  `shown_prices[t]`: the prices shown after message
    t, which a relative price move ("cheaper", "those look pricey") is read against."""
    audiences: frozenset[str] = frozenset()
    grown_up: frozenset[str] = frozenset()
    not_for: frozenset[str] = frozenset()
    negated: set[str] = set()
    budget: Budget | None = None
    count: int | None = None
    named: list[str] = []
    misspelt: list[str] = []
    styles: dict[Style, frozenset[str]] = {}
    mentions: list[BrandMention] = []
    refusals: list[BrandRejection] = []
    for t, r in enumerate(readings):
        if r.template:
            continue
        if brands is not None:
            mentions, refusals = brands.read(r.text)
            # "not nike": a store the message rules out is no wish for it (the negation reads its products)
            mentions = [m for m in mentions if not set(tokens(m.said)) <= set(r.negated)]
            named += [m.store for m in mentions if m.store not in named]
            misspelt += [m.store for m in mentions if m.source == "fuzzy" and m.store not in misspelt]
        text = r.wearer_text
        said, ruled_out = audiences_said(text)
        if said and audiences and names_either_sex_only(text):   # "footies for a baby" ... "unisex is fine"
            audiences, grown_up = either_sex(audiences), either_sex(grown_up)
        elif refined := of_the_sex_said(said, audiences):  # "for my son" ... "kids size": a boy's size
            audiences, grown_up = refined, grown_up & grown_up_audiences(text)
        elif said and audiences and said <= audiences:     # "baby girl" ... "for my niece" keeps the baby, and
            grown_up &= grown_up_audiences(text)          # "my daughter" ... "girls' shorts" drops the grown-up
        elif said:
            audiences, grown_up = said, grown_up_audiences(text) - said
        elif not audiences:
            audiences = pronoun_audiences(text)            # "a gift for him", while no wearer was named
        not_for = (not_for - said) | ruled_out
        again = words_said(r.spelled_text)
        negated = {w for w in negated if again.isdisjoint(number_forms(w))} | set(r.negated)
        styles = _styles_after(styles, r)
        count = count_of(r.text) or count
        budget = _budget_said(r.text, shown_prices[t - 1] if shown_prices and 0 < t <= len(shown_prices)
                              else [], budget)
    last_is_free = bool(readings) and not readings[-1].template
    return Facts(audiences - not_for, frozenset(negated), budget, tuple(named), tuple(misspelt),
                 tuple(mentions) if last_is_free else (), tuple(refusals) if last_is_free else (), not_for,
                 count, grown_up - not_for, frozenset(styles))


def _styles_after(styles: dict[Style, frozenset[str]], reading: Reading) -> dict[Style, frozenset[str]]:
    """The styles said after a message, each with the words that named it: the message's own mentions
    but those it negates ("not baggy"), and the earlier ones but those whose words it rules out ("short
    sleeves, not long") or whose group it names again (a cut of a kind replaces the earlier cut of that
    kind: "lace up" ... "actually nah, slip on"); a word ruled out in either number ("a v-neck" ... "no v-necks")."""
    ruled_out = {form for w in reading.negated for form in number_forms(w)}
    said = {style: words for style, words in style_mentions(reading.spelled_text) if not words & ruled_out}
    renamed = {group for group, _ in said}
    kept = {style: words for style, words in styles.items() if not words & ruled_out and style[0] not in renamed}
    kept.update(said)
    return kept


def says_a_fact(text: str) -> bool:
    """Does a message say who it is for, who not, or a budget (facts beyond its content words)?"""
    said, ruled_out = audiences_said(text)
    return bool(said or ruled_out or speaks_of_price(text))


def prices_shown(products: list, shown: list[list[int]]) -> list[list[float]]:
    """The prices of each turn's list (those the catalog gives), for `conversation_facts`."""
    return [[products[i].price for i in turn if products[i].price] for turn in shown]


def _budget_said(text: str, shown: list[float], budget: Budget | None) -> Budget | None:
    """The budget after a message: a number said wins (not one said of the list shown: "those look like 30+,
    something around 15?" wishes around 15); a relative move ("cheaper") caps at the cheapest price just shown
    (or floors at the dearest); a qualitative wish only when no number was said before."""
    if not speaks_of_price(text):
        return budget
    got = parse_budget(LIST_REMARK_RE.sub(" ", text))
    if got is not None and got.has_number:
        return got
    move = relative_price(text)
    prices = [p for p in shown if p]
    if move and prices:
        # Relative to what was shown and to any number said before ("under 80" ... "anything cheaper?").
        if move == "lower":
            cap = min(prices + ([budget.max_price] if budget is not None and budget.max_price is not None else []))
            return Budget(max_price=cap, firm=True)
        floor = max(prices + ([budget.min_price] if budget is not None and budget.min_price is not None else []))
        return Budget(min_price=floor, firm=True)
    if move == "higher":
        return Budget(qualitative="high")
    return got if got is not None and (budget is None or not budget.has_number) else budget


def budget_misfit(price: float | None, budget: Budget | None, cfg: PeopleSettings,
                  typical: float | None = None) -> tuple[float, float, float]:
    """How far a price is off the budget said, as log ratios (0 inside it; soft, never a cliff):
    (over a cap or above an "around", under a floor or below an "around", off a qualitative wish:
    dearer than `typical` for "not too pricey", cheaper than it for "premium")."""
    if budget is None or price is None or price <= 0:
        return 0.0, 0.0, 0.0
    slack = 0.0 if budget.firm else cfg.people_budget_slack
    over = under = 0.0
    if budget.max_price is not None and price > budget.max_price * (1 + slack):
        over = math.log(price / (budget.max_price * (1 + slack)))
    if budget.min_price is not None and price < budget.min_price * (1 - slack):
        under = math.log(budget.min_price * (1 - slack) / price)
    if budget.around is not None:
        ratio = price / budget.around
        low, high = cfg.people_around_band
        over = max(over, math.log(ratio / high)) if ratio > high else over
        under = max(under, math.log(low / ratio)) if ratio < low else under
    off = 0.0
    if budget.qualitative and typical:
        off = max(0.0, math.log(price / typical) if budget.qualitative == "low" else math.log(typical / price))
    return over, under, off


def budget_fits(prices: np.ndarray, budget: Budget, cfg: PeopleSettings) -> np.ndarray:
    """Per price, whether `budget_misfit` finds it inside the numeric budget (over and under both 0; a
    missing price, NaN, fits: nothing says it is off)."""
    slack = 0.0 if budget.firm else cfg.people_budget_slack
    off = np.zeros(len(prices), dtype=bool)
    with np.errstate(invalid="ignore"):
        if budget.max_price is not None:
            off |= prices > budget.max_price * (1 + slack)
        if budget.min_price is not None:
            off |= (prices > 0) & (prices < budget.min_price * (1 - slack))
        if budget.around is not None:                   # as `budget_misfit` compares: the ratio to the band
            low, high = cfg.people_around_band
            ratio = prices / budget.around
            off |= (ratio > high) | ((prices > 0) & (ratio < low))
    return ~off


_AUDIENCE_LABEL = {"women": "women's", "men": "men's", "girls": "girls'", "boys": "boys'", "baby": "baby / toddler"}


def understood(readings: list[Reading], facts: Facts) -> tuple[str, ...]:
    """What the agent understood so far, in a shopper's words: "women's · black → white · leather ·
    under $80 · not for men" (a value corrected later is shown with what replaced it)."""
    out = [_AUDIENCE_LABEL[a] for a in ("women", "men", "girls", "boys", "baby") if a in facts.audiences]
    out += list(facts.brands)
    values, corrected = _values_said(readings)
    out += [f"{w} → {corrected[w]}" if w in corrected else w for w in values]
    out += [f"pack of {facts.count}"] if facts.count and facts.count > 1 else []
    budget = _budget_label(facts.budget)
    out += [budget] if budget else []
    out += [f"not for {a}" for a in ("women", "men", "girls", "boys", "baby") if a in facts.not_for]
    out += [f"not {w}" for w in sorted(facts.negated) if w not in corrected and w not in NEGATABLE_PRICE_WORDS
            and not _wearer_ruled_out(w, facts)]
    return tuple(out)


def _wearer_ruled_out(word: str, facts: Facts) -> bool:
    """Whether a word ruled out names a wearer shown already as "not for ..." ("not for women": not "not women")."""
    return word in SHOPPER_WORDS and SHOPPER_WORDS[word] <= facts.not_for


def said_colours(r: Reading) -> tuple[str, ...]:
    """The colours a message says and does not rule out: the reader's colour words, then the shades a person
    names ("maroon", "dusty rose", "cream")."""
    shades = sorted(colours_said(r.spelled_text) - set(r.colors) - set(r.negated))
    return (*r.colors, *shades)


def _values_said(readings: list[Reading]) -> tuple[list[str], dict[str, str]]:
    """Colours and materials said, in order, and those a later message replaced ("beige, not white":
    white -> beige; "dark brown" ... "never mind, light blue": brown -> blue)."""
    values: list[str] = []
    corrected: dict[str, str] = {}
    free = [r for r in readings if not r.template]
    for k, r in enumerate(free):
        new = [w for w in (*said_colours(r), *r.materials) if w not in values and w not in corrected.values()]
        gone = set(r.negated).union(*(replaced_words(e.text, r.text) for e in free[:k]))
        for w in values:
            if w in gone and w not in corrected and new:
                corrected[w] = new.pop(0)
        values += new
    return values, corrected


def _budget_label(b: Budget | None) -> str | None:
    if b is None:
        return None
    if b.max_price is not None and b.min_price is not None:
        return f"${b.min_price:g}-${b.max_price:g}"
    if b.max_price is not None:
        return f"cheaper than ${b.max_price:g}" if b.firm else f"under ${b.max_price:g}"
    if b.min_price is not None:
        return f"dearer than ${b.min_price:g}" if b.firm else f"over ${b.min_price:g}"
    if b.around is not None:
        return f"around ${b.around:g}"
    if b.qualitative:
        return "not too pricey" if b.qualitative == "low" else "premium"
    return None
