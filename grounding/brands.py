"""Brands: store names a shopper says ("Rockport", "fruit of the loom", "rokport"), read against the catalog's.

Nothing is read as a brand unless a catalog store has that name.  The
message's word sequences (up to `max_words`) are looked up among the store
names as lower-cased words; a single long word that is no catalog word may be
a misspelt one-word store name (one slip -- a letter wrong, missing, extra, or
two swapped -- in a word of `fuzzy_min_chars` letters or more, two from
`fuzzy_long_chars`) when no product's text uses it.  A
store name that is an everyday product word ("Black", "Classic": the catalog's
cards use the word on many more products than the store has) is refused when
said, with its reason, as every other grounding is; one that is only everyday
words or too short to tell from a word ("ON") is never looked for.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein

from grounding.words import STOP, tokens


@dataclass(frozen=True)
class BrandMention:
    store: str        # the store name as the catalog writes it
    said: str         # the shopper's words that named it
    source: str       # "exact" or "fuzzy"


@dataclass(frozen=True)
class BrandRejection:
    said: str
    store: str
    reason: str


class BrandMatcher:
    """Store names by their lower-cased words; `read` finds the ones a message names."""

    def __init__(self, store_sizes: Mapping[str, int], word_df: Callable[[str], int],
                 text_df: Callable[[str], int] | None = None, everyday: frozenset[str] = STOP, max_words: int = 4,
                 min_chars: int = 4, common_ratio: float = 3.0, fuzzy_min_chars: int = 5,
                 fuzzy_long_chars: int = 9) -> None:
        """`word_df`: products whose card values hold a word; `text_df`: products whose any text holds it
        (a word some product's text uses is not a misspelling; default `word_df`)."""
        self.word_df = word_df
        self.text_df = text_df or word_df
        self.everyday = everyday | STOP
        self.max_words, self.min_chars, self.common_ratio = max_words, min_chars, common_ratio
        self.fuzzy_min_chars, self.fuzzy_long_chars = fuzzy_min_chars, fuzzy_long_chars
        self.sizes = dict(store_sizes)
        # Words -> the store names written so (most products first, then by name: one answer, always).
        # A name that is only everyday words, or one word too short to tell from a word ("ON"), is no
        # brand in any message: such names are not looked for (`unreadable` keeps them, with why).
        by_words: dict[tuple[str, ...], list[str]] = {}
        self.unreadable: dict[str, str] = {}
        for name in sorted(self.sizes, key=lambda s: (-self.sizes[s], s)):
            words = tuple(tokens(name))
            if not words or len(words) > max_words:
                continue
            if len(words) == 1 and len(words[0]) < min_chars:
                self.unreadable[name] = "too short to tell a brand from a word"
            elif all(w in self.everyday for w in words):
                self.unreadable[name] = "everyday words, not read as a brand"
            else:
                by_words.setdefault(words, []).append(name)
        self.by_words = by_words
        self.single = sorted(w[0] for w in by_words if len(w) == 1 and len(w[0]) >= fuzzy_min_chars)

    def read(self, text: str) -> tuple[list[BrandMention], list[BrandRejection]]:
        """The stores a message names (each once, in the order said) and the names refused."""
        words = tokens(text)
        found: list[BrandMention] = []
        refused: list[BrandRejection] = []
        used = [False] * len(words)
        for n in range(min(self.max_words, len(words)), 0, -1):          # longest names first
            for i in range(len(words) - n + 1):
                if any(used[i:i + n]):
                    continue
                names = self.by_words.get(tuple(words[i:i + n]))
                if not names:
                    continue
                said, store = " ".join(words[i:i + n]), names[0]
                why = self._refusal(words[i:i + n], store)
                if why:
                    refused.append(BrandRejection(said, store, why))
                    continue
                used[i:i + n] = [True] * n
                found.append(BrandMention(store, said, "exact"))
        for i, w in enumerate(words):
            if used[i] or len(w) < self.fuzzy_min_chars or w in self.everyday or not self.single \
                    or self.word_df(w) > 0 or self.text_df(w) > 0:
                continue
            slips = 1 if len(w) < self.fuzzy_long_chars else 2
            got = process.extractOne(w, self.single, scorer=DamerauLevenshtein.distance, score_cutoff=slips)
            if got is not None:
                store = self.by_words[(got[0],)][0]
                found.append(BrandMention(store, w, "fuzzy"))
        seen: set[str] = set()
        return [m for m in found if not (m.store in seen or seen.add(m.store))], refused

    def _refusal(self, words: list[str], store: str) -> str | None:
        """Why a store name said in a message is not read as a brand (None: it is): every word of it
        that is not an everyday word is a product word ("The Classic", "Black")."""
        content = [w for w in words if w not in self.everyday]
        if all(self.word_df(w) > self.common_ratio * self.sizes.get(store, 0) for w in content):
            return "product words on many more products than the store has"
        return None
