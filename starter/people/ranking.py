"""People: free-text sessions of shoppers who describe a product in their own words.

The template path predicts the exact words a protocol shopper would say; a
person says "footed fleece pajamas with yetis for my son" instead.  For them
the evidence is the whole product (title, category path, features, details,
store, description; porter-stemmed BM25), accumulated over the whole
conversation (a short reply refines the opening, never replaces it), plus
grounded facts: who it is for, negations and the budget (soft penalties, not
cliffs), and the popularity prior as a bounded tie-break.

`is_quoting` decides, at the opening, whether a free-text session quotes
catalog values (a reworded template shopper: the template path reads it best)
or is a person (this module).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from contest.persona import SPOKEN
from grounding.audience import AUDIENCE_WORDS, shopper_audiences
from grounding.brands import BrandMatcher, BrandMention, BrandRejection
from grounding.budget import BUDGET_WORDS, PRICE_CUES, Budget, names_price, parse_budget
from grounding.shelves import ShelfMatcher
from grounding.words import NO_PREFERENCE_VOCAB, STOP, tokens
from starter.index.catalog import CatalogIndex
from starter.config import GROUNDING, Tunables
from starter.template.posterior import RankedList, ranked_by_weight
from starter.template.evidence import Tracks
from starter.reading.understand import Reading

# Words that say nothing about the product itself, on top of the stop words
# (who it is for is read as an audience fact instead).
PEOPLE_STOP = STOP | AUDIENCE_WORDS | BUDGET_WORDS | PRICE_CUES | frozenset("""
myself looking need needs want wants wanted after got get getting buy buying shopping find finding show
have has having also really pretty little bit lot kind sort something anything thing things one ones
would could should will might maybe please thanks thank hi hello hey do does did am is are was were be been
so too very just only even still like love loves liked idea prefer preferably ideally great nice good fine
okay ok yes no not sure mostly usually always often wear wearing wears use using used
""".split())


def is_quoting(reading: Reading, shelves: ShelfMatcher, tracks: Tracks, cfg: Tunables) -> bool:
    """Does a free-text opening quote the catalog (a shelf name spelled out, or a card value)?"""
    low = " " + " ".join(tokens(reading.text)) + " "
    text = reading.text.lower()
    for key, words in shelves.spelled.items():
        if len(words) > 3 and f" {words} " in low and key.lower() in text:
            return True
    return tracks.last_evidence_max() >= cfg.quoting_sim


def says_only_no_preference(text: str, attribute: str) -> bool:
    """Whether a no-preference reply about `attribute` says nothing else.  The template shopper's "I
    don't really care about other." names nothing; a person's "She doesn't mind hand washing it."
    names a detail of the product, and is no sign that a template shopper is speaking."""
    named = set(tokens(attribute.replace("_", " "))) | set(tokens(SPOKEN.get(attribute, "")))
    return all(len(w) < 2 or w in PEOPLE_STOP or w in NO_PREFERENCE_VOCAB or w in named for w in tokens(text))


def query_words(readings: list[Reading]) -> list[str]:
    """The cumulative query: every content word said so far (and typo corrections), in order,
    without negated words and without the numbers of a budget."""
    words: list[str] = []
    for r in readings:
        if r.template:
            continue
        negated = set(r.negated)
        budget_numbers = set(tokens(r.text)) if names_price(r.text) else set()
        for w in list(tokens(r.text)) + sorted(r.extra_tokens):
            if w in PEOPLE_STOP or w in negated or (len(w) < 2 and not w.isdigit()):
                continue
            if w in budget_numbers and w.replace(".", "", 1).isdigit():
                continue
            if w not in words:
                words.append(w)
    return words


@dataclass(frozen=True)
class Facts:
    """What the whole conversation says about the product, beyond its words."""

    audiences: frozenset[str]
    negated: frozenset[str]
    budget: Budget | None
    brands: tuple[str, ...] = ()                        # catalog store names, in the order said
    brand_mentions: tuple[BrandMention, ...] = ()       # the latest message's, and its refusals
    brand_refusals: tuple[BrandRejection, ...] = ()


MEMO_ENTRIES = 4096       # messages whose brands are remembered (emptied when full)


class Brands:
    """The catalog's store names for people turns, read on first use (template sessions never need them)."""

    def __init__(self, index: CatalogIndex) -> None:
        self.index = index
        self._matcher: BrandMatcher | None = None
        self._products: dict[str, list[int]] | None = None
        self._read: dict[str, tuple[list[BrandMention], list[BrandRejection]]] = {}

    def read(self, text: str) -> tuple[list[BrandMention], list[BrandRejection]]:
        """The brands a message names (memoised: a conversation's messages are read again every turn)."""
        got = self._read.get(text)
        if got is None:
            got = self.matcher().read(text)
            if len(self._read) >= MEMO_ENTRIES:
                self._read.clear()
            self._read[text] = got
        return got

    def matcher(self) -> BrandMatcher:
        if self._matcher is None:
            sizes = {store: len(ids) for store, ids in self._by_store().items()}
            df = self.index.word_df
            self._matcher = BrandMatcher(sizes, lambda w: df.get(w, 0), GROUNDING, self.index.text_df,
                                         everyday=PEOPLE_STOP)
        return self._matcher

    def products_of(self, store: str) -> list[int]:
        """The store's products, most reviewed first (tie: parent_asin)."""
        return self._by_store().get(store, [])

    def _by_store(self) -> dict[str, list[int]]:
        """Every store's products, most reviewed first: one pass over the catalog, on first use."""
        if self._products is None:
            by_store: dict[str, list[int]] = {}
            products = self.index.products
            for i in self.index.popular:
                name = products[i].store
                if name:
                    by_store.setdefault(name, []).append(i)
            self._products = by_store
        return self._products


def conversation_facts(readings: list[Reading], brands: Brands | None = None) -> Facts:
    """Audiences named, negated words, the latest budget said, and the brands named."""
    audiences: set[str] = set()
    negated: set[str] = set()
    budget: Budget | None = None
    named: list[str] = []
    mentions: list[BrandMention] = []
    refusals: list[BrandRejection] = []
    for r in readings:
        if r.template:
            continue
        if brands is not None:
            mentions, refusals = brands.read(r.text)
            named += [m.store for m in mentions if m.store not in named]
        audiences |= shopper_audiences(r.text)
        negated |= set(r.negated)
        if names_price(r.text) or set(tokens(r.text)) & PRICE_CUES:
            got = parse_budget(r.text)
            if got is not None:
                budget = got
    last_is_free = bool(readings) and not readings[-1].template
    return Facts(frozenset(audiences), frozenset(negated), budget, tuple(named),
                 tuple(mentions) if last_is_free else (), tuple(refusals) if last_is_free else ())


def budget_penalty(price: float | None, budget: Budget | None, cfg: Tunables) -> float:
    """How far a price is off the budget, as a log ratio (0 inside it; soft, never a cliff)."""
    if budget is None or price is None or price <= 0:
        return 0.0
    slack = cfg.people_budget_slack
    if budget.max_price is not None and price > budget.max_price * (1 + slack):
        return math.log(price / (budget.max_price * (1 + slack)))
    if budget.min_price is not None and price < budget.min_price * (1 - slack):
        return math.log(budget.min_price * (1 - slack) / price)
    if budget.around is not None:
        ratio = price / budget.around
        low, high = cfg.people_around_band
        if ratio > high or ratio < low:
            return abs(math.log(ratio))
    return 0.0


def rank_people(index: CatalogIndex, readings: list[Reading], facts: Facts, shown: set[int], cfg: Tunables,
                brands: Brands | None = None) -> tuple[RankedList, dict[str, int]]:
    """Candidates by posterior probability (tie: popularity, then parent_asin), and the funnel."""
    words = query_words(readings)
    hits = index.fulltext(words, cfg.people_candidates)
    funnel = {"query_words": len(words), "fulltext": len(hits)}
    if facts.brands and brands is not None:
        # A named brand's products the text query missed (a misspelt name): the most reviewed join.
        have = {i for i, _ in hits}
        extra = [i for store in facts.brands for i in brands.products_of(store)[:cfg.people_brand_candidates]
                 if i not in have]
        hits = hits + [(i, 0.0) for i in dict.fromkeys(extra)]
        funnel["brand"] = len(hits) - funnel["fulltext"]
    if not hits:
        hits = [(i, 0.0) for i in index.popular[:cfg.people_candidates]]
        funnel["popularity_floor"] = len(hits)
    top = max(hits[0][1], 1e-9)
    products = index.products
    rows: list[tuple[int, float, bool, float, float]] = []
    for i, s in hits:
        p = products[i]
        lw = cfg.people_text_beta * max(0.0, s) / top
        if facts.audiences and p.audience:
            lw += cfg.people_audience if p.audience & facts.audiences else -cfg.people_audience
        if facts.brands and p.store in facts.brands:
            lw += cfg.people_brand
        if facts.negated and index.holds_any(i, facts.negated):
            lw -= cfg.people_negation_penalty
        lw -= cfg.people_budget_penalty * budget_penalty(p.price, facts.budget, cfg)
        if i in shown:
            lw -= cfg.people_shown_penalty
        lp = cfg.people_prior_alpha * math.log1p(p.rating_number)
        rows.append((i, lw + lp, False, lp, lw))
    return ranked_by_weight(index, rows), funnel


_AUDIENCE_LABEL = {"women": "women's", "men": "men's", "girls": "girls'", "boys": "boys'", "baby": "baby / toddler"}


def understood(readings: list[Reading], facts: Facts) -> tuple[str, ...]:
    """What the agent understood so far, in a shopper's words: "women's · black · leather · under $80"."""
    out = [_AUDIENCE_LABEL[a] for a in ("women", "men", "girls", "boys", "baby") if a in facts.audiences]
    out += list(facts.brands)
    for r in readings:
        if not r.template:
            out += [w for w in (*r.colors, *r.materials) if w not in out]
    b = facts.budget
    if b is not None:
        if b.max_price is not None and b.min_price is not None:
            out.append(f"${b.min_price:g}-${b.max_price:g}")
        elif b.max_price is not None:
            out.append(f"under ${b.max_price:g}")
        elif b.min_price is not None:
            out.append(f"over ${b.min_price:g}")
        elif b.around is not None:
            out.append(f"around ${b.around:g}")
        elif b.qualitative:
            out.append("not too pricey" if b.qualitative == "low" else "premium")
    out += [f"not {w}" for w in sorted(facts.negated)]
    return tuple(out)
