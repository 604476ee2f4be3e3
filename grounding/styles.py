"""Styles: whether the cut a shopper says is the cut a title names.

A product has one sleeve length, one rise, one fit, one neckline: a title that
names "Sleeveless" answers "long sleeve" as surely as a colour answers a colour,
though BM25 sees only that both hold the word "sleeve", and a bullet may name
every cut at once.  Each group lists the values that exclude one another, each
value its everyday spellings ("v neck", "v-neck"); a title that names several
values of a group agrees with any of them.  What a shopper says of a group
later replaces what they said of it before ("flat ankle boots" ... "actually
I want heels").
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from grounding.negation import phrase_words

_S = r"[\s-]*"
# The words before a verb "slip" that say it does not ("won't", "doesn't", "non", "anti"); "not slip-on" stays a
# mention, which the negation then takes back.
_NOT_SLIPPING = "".join(rf"(?<!{w}[ -])" for w in ("n't", "n’t", "wont", "dont", "non", "anti"))
STYLE_GROUPS: dict[str, dict[str, str]] = {
    "sleeve": {"sleeveless": r"sleeveless|tank\s+tops?", "short": rf"short{_S}sleeve[sd]?",
               "long": rf"long{_S}sleeve[sd]?", "three_quarter": rf"3/4{_S}sleeve[sd]?|three{_S}quarter"},
    "length": {"maxi": r"maxi", "midi": r"midi", "mini": rf"mini(?!{_S}(?:me|bags?|backpacks?|wallets?|purses?)\b)"},
    "rise": {"high": rf"high{_S}(?:waist(?:ed)?|rise)", "low": rf"low{_S}(?:waist(?:ed)?|rise)",
             "mid": rf"mid{_S}(?:waist(?:ed)?|rise)"},
    "fit": {"slim": rf"slim{_S}fit", "loose": rf"loose{_S}fit|relaxed{_S}fit|oversized?|baggy",
            "regular": rf"regular{_S}fit|classic{_S}fit"},
    "leg": {"skinny": r"skinny", "wide": rf"wide{_S}leg|palazzo", "straight": rf"straight{_S}leg",
            "bootcut": rf"boot{_S}cut", "flare": rf"flared?|bell{_S}bottoms?"},
    "neck": {"v": rf"v{_S}neck(?:s|ed)?", "crew": rf"(?:crew|round){_S}neck(?:s|ed)?",
             "turtle": rf"(?:turtle|mock){_S}neck(?:s|ed)?", "scoop": rf"scoop{_S}neck(?:s|ed)?",
             "off_shoulder": rf"off{_S}(?:the{_S})?shoulders?", "halter": r"halter"},
    # "slip on" is also a verb: on what ("I don't want to slip on ice") or after what denies it ("won't slip on
    # oily floors", "non slip on wet floors").
    "closure": {"zip": rf"zip(?:pers?|pered|s)?|zip{_S}up", "button": rf"button{_S}(?:up|down|front)",
                "slip_on": rf"{_NOT_SLIPPING}slip{_S}ons?"
                           rf"(?!{_S}(?:ice|snow|wet|the|a|an|it|them|floors?|stairs|tiles?)\b)|pull{_S}on",
                "lace_up": rf"lace{_S}up", "hook_loop": rf"velcro|hook{_S}and{_S}loop"},
    "heel": {"flat": r"flats?", "wedge": r"wedges?",
             "heeled": rf"(?:high|chunky|block|kitten|stiletto|platform){_S}heel(?:s|ed)?|heels|heeled|stilettos?"},
}
Style = tuple[str, str]          # (group, value): ("sleeve", "long")

# One pass finds every mention (one alternation, whole words, over the lower-cased text: named groups would make
# it twenty times slower); each mention is then told apart by the value patterns, tried in the same order.
_ANY_RE = re.compile(r"\b(?:" + "|".join(p for values in STYLE_GROUPS.values() for p in values.values()) + r")\b")
_VALUE_RES: tuple[tuple[Style, re.Pattern[str]], ...] = tuple(
    ((group, value), re.compile(pattern))
    for group, values in STYLE_GROUPS.items() for value, pattern in values.items())


def style_mentions(text: str) -> list[tuple[Style, frozenset[str]]]:
    """Every style the text names, in order, with the words that name it (so that a negation of one of those
    words, "not baggy", can take the mention back)."""
    out = []
    for m in _ANY_RE.finditer(text.lower()):
        said = m.group()
        style = next(style for style, rx in _VALUE_RES if rx.fullmatch(said))
        out.append((style, frozenset(phrase_words(said))))
    return out


@lru_cache(maxsize=1 << 16)
def styles_named(text: str) -> frozenset[Style]:
    """The styles a text (a title) names (memoised: a turn reads the same few hundred titles as the last)."""
    return frozenset(style for style, _ in style_mentions(text))


def style_agreement(named: Iterable[Style], said: Iterable[Style]) -> float:
    """Per group the shopper said a value of: +1 when the title names one of the values said, -1 when it
    names only other values of that group, 0 when it names none (summed over the groups)."""
    wanted: dict[str, set[str]] = {}
    for group, value in said:
        wanted.setdefault(group, set()).add(value)
    if not wanted:
        return 0.0
    has: dict[str, set[str]] = {}
    for group, value in named:
        has.setdefault(group, set()).add(value)
    score = 0.0
    for group, values in wanted.items():
        if group in has:
            score += 1.0 if has[group] & values else -1.0
    return score
