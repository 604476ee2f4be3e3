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
from typing import Iterable

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

    def add(self, candidates: Iterable[int]) -> list[int]:
        """Append the candidates not yet in the pool, in order; returns the new ones."""
        present = set(self.ids)
        new: list[int] = []
        for i in candidates:
            if i not in present:
                present.add(i)
                new.append(i)
        self.ids.extend(new)
        return new


def _phrase_tokens(index: CatalogIndex, phrase: str) -> set[str]:
    """The phrase's words mapped onto shelf vocabulary (typos corrected when close)."""
    out: set[str] = set()
    for tok in tokens(phrase):
        if tok in FILLER and tok not in index.shelf_vocab:
            continue
        if tok in index.shelf_vocab:
            out.add(tok)
        elif len(tok) >= 4:
            hit = process.extractOne(tok, index.shelf_vocab_list, scorer=fuzz.ratio, score_cutoff=85)
            if hit is not None:
                out.add(hit[0])
    return out


def guess_shelves(index: CatalogIndex, obs: Observation, cfg: Tunables, allow_exact: bool = True) -> ShelfGuess:
    """Exact shelf key if the phrase is one, else shelves scored by shared words.

    A shelf's score mixes how much of the phrase it explains and how much of
    its own name the phrase covers, so a damaged phrase ("Women" for "Women
    Dresses") keeps every shelf it could be, each with an honest weight.
    """
    if obs.category and allow_exact:
        key = index.shelf_lower.get(obs.category.strip().lower())
        if key is not None:
            return ShelfGuess(exact=key, scored={key: 1.0})
    phrase = obs.category if obs.category else obs.text
    ptoks = _phrase_tokens(index, phrase)
    if not ptoks:
        return ShelfGuess()
    scored: dict[str, float] = {}
    for key in {k for t in ptoks for k in index.shelf_by_token.get(t, ())}:
        stoks = index.shelf_tokens[key]
        common = len(stoks & ptoks)
        explained = common / len(ptoks)
        covered = common / len(stoks)
        scored[key] = covered * (0.5 + 0.5 * explained) if obs.category is None else 0.5 * (explained + covered)
    best = sorted(scored.items(), key=lambda kv: (-kv[1], -len(index.shelves[kv[0]]), kv[0]))
    best = [(k, v) for k, v in best if v >= cfg.fuzzy_shelf_min_score][: cfg.fuzzy_shelves]
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
        if len(seen) >= cfg.max_pool:
            break
        for i in index.shelves[key]:
            seen.setdefault(i)
    stages["fuzzy_shelves"] = len(seen)
    if obs.value_text:
        for i in index.clues.get(obs.value_text, ()):
            seen.setdefault(i)
        stages["clue_catalog"] = len(seen)
    words = [t for t in tokens(obs.value_text or obs.text) if t not in FILLER]
    for i, _ in index.bm25(words, cfg.bm25_candidates):
        seen.setdefault(i)
    stages["bm25_catalog"] = len(seen)
    if not seen:
        for i in index.popular[: cfg.bm25_candidates]:
            seen.setdefault(i)
        stages["popularity_floor"] = len(seen)
    ids = list(seen)[: cfg.max_pool + cfg.bm25_candidates]
    return Pool(ids=ids, stages=stages, shelf=guess)


def widen_shelf(index: CatalogIndex, pool: Pool, opening: Observation, cfg: Tunables) -> list[int]:
    """The named shelf explains nothing: its name may itself be a damaged one.

    Re-reads the phrase as a fuzzy guess (the named shelf keeps score 1) and
    adds the guessed shelves' products; returns the new ids.
    """
    named = pool.shelf.exact
    guess = guess_shelves(index, opening, cfg, allow_exact=False)
    if named is not None:
        guess.scored[named] = 1.0
    pool.shelf = ShelfGuess(exact=None, scored=guess.scored)
    new: list[int] = []
    for key in sorted(guess.scored, key=lambda k: (-guess.scored[k], k)):
        if len(pool.ids) >= cfg.max_pool:
            break
        new += pool.add(index.shelves[key])
    pool.stages["widened_shelves"] = len(new)
    return new


def value_clue_hits(index: CatalogIndex, value_text: str, limit: int) -> list[int]:
    """Products whose card holds the said value(s) verbatim: the whole text as one
    clue, else the products holding every "; "-separated part (values may contain ";")."""
    whole = index.clues.get(value_text)
    if whole is not None:
        return whole if len(whole) <= limit else []
    parts = [v.strip() for v in value_text.split(";") if v.strip()]
    sets = [index.clues.get(v) for v in parts]
    known = [set(x) for x in sets if x]
    if not known:
        return []
    common = set.intersection(*known)
    return sorted(common)[:limit] if len(common) <= limit else []


def expand_pool(index: CatalogIndex, pool: Pool, obs: Observation, cfg: Tunables) -> list[int]:
    """Add clue and BM25 matches of a later message (when the shelf was only guessed); returns the new ids."""
    candidates: list[int] = []
    if obs.value_text:
        candidates.extend(value_clue_hits(index, obs.value_text, cfg.bm25_candidates * 10))
    words = obs.keywords if not obs.value_text else [t for t in tokens(obs.value_text) if t not in FILLER]
    candidates.extend(i for i, _ in index.bm25(words, cfg.bm25_candidates // 2))
    new = pool.add(candidates)
    pool.stages[f"expanded_turn_{len([k for k in pool.stages if k.startswith('expanded')]) + 2}"] = len(new)
    return new
