"""Colour families: whether the colour a shopper says is the colour a title names.

People say the basic word ("gray", "red", "green") for a colour a title names
by its shade or its other spelling ("Dark Grey", "Burgundy", "Neo Mint"), so
words are compared by family, and a shade may belong to two ("coral" is pink
and orange).  Words of tone or pattern ("dark", "light", "leopard", "camo")
name no family; a multicoloured title neither agrees nor disagrees with any
colour said.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Iterable

from grounding.words import families_named, tokens, word_families

_FAMILY_WORDS = {
    "black": "black jet onyx",
    "white": "white ivory cream snow",
    "gray": "gray grey charcoal smoke slate graphite",
    "blue": "blue navy teal turquoise aqua cyan indigo sapphire cobalt",
    "red": "red maroon burgundy wine ruby crimson scarlet cherry",
    "pink": "pink rose fuchsia magenta coral blush salmon",
    "purple": "purple lavender lilac violet plum mauve",
    "green": "green olive mint emerald sage teal khaki",
    "yellow": "yellow mustard lemon",
    "orange": "orange rust apricot peach coral tangerine",
    "brown": "brown tan camel taupe khaki chocolate coffee mocha rust bronze cognac",
    "beige": "beige nude cream khaki tan camel taupe champagne ivory sand oatmeal",
    "gold": "gold champagne",
    "silver": "silver",
}
FAMILIES = word_families(_FAMILY_WORDS)
MULTICOLOURED = frozenset("multicolor multicolored multicolour multicoloured multi rainbow assorted".split())
# hand-set: shade words that shoppers of this catalog mostly use for something else ("snow boots", "coral
# fleece", "mint condition", "with coffee"); a title that names them still counts, a message does not.
_OTHER_SENSES = frozenset("""snow smoke wine coffee cherry chocolate lemon salmon sand jet rust plum sage mint peach
champagne coral""".split())
SAID_SHADES = frozenset(FAMILIES) - _OTHER_SENSES


def families(words: Iterable[str]) -> frozenset[str]:
    """The colour families the words name (a word of no family names none)."""
    return families_named(FAMILIES, words)


def colours_said(text: str) -> frozenset[str]:
    """The words of a message that name a colour of a family, shades included ("maroon", "dusty rose",
    "cream"), before any negation is taken out."""
    return frozenset(w for w in tokens(text.lower()) if w in SAID_SHADES)


def colour_agreement(title: str, said: Iterable[str]) -> float:
    """+1 when the title names a colour of a family the shopper said, -1 when it names colours of other
    families only, 0 when either names none or the title is multicoloured."""
    wanted = families(said)
    if not wanted:
        return 0.0
    named = _title_families(title)
    if not named:
        return 0.0
    return 1.0 if named & wanted else -1.0


@lru_cache(maxsize=1 << 16)
def _title_families(title: str) -> frozenset[str]:
    """The colour families a title names, none when it is multicoloured (memoised: a turn reads the same few
    hundred titles as the last)."""
    words = tokens(title)
    return frozenset() if MULTICOLOURED & set(words) else families(words)
