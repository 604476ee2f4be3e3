"""Candidate retrieval, strictest first and never empty.

1. the exact shelf named by the opening (the protocol's category phrase is an
   exact shelf key);
2. when the phrase is not a shelf key: the shelves whose names the message
   covers best (fuzzy, typo-tolerant);
3. BM25 over the message's content words, within the guessed shelves and
   across the catalog;
4. the popularity floor of the whole catalog.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from starter.catalog import CatalogIndex, tokens
from starter.config import Tunables
from starter.parse import FILLER, Observation


@dataclass
class ShelfGuess:
    """Shelves the opening may name, each with a similarity in [0, 1]."""

    exact: str | None = None
    scored: dict[str, float] = field(default_factory=dict)


@dataclass
class Pool:
    """The candidate pool and how it was built (for the debug snapshot)."""

    ids: list[int]
    stages: dict[str, int]
    shelf: ShelfGuess


def guess_shelves(index: CatalogIndex, obs: Observation, cfg: Tunables) -> ShelfGuess:
    """Exact shelf key if the phrase is one, else the best fuzzy matches."""
    if obs.category:
        key = index.shelf_lower.get(obs.category.strip().lower())
        if key is not None:
            return ShelfGuess(exact=key, scored={key: 1.0})
    phrase = obs.category if obs.category else " ".join(t for t in tokens(obs.text) if t not in FILLER)
    if not phrase.strip():
        return ShelfGuess()
    choices = index.shelf_lower_keys
    # token_set_ratio rewards a shelf whose words all appear (in any order);
    # partial_token_set handles long free-text openings.
    hits = process.extract(phrase.lower(), choices, scorer=fuzz.token_set_ratio,
                           limit=cfg.fuzzy_shelves * 4, score_cutoff=cfg.fuzzy_shelf_min_score)
    scored: dict[str, float] = {}
    phrase_toks = set(tokens(phrase))
    for low, score, _ in hits:
        key = index.shelf_lower[low]
        key_toks = set(tokens(key))
        cover = len(key_toks & phrase_toks) / max(1, len(key_toks))
        scored[key] = 0.5 * (score / 100.0) + 0.5 * cover
    best = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))[: cfg.fuzzy_shelves]
    return ShelfGuess(exact=None, scored=dict(best))


def build_pool(index: CatalogIndex, obs: Observation, cfg: Tunables) -> Pool:
    """The opening's candidate pool."""
    guess = guess_shelves(index, obs, cfg)
    stages: dict[str, int] = {}
    if guess.exact is not None:
        ids = list(index.shelves[guess.exact])
        stages["exact_shelf"] = len(ids)
        return Pool(ids=ids, stages=stages, shelf=guess)
    seen: dict[int, None] = {}
    for key in guess.scored:
        for i in index.shelves[key]:
            seen.setdefault(i)
    stages["fuzzy_shelves"] = len(seen)
    words = [t for t in tokens(obs.text) if t not in FILLER]
    for i, _ in index.bm25(words, cfg.bm25_candidates):
        seen.setdefault(i)
    stages["bm25_catalog"] = len(seen)
    if not seen:
        for i in sorted(range(len(index.products)), key=lambda j: (-index.products[j].rating_number,
                                                                    index.products[j].pid))[: cfg.bm25_candidates]:
            seen.setdefault(i)
        stages["popularity_floor"] = len(seen)
    ids = list(seen)[: cfg.max_pool]
    return Pool(ids=ids, stages=stages, shelf=guess)


def expand_pool(index: CatalogIndex, pool: Pool, obs: Observation, cfg: Tunables) -> int:
    """Add clue and BM25 matches of a later message's words (soft path); returns how many were added."""
    present = set(pool.ids)
    added = 0
    if obs.value_text:
        for value in [obs.value_text] + [v.strip() for v in obs.value_text.split(";")]:
            for i in index.clues.get(value, ()):
                if i not in present:
                    present.add(i)
                    pool.ids.append(i)
                    added += 1
    if obs.keywords:
        for i, _ in index.bm25(obs.keywords, cfg.bm25_candidates // 2):
            if i not in present:
                present.add(i)
                pool.ids.append(i)
                added += 1
    pool.stages[f"expanded_{len(pool.stages)}"] = added
    return added
