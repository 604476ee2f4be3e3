"""The people path's ranking: whole-product evidence for a person's own words.

The template path predicts the exact words a protocol shopper would say; a
person says "footed fleece pajamas with yetis for my son" instead.  For them
the evidence is the whole product (title, category path, features, details,
store, description; porter-stemmed BM25), accumulated over the whole
conversation (a short reply refines the opening, never replaces it), plus
grounded facts (`starter.people.facts`): who it is for, negations and the
budget (soft penalties, not cliffs), and the popularity prior as a bounded
tie-break.
"""
from __future__ import annotations

import math

from grounding.budget import names_price
from grounding.words import tokens
from starter.index.catalog import CatalogIndex
from starter.people.brands import Brands
from starter.people.facts import Facts, budget_penalty
from starter.people.words import PEOPLE_STOP
from starter.reading.understand import Reading
from starter.settings import PeopleSettings
from starter.template.posterior import RankedList, ranked_by_weight


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


def rank_people(index: CatalogIndex, readings: list[Reading], facts: Facts, shown: set[int], cfg: PeopleSettings,
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
