"""The people path's ranking: one log-linear model over what each candidate has for it, corrected by trees.

The template path predicts the exact words a protocol shopper would say; a
person says "footed fleece pajamas with yetis for my son" instead.  For them a
candidate's score is `features . weights` (`starter.people.features`: BM25 per
field group over the whole conversation and the latest message, the whole
text's points behind the best, the opening's product type, who it is for,
brand, colour, cut, pack count, negations, budget, phrases, meaning,
popularity), with weights fitted by maximum likelihood of the target against
the candidate pool on the development cards' tune halves
(`scripts.fit_people`, the values in `weights.json` beside this file), plus
the correction of shallow trees fitted on top of it (`starter.people.correction`,
`trees.json`).  Its softmax is the probability that each candidate is the
target; products already shown (and so not the target) pay `people_shown_penalty`.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np

from grounding.brands import of_the_maker
from starter.index.arrays import member
from starter.index.catalog import CatalogIndex
from starter.people.brands import Brands
from starter.people.correction import Correction, load_correction
from starter.people.facts import Facts
from starter.people.features import FEATURES, Pool, feature_rows
from starter.people.pool import FactFit, candidate_pool
from starter.people.words import query_words
from starter.reading.understand import Reading
from starter.settings import PeopleSettings
from starter.template.posterior import RankedList, ranked_by_weight

WEIGHTS_FILE = Path(__file__).with_name("weights.json")
PRIOR_FEATURE = FEATURES.index("reviews")


@lru_cache(maxsize=4)
def load_weights(path: Path = WEIGHTS_FILE) -> np.ndarray:
    """The fitted weights, one per feature in `FEATURES` order (the file names them; a mismatch is an
    error, never a silent zero)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    named = data["weights"]
    if set(named) != set(FEATURES):
        raise ValueError(f"{path}: weights for {sorted(named)}, the model reads {list(FEATURES)}")
    return np.array([float(named[f]) for f in FEATURES], dtype=np.float64)


def candidate_features(index: CatalogIndex, readings: list[Reading], facts: Facts, cfg: PeopleSettings,
                       brands: Brands | None = None, fits: FactFit | None = None) -> Pool:
    """The turn's candidates and their feature rows (`fits`: the catalog's wearers and prices as arrays, kept
    by the caller across turns; without it they are read again)."""
    brand_ids = [i for store in facts.brands for i in brands.maker_products(store)[:cfg.people_brand_candidates]] \
        if brands is not None else []
    words = query_words(readings)
    ids, whole, funnel = candidate_pool(index, words, facts, cfg, brand_ids, fits)
    return Pool(ids, feature_rows(index, readings, facts, ids, whole, words, cfg), funnel)


def fixed_terms(index: CatalogIndex, ids: np.ndarray, facts: Facts, shown: set[int],
                cfg: PeopleSettings) -> np.ndarray:
    """The terms that are not fitted: a product already shown (so not the target) pays
    `people_shown_penalty`; a store named with a slip gains `people_brand` (hand-set, see the settings)."""
    out = np.zeros(len(ids), dtype=np.float64)
    if shown:
        out[member(ids, sorted(shown))] -= cfg.people_shown_penalty
    if facts.misspelt:
        products = index.products
        out[[any(of_the_maker(products[i].store, n) for n in facts.misspelt) for i in ids.tolist()]] += cfg.people_brand
    return out


def rank_people(index: CatalogIndex, readings: list[Reading], facts: Facts, shown: set[int], cfg: PeopleSettings,
                brands: Brands | None = None, weights: np.ndarray | None = None,
                correction: Correction | None = None, fits: FactFit | None = None
                ) -> tuple[RankedList, dict[str, int]]:
    """Candidates by the model's probability (tie: popularity, then parent_asin), and the funnel.  Without
    `weights`, the committed model (its weights and its correction)."""
    pool = candidate_features(index, readings, facts, cfg, brands, fits)
    if weights is None:
        weights, correction = load_weights(), load_correction()
    return ranked_pool(index, pool, facts, shown, cfg, weights, correction), pool.funnel


def ranked_pool(index: CatalogIndex, pool: Pool, facts: Facts, shown: set[int], cfg: PeopleSettings,
                weights: np.ndarray, correction: Correction | None = None) -> RankedList:
    """A pool's candidates by the model's probability under `weights` and the trees' `correction` (tie:
    popularity, then parent_asin)."""
    prior = pool.features[:, PRIOR_FEATURE] * weights[PRIOR_FEATURE]
    return ranked_by_weight(index, pool.ids, pool_score(index, pool, facts, shown, cfg, weights, correction), prior)


def pool_score(index: CatalogIndex, pool: Pool, facts: Facts, shown: set[int], cfg: PeopleSettings,
               weights: np.ndarray, correction: Correction | None = None) -> np.ndarray:
    """Each candidate's log-weight: its features times `weights`, the fixed terms, and the trees' `correction`."""
    score = pool.features @ weights + fixed_terms(index, pool.ids, facts, shown, cfg)
    return score if correction is None else score + correction.score(pool.features)
