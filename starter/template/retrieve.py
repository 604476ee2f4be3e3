"""Candidate retrieval, strictest first and never empty.

1. the exact shelf named by the opening (the protocol's category phrase is an
   exact shelf key);
2. when the phrase is not a shelf key: the shelves whose names the message
   covers best (`grounding.shelves`, typo-tolerant);
3. BM25 over the message's content words, within the guessed shelves and
   across the catalog;
4. the popularity floor of the whole catalog.

Functions here read the pool and return what to add (`Growth`); the state
reducer is the only writer of the pool.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

from grounding.shelves import ShelfGuess, ShelfMatcher
from grounding.words import FILLER, tokens
from starter.index.catalog import CatalogIndex
from starter.settings import RetrievalSettings
from starter.reading.understand import Reading


@dataclass
class Pool:
    """The candidate pool and how it was built (for the trace)."""

    ids: list[int]
    stages: dict[str, int]
    shelf: ShelfGuess
    present: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.present = set(self.ids)


@dataclass(frozen=True)
class Growth:
    """Candidates a retrieval step adds to the pool, under a named stage (and a new shelf guess)."""

    ids: tuple[int, ...]
    stage: str
    shelf: ShelfGuess | None = None


def new_ids(present: set[int], candidates: Iterable[int]) -> list[int]:
    """The candidates not yet present, in order, each once."""
    seen = set(present)
    out: list[int] = []
    for i in candidates:
        if i not in seen:
            seen.add(i)
            out.append(i)
    return out


def guess_shelves(shelves: ShelfMatcher, obs: Reading, cfg: RetrievalSettings, allow_exact: bool = True) -> ShelfGuess:
    """The shelves the opening names: its category phrase, else its whole text."""
    phrase = obs.category if obs.category else obs.text
    return shelves.guess(phrase, obs.category is not None, cfg.fuzzy_shelves, cfg.fuzzy_shelf_min_score, allow_exact)


def opening_words(obs: Reading) -> list[str]:
    """The opening's content words: what its catalog-wide BM25 query asks for."""
    return [t for t in tokens(obs.value_text or obs.text) if t not in FILLER]


def build_pool(index: CatalogIndex, shelves: ShelfMatcher, obs: Reading, cfg: RetrievalSettings,
               catalog_hits: list[tuple[int, float]] | None = None) -> Pool:
    """The opening's candidate pool (`catalog_hits`: its BM25 query's answer, when already asked)."""
    guess = guess_shelves(shelves, obs, cfg)
    stages: dict[str, int] = {}
    if guess.exact is not None:
        ids = list(index.shelves[guess.exact])
        stages["exact_shelf"] = len(ids)
        return Pool(ids=ids, stages=stages, shelf=guess)
    seen: dict[int, None] = {}
    for key in guess.scored:
        if len(seen) >= cfg.max_pool:
            break
        for i in index.shelves[key]:
            seen.setdefault(i)
    stages["fuzzy_shelves"] = len(seen)
    if obs.value_text:
        for i in index.clues.get(obs.value_text, ()):
            seen.setdefault(i)
        stages["clue_catalog"] = len(seen)
    if catalog_hits is None:
        catalog_hits = index.bm25(opening_words(obs), cfg.bm25_candidates)
    for i, _ in catalog_hits:
        seen.setdefault(i)
    stages["bm25_catalog"] = len(seen)
    if not seen:
        for i in index.popular[: cfg.bm25_candidates]:
            seen.setdefault(i)
        stages["popularity_floor"] = len(seen)
    ids = list(seen)[: cfg.max_pool + cfg.bm25_candidates]
    return Pool(ids=ids, stages=stages, shelf=guess)


def widen_shelf(index: CatalogIndex, shelves: ShelfMatcher, pool: Pool, opening: Reading, cfg: RetrievalSettings) -> Growth:
    """The named shelf explains nothing: its name may itself be a damaged one.

    Re-reads the phrase as a fuzzy guess (the named shelf keeps score 1) and
    adds the guessed shelves' products.
    """
    named = pool.shelf.exact
    guess = guess_shelves(shelves, opening, cfg, allow_exact=False)
    if named is not None:
        guess.scored[named] = 1.0
    present = set(pool.present)
    size = len(pool.ids)
    added: list[int] = []
    for key in sorted(guess.scored, key=lambda k: (-guess.scored[k], k)):
        if size >= cfg.max_pool:
            break
        fresh = new_ids(present, index.shelves[key])
        present.update(fresh)
        size += len(fresh)
        added += fresh
    return Growth(tuple(added), "widened_shelves", ShelfGuess(exact=None, scored=guess.scored))


def value_clue_hits(index: CatalogIndex, value_text: str, limit: int) -> list[int]:
    """Products whose card holds the said value(s) verbatim: the whole text as one
    clue, else the products holding every "; "-separated part (values may contain ";")."""
    whole = index.clues.get(value_text)
    if whole is not None:
        return whole if len(whole) <= limit else []
    common = list(_holding_every_part(index, value_text))
    return sorted(common)[:limit] if len(common) <= limit else []


def has_value_clue(index: CatalogIndex, value_text: str) -> bool:
    """Whether some product's card holds the said value(s) verbatim: `value_clue_hits` with no limit is
    non-empty (found without listing them all)."""
    if value_text in index.clues:
        return True            # every card value is on some card
    return any(True for _ in _holding_every_part(index, value_text))


def _holding_every_part(index: CatalogIndex, value_text: str) -> Iterator[int]:
    """The products whose card holds every "; "-part of the text that is a catalog value (none when
    no part is).  Those of the part with the fewest products are checked against the other parts on
    their own cards: no set of a common value's thousands of products is built."""
    parts = [v.strip() for v in value_text.split(";") if v.strip()]
    known = [(len(ids), k) for k, ids in enumerate(index.clues.get(v) for v in parts) if ids]
    if not known:
        return iter(())
    _, rarest = min(known)
    others = list(dict.fromkeys(parts[k] for _, k in known if k != rarest))
    products = index.products
    return (i for i in index.clues[parts[rarest]] if all(v in products[i].constraints for v in others))


def expand_pool(index: CatalogIndex, pool: Pool, obs: Reading, cfg: RetrievalSettings) -> Growth:
    """Clue and BM25 matches of a later message (when the shelf was only guessed)."""
    candidates: list[int] = []
    if obs.value_text:
        candidates.extend(value_clue_hits(index, obs.value_text, cfg.bm25_candidates * 10))
    words = list(obs.keywords) if not obs.value_text else [t for t in tokens(obs.value_text) if t not in FILLER]
    candidates.extend(i for i, _ in index.bm25(words, cfg.bm25_candidates // 2))
    stage = f"expanded_turn_{len([k for k in pool.stages if k.startswith('expanded')]) + 2}"
    return Growth(tuple(new_ids(pool.present, candidates)), stage)


def clue_growth(index: CatalogIndex, pool: Pool, clue_matches: list[tuple[str, float]], cfg: RetrievalSettings,
                turn: int) -> Growth:
    """Products of the clues a free-text message fuzzily names, not yet in the pool."""
    named = [index.clues.get(clue, []) for clue, score in clue_matches if score >= cfg.clue_match_min]
    fresh = new_ids(pool.present, (i for ids in named if len(ids) <= cfg.clue_products_max for i in ids))
    return Growth(tuple(fresh), f"fuzzy_clues_turn_{turn}")
