"""The one shelf matcher: which coarse-category shelves a phrase names.

A template opening names its shelf exactly; a damaged or human phrase
("Women" for "Women Dresses", "chelsae boots") is scored against every shelf
by shared words, each phrase word corrected to the closest shelf word when it
is a likely typo.  The score mixes how much of the phrase a shelf explains
and how much of its own name the phrase covers, so every shelf the phrase
could be keeps an honest weight.  The gate reads a proposed category value
with the same scoring (`match`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from rapidfuzz import fuzz, process

from grounding.words import FILLER, tokens


@dataclass
class ShelfGuess:
    """Shelves a phrase may name, each with a similarity in [0, 1]."""

    exact: str | None = None
    scored: dict[str, float] = field(default_factory=dict)


class ShelfMatcher:
    """Shelf names as word sets, with an inverted index word -> shelves."""

    def __init__(self, shelf_sizes: Mapping[str, int], word_ratio_min: float, fuzzy_min_len: int) -> None:
        self.sizes = dict(shelf_sizes)
        self.keys: list[str] = sorted(self.sizes)
        self.lower: dict[str, str] = {}
        for key in self.keys:
            self.lower.setdefault(key.lower(), key)
        self.words: dict[str, frozenset[str]] = {k: frozenset(tokens(k)) or frozenset({k.lower()}) for k in self.keys}
        # Each shelf name as its tokens in order ("tees blouses tunics"), for spotting it spelled out.
        self.spelled: dict[str, str] = {k: " ".join(tokens(k)) for k in self.keys}
        self.by_word: dict[str, list[str]] = {}
        for key in self.keys:
            for tok in sorted(self.words[key]):
                self.by_word.setdefault(tok, []).append(key)
        self.vocab: frozenset[str] = frozenset(self.by_word)
        self._vocab_list: list[str] = sorted(self.vocab)
        self.word_ratio_min = word_ratio_min
        self.fuzzy_min_len = fuzzy_min_len

    def exact(self, phrase: str) -> str | None:
        """The shelf key a phrase spells (case and outer space ignored), else None."""
        return self.lower.get(phrase.strip().lower())

    def phrase_words(self, phrase: str) -> set[str]:
        """The phrase's words mapped onto shelf vocabulary (typos corrected when close)."""
        out: set[str] = set()
        for tok in tokens(phrase):
            if tok in FILLER and tok not in self.vocab:
                continue
            if tok in self.vocab:
                out.add(tok)
            elif len(tok) >= self.fuzzy_min_len:
                hit = process.extractOne(tok, self._vocab_list, scorer=fuzz.ratio, score_cutoff=self.word_ratio_min)
                if hit is not None:
                    out.add(hit[0])
        return out

    def guess(self, phrase: str, as_category: bool, limit: int, min_score: float,
              allow_exact: bool = True) -> ShelfGuess:
        """Exact shelf key if a category phrase is one, else shelves scored by shared words.

        A category phrase is judged by both sides equally; free text (which
        says much besides the category) by how much of the shelf name it covers.
        Best first; ties by shelf size (larger first), then key.
        """
        if as_category and allow_exact:
            key = self.exact(phrase)
            if key is not None:
                return ShelfGuess(exact=key, scored={key: 1.0})
        ptoks = self.phrase_words(phrase)
        if not ptoks:
            return ShelfGuess()
        scored: dict[str, float] = {}
        for key in {k for t in ptoks for k in self.by_word.get(t, ())}:
            stoks = self.words[key]
            common = len(stoks & ptoks)
            explained = common / len(ptoks)
            covered = common / len(stoks)
            scored[key] = 0.5 * (explained + covered) if as_category else covered * (0.5 + 0.5 * explained)
        best = sorted(scored.items(), key=lambda kv: (-kv[1], -self.sizes[kv[0]], kv[0]))
        best = [(k, v) for k, v in best if v >= min_score][:limit]
        return ShelfGuess(exact=None, scored=dict(best))

    def match(self, phrase: str, limit: int = 5) -> list[tuple[str, float]]:
        """Shelves a category value names, as (key, score 0..100) best first: the category reading of `guess`."""
        if not isinstance(phrase, str) or not phrase.strip():
            return []
        guess = self.guess(" ".join(phrase.split()), as_category=True, limit=limit, min_score=0.0)
        return [(k, round(100.0 * s, 4)) for k, s in guess.scored.items()]
