"""Brands: store names a shopper says ("Rockport", "fruit of the loom", "rokport"), read against the catalog's.

Nothing is read as a brand unless a catalog store has that name.  The
message's word sequences (up to `brand_max_words`) are looked up among the
store names as lower-cased words.  A misspelt name is a run of words within one
slip (a letter wrong, missing, extra, or two swapped) of a store name of as many
words -- two slips from `brand_fuzzy_long_chars` letters -- when one of its
words is no word any product's text uses, nor one made from such a word by an
everyday ending ("newer", "sturdier" are no slips of "Neewer", "Sturdi").  A store name that is an everyday
product word ("Black", "The Classic": the catalog's cards use its words on many
more products than the store has) is refused when said, with its reason, as
every other grounding is; one that is only everyday words or too short to tell
from a word ("ON") is never looked for.  The thresholds are
`GroundingTunables` (values in `starter/settings.py`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Mapping

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein

from grounding.settings import GroundingTunables
from grounding.words import STOP, tokens, tokens_with_spans


# Endings that make an everyday word of a catalog word: (ending, what it replaces), longest first; "y" makes an
# adjective ("cottony", "old-timey": no slips of "Cottonly", "Timex").
INFLECTIONS = (("iest", "y"), ("ier", "y"), ("ily", "y"), ("est", ""), ("ing", ""), ("er", ""), ("ly", ""),
               ("ed", ""), ("r", ""), ("d", ""), ("y", ""))


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

    def __init__(self, store_sizes: Mapping[str, int], word_df: Callable[[str], int], tunables: GroundingTunables,
                 text_df: Callable[[str], int] | None = None, everyday: frozenset[str] = STOP) -> None:
        """`word_df`: products whose card values hold a word; `text_df`: products whose any text holds it
        (a word some product's text uses is not a misspelling; default `word_df`)."""
        self.word_df = word_df
        self.text_df = text_df or word_df
        self.everyday = everyday | STOP
        max_words, min_chars = tunables.brand_max_words, tunables.brand_min_chars
        self.max_words, self.common_ratio = max_words, tunables.brand_common_ratio
        self.fuzzy_min_chars, self.fuzzy_long_chars = tunables.brand_fuzzy_min_chars, tunables.brand_fuzzy_long_chars
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
        # For misspelt names: per number of words, the names' words joined by a space (long enough to
        # tell a slip from another word), and the store each stands for.
        self.fuzzy_names: dict[int, list[str]] = {}
        self.by_joined: dict[str, str] = {}
        for words, names in by_words.items():
            joined = " ".join(words)
            if len(joined) >= self.fuzzy_min_chars:
                self.fuzzy_names.setdefault(len(words), []).append(joined)
                self.by_joined[joined] = names[0]
        for choices in self.fuzzy_names.values():
            choices.sort()

    def read(self, text: str) -> tuple[list[BrandMention], list[BrandRejection]]:
        """The stores a message names (each once, in the order said) and the names refused."""
        spans = tokens_with_spans(text)
        words = [w for w, _, _ in spans]
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
                why = self._refusal(words[i:i + n], store) or _said_as_a_word(text, spans, i, n)
                used[i:i + n] = [True] * n              # refused, the words are read: no slip of a name either
                if why:
                    refused.append(BrandRejection(said, store, why))
                    continue
                found.append(BrandMention(store, said, "exact"))
        # A misspelt name: a run of words, one of them no catalog word at all, within a slip or two of a
        # store name of as many words.
        unknown = [not used[i] and w not in self.everyday and not self._known(w) and not self._inflected(w)
                   for i, w in enumerate(words)]
        for n in range(min(self.max_words, len(words)), 0, -1):
            choices = self.fuzzy_names.get(n)
            for i in range(len(words) - n + 1):
                if not choices or any(used[i:i + n]) or not any(unknown[i:i + n]):
                    continue
                said = " ".join(words[i:i + n])
                if len(said) < self.fuzzy_min_chars:
                    continue
                slips = 1 if len(said) < self.fuzzy_long_chars else 2
                got = process.extractOne(said, choices, scorer=DamerauLevenshtein.distance, score_cutoff=slips)
                if got is None:
                    continue
                store = self.by_joined[got[0]]
                if n > 1 and self._refusal(got[0].split(" "), store):
                    continue      # "the clasic": a slip away from product words; one misspelt word is no such word
                used[i:i + n] = [True] * n
                found.append(BrandMention(store, said, "fuzzy"))
        seen: set[str] = set()
        return [m for m in found if not (m.store in seen or seen.add(m.store))], refused

    def _known(self, word: str) -> bool:
        return self.word_df(word) > 0 or self.text_df(word) > 0

    def _inflected(self, word: str) -> bool:
        """A word formed from a catalog word by a comparative, adverb, verb or adjective ending ("newer", "nicer",
        "sturdier", "lighter", "faded", "cottony") is an everyday word, not a slip of a store name ("Neewer")."""
        for suffix, base in INFLECTIONS:
            stem = word[:-len(suffix)] + base if word.endswith(suffix) and not word.endswith(2 * suffix) else ""
            if len(stem) >= 3 and self._known(stem):
                return True
        return False

    def _refusal(self, words: list[str], store: str) -> str | None:
        """Why a store name said in a message is not read as a brand (None: it is): every word of it
        that is not an everyday word is a product word ("The Classic", "Black")."""
        content = [w for w in words if w not in self.everyday]
        if all(self.word_df(w) > self.common_ratio * self.sizes.get(store, 0) for w in content):
            return "product words on many more products than the store has"
        return None


# "so I start a new job", "we rush out": a name right after a subject is a verb there.
_SUBJECTS = frozenset("i we you they".split())
# What ends a clause right after a word ("rushing out the door, so ...").
_CLAUSE_END_RE = re.compile(r"\s*[.,;!?]")


def _said_as_a_word(text: str, spans: list[tuple[str, int, int]], i: int, n: int) -> str | None:
    """Why the store name said as the tokens `spans[i:i + n]` of `text` is an everyday word there (None: it may
    name the store): a verb after a subject ("so I start a new job"), or a noun after "the" that ends its clause
    or is "of" something ("rushing out the door", "the champion of hide and seek"); a brand said after "the"
    names what it makes or is called one ("the Hanes one", "the Lare brand")."""
    before = spans[i - 1][0] if i else ""
    if before in _SUBJECTS:
        return "a verb after a subject, not a brand"
    after = spans[i + n][0] if i + n < len(spans) else ""
    if before == "the" and (not after or after == "of" or _CLAUSE_END_RE.match(text, spans[i + n - 1][2])):
        return "an everyday noun after \"the\", not a brand"
    return None


def of_the_maker(store: str, named: str) -> bool:
    """Whether a product of `store` is one of the maker a shopper named by the store name `named`: the same
    store, or one of its lines, whose name begins with the maker's ("Wrangler Authentics" and "Timberland PRO"
    are Wrangler's and Timberland's; "Hanes" is not "Hanesbrands Inc.")."""
    if store == named:
        return True
    words, maker = store.lower().split(), named.lower().split()
    return bool(maker) and len(words) > len(maker) and words[:len(maker)] == maker
