"""Which candidates a people turn weighs.

BM25 over everything said ranks a product by its words alone, so a plain
"briefs for my boy, around 10" pool holds the 500 best-worded briefs of
every wearer and price, and a boy's $11 brief with a short title may be none
of them: the model can then never rank it, however well its facts agree.
The pool therefore also holds the best whole-text and title matches among
the products that fit the facts said (who it is for, a numeric budget),
beside the best matches overall and the named stores' products.
"""
from __future__ import annotations

import numpy as np

from grounding.audience import wearers_agree
from grounding.topk import best_first
from starter.index.catalog import CatalogIndex
from starter.index.product_table import audience_column, price_column
from starter.people.facts import Facts, budget_fits
from starter.settings import PeopleSettings

# BM25 field weights per group, over (title, categories, features, details, store, description).
ALL_FIELDS = (6.0, 4.0, 2.5, 2.5, 1.5, 1.0)
TYPE_FIELDS = (1.0, 1.0, 0.0, 0.0, 0.0, 0.0)          # what the product is: title and category path
DETAIL_FIELDS = (0.0, 0.0, 1.0, 1.0, 0.0, 0.0)        # bullets and the details table
DESCRIPTION_FIELDS = (0.0, 0.0, 0.0, 0.0, 0.0, 1.0)
CATEGORY_FIELDS = (0.0, 1.0, 0.0, 0.0, 0.0, 0.0)        # the category path alone: the shelf it stands on


class FactFit:
    """Who each product is for and its price, as arrays over the catalog, read on first use (template
    sessions never need them): which products agree with the facts said."""

    def __init__(self, index: CatalogIndex) -> None:
        self.index = index
        self._wearers: list[frozenset[str]] = []        # each distinct audience set of the catalog
        self._codes: np.ndarray | None = None           # per product, its audience set's place in `_wearers`
        self._prices: np.ndarray | None = None          # per product, its price (NaN: none)

    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        if self._codes is None or self._prices is None:
            self._wearers, self._codes = audience_column(self.index.products)
            self._prices = price_column(self.index.products)
        return self._codes, self._prices

    def mask(self, facts: Facts, cfg: PeopleSettings) -> np.ndarray | None:
        """Per product, whether it is for whom the shopper named (and not only for whom they ruled out) and
        its price fits a numeric budget said (a product without a price is not ruled out by it); None when
        the conversation states neither."""
        budget = facts.budget if facts.budget is not None and facts.budget.has_number else None
        if not facts.audiences and budget is None:
            return None
        codes, prices = self._arrays()
        ok = np.ones(len(codes), dtype=bool)
        if facts.audiences:
            agree = [k for k, a in enumerate(self._wearers) if wearers_agree(a, facts.audiences)
                     and not a <= facts.not_for]
            ok &= np.isin(codes, np.asarray(agree, dtype=codes.dtype))
        if budget is not None:
            ok &= budget_fits(prices, budget, cfg)
        return ok


def candidate_pool(index: CatalogIndex, words: list[str], facts: Facts, cfg: PeopleSettings,
                   brand_ids: list[int], fits: FactFit | None = None
                   ) -> tuple[np.ndarray, list[np.ndarray], dict[str, int]]:
    """For the conversation's query words (`starter.people.words.query_words`), the candidates (best whole-text
    matches, best type matches, the best of both among the products that fit the facts said, named brands'
    products; the most popular others while they are fewer than `people_candidates`) and every product's
    numbers for everything said (BM25 per field group: all, type, details, description, category; then the shares of the
    words held: all fields, type fields)."""
    text, type_scores, details, description, category = index.fulltext_scores(
        words, [ALL_FIELDS, TYPE_FIELDS, DETAIL_FIELDS, DESCRIPTION_FIELDS, CATEGORY_FIELDS])
    held, type_held = index.fulltext_coverage(words, [ALL_FIELDS, TYPE_FIELDS])
    funnel = {"query_words": len(words)}
    ids = _best(text, cfg.people_candidates)
    funnel["fulltext"] = len(ids)
    have = set(ids)
    for name, found in (("type", _best(type_scores, cfg.people_type_candidates)),
                        ("fits_facts", _fitting(index, facts, cfg, fits, (text, type_scores))),
                        ("brand", brand_ids)):
        new = [i for i in dict.fromkeys(found) if i not in have]
        have.update(new)
        ids += new
        funnel[name] = len(new)
    if len(ids) < cfg.people_candidates:
        # Few matches (rare words, a small catalog): the most popular others fill the pool, so that it always
        # holds products not yet shown for the model to weigh (by meaning, who it is for, price).
        fill = [i for i in index.popular[:cfg.people_candidates + len(ids)] if i not in have]
        ids += fill[:cfg.people_candidates - len(ids)]
        if len(ids) > len(have):
            funnel["popularity_floor" if not have else "popular_fill"] = len(ids) - len(have)
    return (np.asarray(ids, dtype=np.int64), [text, type_scores, details, description, category, held, type_held],
            funnel)


def _fitting(index: CatalogIndex, facts: Facts, cfg: PeopleSettings, fits: FactFit | None,
             scores: tuple[np.ndarray, ...]) -> list[int]:
    """The `people_fact_candidates` best of each score among the products that fit the facts said, in
    order (none when nothing is said that a product could fit)."""
    mask = (fits or FactFit(index)).mask(facts, cfg) if cfg.people_fact_candidates else None
    if mask is None:
        return []
    return [i for s in scores for i in _best(np.where(mask, s, 0.0), cfg.people_fact_candidates)]


def _best(scores: np.ndarray, limit: int) -> list[int]:
    """The `limit` best-scoring products with a score (score descending, index ascending:
    `grounding.topk.best_first`, whose ties at the cut go to the lower index)."""
    hit = np.flatnonzero(scores > 0)
    return hit[best_first(hit, scores[hit], limit)].tolist()
