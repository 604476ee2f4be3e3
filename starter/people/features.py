"""The people model's features: what each candidate has for it in a person's conversation, as numbers.

One row per candidate (`starter.people.pool` chooses them), one column per
feature (`FEATURES`, in this order).  Text features are porter-stemmed BM25
over field groups, each divided by the best score among the candidates (so 1.0
is "as good as the best match" on every turn, whatever the query's length),
and the whole text's BM25 also as points behind the best (which a ratio cannot
show: the more a conversation says, the further a product that lacks it falls
behind); facts are signed agreements.  The weights that turn them into a score are fitted
(`scripts.fit_people`), never set by hand.  A store named with a slip (which
BM25 over the store field cannot see) is the one hand-set term, `people_brand`
(`starter.people.ranking`): the development cards hold too few misspelt names
to estimate it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from grounding.audience import AUDIENCE_WORDS, LIST_REMARK_RE, wearers_agree
from grounding.brands import of_the_maker
from grounding.colours import colour_agreement
from grounding.counts import count_agreement
from grounding.materials import families as material_families
from grounding.materials import material_agreement, materials_said, named_materials
from grounding.negation import number_forms, states_present, word_pattern
from grounding.styles import style_agreement, styles_named
from grounding.words import STOP, tokens
from starter.index.arrays import member
from starter.index.catalog import CatalogIndex
from starter.people.facts import Facts, budget_misfit, said_colours
from starter.people.pool import ALL_FIELDS, TYPE_FIELDS
from starter.people.words import message_pairs, message_words, taken_back
from starter.reading.understand import Reading
from starter.settings import PeopleSettings

FEATURES: tuple[str, ...] = (
    "text",           # everything said, every field
    "text_gap",       # the same in BM25 points behind the best candidate (grows as the conversation says more)
    "type",           # everything said, title and category path only (the noun a shopper uses)
    "category",       # everything said, the category path alone (the shelf the product stands on)
    "details",        # everything said, bullets and details
    "description",    # everything said, description
    "last",           # the latest message alone, every field
    "opening_type",   # the opening alone, title and category path
    "audience",       # +1 for whom the shopper named, -1 for someone else, 0 unsaid (or a grown-up "son" may mean)
    "negated",        # 1: the product holds a word the shopper ruled out
    "over_budget",    # log ratio of the price over the cap (or above the "around") said, 0 inside it
    "under_budget",   # log ratio of the price under the floor (or below the "around") said, 0 inside it
    "price_wish",     # "not too pricey" / "premium": log ratio dearer / cheaper than the pool's median price
    "price_unknown",  # 1: a budget was said and the product has no price to check it against
    "colour",         # +1 a colour said is on the product, -1 it names only other colours, 0 unsaid
    "material",       # +1 a material said is one it names (title, material and short values), -1 only other fibres
    "style",          # per cut said (sleeve, rise, fit, neckline, ...): +1 the title names it, -1 only another cut
    "count",          # +1 the title states the pack count said ("3 pack" / "Pack of 3"), -1 another, 0 unsaid
    "coverage",       # share of the words said that the product holds, any field
    "type_coverage",  # share of the words said that its title or category path holds
    "title_share",    # share of its title's own words that were said (a title of many words nobody said is less it)
    "phrases",        # share of the pairs of words said one after the other that the product holds so, any field
    "meaning",        # cosine of everything said with the title and shelf as word meanings, less the best candidate's
    "brand",          # +1 the product's store is one the shopper named, -1 another store when one was named
    "reviews",        # log1p(rating_number): popularity
)


COLUMN: dict[str, int] = {name: k for k, name in enumerate(FEATURES)}    # a feature's column in the rows
# The features read off every product's numbers for the whole conversation (`candidate_pool`'s `whole`, in
# this order): BM25 per field group, each relative to the best candidate, then the shares of words held.
WHOLE_BM25 = ("text", "type", "details", "description", "category")
WHOLE_SHARES = ("coverage", "type_coverage")


@dataclass(frozen=True)
class Pool:
    """The candidates of a people turn and their feature rows."""

    ids: np.ndarray          # product indexes, int64
    features: np.ndarray     # (len(ids), len(FEATURES)) float64
    funnel: dict[str, int]


def _affirmed(free: list[Reading], negated: frozenset[str], gone: list[frozenset[str]]) -> str:
    """Everything said, less the words the conversation rules out or a later message takes back (`gone`, per
    message) and its remarks about the list shown: the meaning of "ankle booties, not suede" is not near suede
    (each ruled-out word in either number, "not a polo" against "polos"), that of "long sleeve ... oops, short
    sleeve" not near long sleeves, nor that of "these are mostly women's shoes" near women's shoes."""
    ruled_out = {form for w in negated for form in number_forms(w)}
    parts = []
    for r, g in zip(free, gone):
        text = LIST_REMARK_RE.sub(" ", r.text)
        words = sorted(ruled_out.union(*map(number_forms, g)), key=len, reverse=True)
        parts.append(re.sub(r"\b(?:" + "|".join(map(word_pattern, words)) + r")\b", " ", text, flags=re.I)
                     if words else text)
    return " ".join(parts)


def feature_rows(index: CatalogIndex, readings: list[Reading], facts: Facts, ids: np.ndarray,
                 whole: list[np.ndarray], words: list[str], cfg: PeopleSettings) -> np.ndarray:
    """The feature matrix of the candidates `ids` (`whole`: every product's numbers for everything said,
    in the order of `WHOLE_BM25` then `WHOLE_SHARES`, from `starter.people.pool.candidate_pool`, for the query
    `words` it was given)."""
    free = [r for r in readings if not r.template]
    x = np.zeros((len(ids), len(FEATURES)), dtype=np.float64)
    for k, name in enumerate(WHOLE_BM25):
        x[:, COLUMN[name]] = _relative(whole[k][ids])
    x[:, COLUMN["text_gap"]] = _behind_best(whole[0][ids])
    for k, name in enumerate(WHOLE_SHARES, len(WHOLE_BM25)):
        x[:, COLUMN[name]] = whole[k][ids]
    gone = taken_back(free)
    if free:
        last, opening = message_words(free[-1]), [w for w in message_words(free[0]) if w not in gone[0]]
        x[:, COLUMN["last"]] = _relative(index.fulltext_scores(last, [ALL_FIELDS])[0][ids])
        x[:, COLUMN["opening_type"]] = _relative(index.fulltext_scores(opening, [TYPE_FIELDS])[0][ids])
        x[:, COLUMN["meaning"]] = _behind_best(index.meanings.similarity(_affirmed(free, facts.negated, gone), ids))
    pairs = list(dict.fromkeys(p for r, g in zip(free, gone) for p in message_pairs(r)
                               if not set(p) & (facts.negated | g)))
    if pairs:
        x[:, COLUMN["phrases"]] = sum(member(ids, index.phrases.rows(p)) for p in pairs) / len(pairs)
    colours = frozenset(c for r, g in zip(free, gone) for c in said_colours(r) if c not in g) - facts.negated
    said_materials = frozenset(m for r, g in zip(free, gone) for m in (*r.materials, *materials_said(r.text))
                               if m not in g and m not in r.negated) - facts.negated
    id_list = ids.tolist()
    rows = [index.products[i] for i in id_list]
    # Column by column, each fact only when the conversation states it (a Python list per column: numpy's
    # per-element assignment costs more than the fact).
    if facts.audiences or facts.not_for:
        x[:, COLUMN["audience"]] = _each([p.audience for p in rows], lambda a: _audience_agreement(a, facts))
    if facts.negated:
        other_number = frozenset().union(*map(number_forms, facts.negated)) - facts.negated
        x[:, COLUMN["negated"]] = [1.0 if states_any(index, i, facts.negated) or _titled(rows[k], other_number)
                                   else 0.0 for k, i in enumerate(id_list)]
    if facts.budget is not None:
        budget = _budget_columns(rows, facts, cfg)
        for k, name in enumerate(("over_budget", "under_budget", "price_wish")):     # `budget_misfit`'s order
            x[:, COLUMN[name]] = budget[:, k]
        x[:, COLUMN["price_unknown"]] = [1.0 if p.price is None or p.price <= 0 else 0.0 for p in rows]
    if colours:
        x[:, COLUMN["colour"]] = [colour_agreement(p.title, colours) for p in rows]
    if said_materials:
        wanted = material_families(said_materials)
        x[:, COLUMN["material"]] = [material_agreement(_materials(p), wanted) for p in rows]
    if facts.styles:
        x[:, COLUMN["style"]] = _each([styles_named(p.title) for p in rows],
                                      lambda named: style_agreement(named, facts.styles))
    if facts.count is not None:
        x[:, COLUMN["count"]] = [count_agreement(facts.count, p.title) for p in rows]
    if facts.brands:
        x[:, COLUMN["brand"]] = _each([p.store for p in rows],
                                      lambda store: 1.0 if any(of_the_maker(store, n) for n in facts.brands) else -1.0)
    x[:, COLUMN["title_share"]] = _title_shares(rows, words)
    x[:, COLUMN["reviews"]] = [math.log1p(p.rating_number) for p in rows]
    return x


def _each(values: list, agreement: Callable[[Any], float]) -> list[float]:
    """`agreement` of each value, computed once per distinct value (a pool's few hundred candidates name a
    handful of audiences and cuts)."""
    memo: dict = {}
    return [memo[v] if v in memo else memo.setdefault(v, agreement(v)) for v in values]


# hand-set: the most words of a card value read for materials when the protocol's classifier does not call it
# material ("100% Linen", "Rubber sole", "Genuine suede upper": its rule knows nine material words).
SHORT_VALUE_WORDS = 4


@lru_cache(maxsize=1 << 16)
def _materials(product) -> frozenset[str]:
    """The material families a product names: its title, its card values classified as material and its
    short values (a long bullet's material words describe other things as often as the product)."""
    return named_materials(product.title, (v for t, v in zip(product.types, product.constraints)
                                           if t == "material" or len(v.split()) <= SHORT_VALUE_WORDS))


def _budget_columns(rows: list, facts: Facts, cfg: PeopleSettings) -> np.ndarray:
    """Over, under and off-the-wish budget misfits of each candidate (the wish against the pool's median
    price: "not too pricey" means cheaper than what matches, not cheaper than the whole catalog)."""
    prices = [p.price for p in rows if p.price is not None and p.price > 0]
    typical = float(np.median(prices)) if prices else None
    return np.asarray([budget_misfit(p.price, facts.budget, cfg, typical) for p in rows],
                      dtype=np.float64).reshape(len(rows), 3)


def _audience_agreement(audience: frozenset[str], facts: Facts) -> float:
    """+1 for whom the shopper named (of their sex, where both say one: `wearers_agree`), -1 for someone else or
    only for whom they ruled out, 0 unsaid, a grown-up the family word may mean ("my son": a man's product), or
    made for whom they named and for whom they ruled out too ("not for women": a unisex shoe is neither theirs nor
    ruled out)."""
    if not audience:
        return 0.0
    if audience <= facts.not_for:
        return -1.0
    if facts.audiences:
        if wearers_agree(audience, facts.audiences):
            return 0.0 if audience & facts.not_for else 1.0
        return 0.0 if audience & facts.grown_up else -1.0      # a man's shirt for "my son": maybe
    return 0.0


def _titled(product, words: frozenset[str]) -> bool:
    """Whether the title names one of `words` as something the product is or has ("Polos for Mens" after "not a
    polo"): the other number of a ruled-out word counts in the title only, where it names the product."""
    if not words:
        return False
    low = product.title.lower()
    return any(_last_part(w) in low and states_present(low, w) for w in words)


def states_any(index: CatalogIndex, i: int, words: frozenset[str] | set[str]) -> bool:
    """Whether a product states one of `words` as something it has, not only as something it lacks ("No Tag",
    "Nickel Free" state no tag, no nickel: `states_present`); for words ruled out and words asked about."""
    if not index.holds_any(i, _held_words(frozenset(words))):
        return False
    low = index.products[i].text.lower()
    return any(states_present(low, w) for w in words)


def _last_part(word: str) -> str:
    """A compound's word ("t-shirt": "shirt"), which the product text holds wherever it names the compound; a
    plain word itself."""
    return word.rsplit("-", 1)[-1]


@lru_cache(maxsize=1 << 10)
def _held_words(words: frozenset[str]) -> frozenset[str]:
    """The tokens of which a product holds one where it states one of `words`: a compound's word or the
    compound written as one word, in either number ("v-necks": a "V-Neck" holds "neck", a "Vneck" "vneck"); a
    plain word itself."""
    return frozenset(form for w in words
                     for form in (number_forms(_last_part(w)) | number_forms(w.replace("-", "")) if "-" in w else (w,)))


@lru_cache(maxsize=1 << 16)
def _title_words(title: str) -> tuple[str, ...]:
    """A title's own words, each as the first of its two numbers ("rings": "ring"), once each (memoised: a turn
    reads the same few hundred titles as the last; a tuple of strings, which the garbage collector does not
    walk); who it is for is the audience column's, and numbers and stop words name nothing a person says."""
    return tuple(dict.fromkeys(_first_number(w) for w in tokens(title)
                               if len(w) > 1 and not w.isdigit() and w not in STOP and w not in AUDIENCE_WORDS))


@lru_cache(maxsize=1 << 16)
def _first_number(word: str) -> str:
    """The first of a word's two numbers (memoised: titles share most of their words)."""
    return min(number_forms(word))


def _title_shares(rows: list, said: list[str]) -> list[float]:
    """Per product, the share of its title's own words that the conversation says (in either number)."""
    forms = frozenset(f for w in said for f in number_forms(w))
    out = []
    for p in rows:
        words = _title_words(p.title)
        out.append(len(forms.intersection(words)) / len(words) if words else 0.0)
    return out


def _behind_best(scores: np.ndarray) -> np.ndarray:
    """Scores less the best among the candidates (0 for the best; nothing to do for no candidates)."""
    return scores - scores.max() if len(scores) else scores


def _relative(scores: np.ndarray) -> np.ndarray:
    """Scores over the best among the candidates (all zero when none matches)."""
    top = float(scores.max()) if len(scores) else 0.0
    return scores / top if top > 0 else np.zeros_like(scores)
