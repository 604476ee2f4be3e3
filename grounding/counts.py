"""How many come in one listing: the count a shopper says ("a 3 pack", "set of three", "two pairs") and
the count a title states ("Pack of 3", "5 Pairs", "Set of 2").

People say the count in words the catalog spells in digits and another order ("pack of three" for
"3 Pack"), so BM25 over the words cannot see that they agree; one reader serves the message and the
title alike.  A bare number is never a count: it needs its unit ("for my 2 kids", "size 10" say none);
"2 piece" and "one-piece" name a cut, not how many come.
"""
from __future__ import annotations

import re
from functools import lru_cache

from grounding.words import NUMBER_WORDS

_NUMBER_WORDS = {**NUMBER_WORDS, "dozen": 12, "a dozen": 12}
_N = r"(\d{1,3}|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + r")"
_UNIT = r"(?:packs?|pk|pairs|pair|pcs|count|ct|sets?)"
# "2 in the pack", "5 in a set", "two lockets in one pack", "30 pairs in one pack" (up to two words between the
# count and "in"): a count of what comes in it, tried first so that "one pack" is not read on its own;
# "3 pack", "3-pack", "three pairs", "10pcs".
_BEFORE_RE = re.compile(r"\b" + _N + r"(?:\s+[a-z]+){0,2}?\s+in\s+(?:a|the|one|each)\s+(?:pack|set|box|bundle)\b|\b"
                        + _N + r"(?:\s*-\s*|\s*)" + _UNIT + r"\b", re.I)
# "pack of 3", "set of three", "bundle of 2"
_AFTER_RE = re.compile(r"\b(?:multi-?\s?)?(?:pack|set|bundle|box|pair)s?\s+of\s+" + _N + r"\b", re.I)
# "a multipack, like six of them", "you get two of them": how many come (not "I have three of them": how many
# the shopper has; nor "one of those": which one).
_OF_THEM_RE = re.compile(r"(?<!\bhave )(?<!\bown )\b(?!(?:one|a|1)\s)" + _N + r"\s+of\s+(?:them|those)\b", re.I)
_IN_RE = re.compile(r"\bin\s+$", re.I)
MAX_COUNT = 100     # hand-set bound: "250 pcs" of beads is a count, "1000 pack" is a typo or an id
# Every match of the patterns holds one of these (case-folded): a text without any states no count,
# and most titles are read without running the patterns.
_UNIT_PARTS = ("pack", "pk", "pair", "pcs", "count", "ct", "set", "box", "bundle", "of them", "of those")


def count_of(text: str) -> int | None:
    """The last count a text states with its unit, or None (later wins: "I thought one pair, but a
    two-pack")."""
    folded = text.casefold()
    if not any(part in folded for part in _UNIT_PARTS):
        return None
    return by_patterns(text)


def by_patterns(text: str) -> int | None:
    """`count_of` without the quick test for a unit word (what the test is checked against)."""
    spans: list[tuple[int, int, int]] = []
    for rx in (_BEFORE_RE, _AFTER_RE, _OF_THEM_RE):
        for m in rx.finditer(text):
            word = next(g for g in m.groups() if g)
            spans.append((m.start(), m.end(), _value(word)))
    # A match inside another says less than it: "one pack" within "two lockets in one pack"; and "in one pack"
    # names what they come in, not how many ("three pairs come together in one pack", "lots in one pack").
    found = [(a, n) for a, b, n in spans if 0 < n <= MAX_COUNT and not (n == 1 and _IN_RE.search(text, 0, a))
             and not any(a2 <= a and b <= b2 and (a2, b2) != (a, b) for a2, b2, _ in spans)]
    return max(found)[1] if found else None


def _value(word: str) -> int:
    low = word.lower()
    return int(low) if low.isdigit() else _NUMBER_WORDS[low]


@lru_cache(maxsize=65536)
def title_count(title: str) -> int | None:
    """`count_of` a product title, memoised: the people model asks it of every candidate every turn."""
    return count_of(title)


def count_agreement(said: int | None, title: str) -> float:
    """+1 when the title states the count said, -1 when it states another, 0 when either is silent."""
    if said is None:
        return 0.0
    stated = title_count(title)
    if stated is None:
        return 0.0
    return 1.0 if stated == said else -1.0
