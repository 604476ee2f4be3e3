"""Is a word what a person meant by a word they typed?

The clue index offers the closest catalog word to any word it does not know, and
most words a person types that the catalog lacks are English, not slips:
"supposed" is not "supported", "hates" not "hats", "brain" not "rain", "calling"
not "falling".  A typing slip keeps the first letter and is one edit away (a
letter missed, swapped, replaced or doubled: "windbreker", "wieght", "jeens",
"jeanss"); a word the shopper typed whole with one letter more than a catalog
word ("hates", "heard", "spent") is a different word unless that letter doubles
its neighbour.

The same holds for the few words a message turns on that no listing uses: "undre 40",
"nne of these", "insted", "nothign fancy" are read as the cue word meant (`respell_cues`),
before anything reads the message.  The list is hand-set and short on purpose: a longer
one (every stop word, the wearers, the numbers) reads English words the catalog lacks as
slips ("hers" as "here", "chili" as "child", "fifth" as "fifty", "newer" as "never").
"""
from __future__ import annotations

import re
from typing import Callable, Iterator

from rapidfuzz import fuzz
from rapidfuzz.distance import OSA

from grounding.person_words import PEOPLE_STOP
from grounding.slang import SLANG
from grounding.words import tokens

# The stop and conversation words of three letters or more, by first letter (a slip keeps the first letter).
_PLAIN_BY_LETTER: dict[str, tuple[str, ...]] = {}
for _w in sorted(w for w in PEOPLE_STOP if len(w) >= 3 and w.isalpha()):
    _PLAIN_BY_LETTER[_w[0]] = _PLAIN_BY_LETTER.get(_w[0], ()) + (_w,)

# The cue words of the budget, negation, "none of these" and change-of-mind readers, and the unit that tells
# the budget reader a length from a price ("bout 48 igches long").
CUE_WORDS = tuple(sorted("""
under over around dollars bucks budget cheaper cheapest expensive pricey
none nothing these those instead actually without anything inches
""".split()))


def plausible_slip(typed: str, meant: str) -> bool:
    """Whether `meant` (a catalog word) is a likely slip of the keyboard for `typed`."""
    if not typed or not meant or typed[0] != meant[0] or OSA.distance(typed, meant) != 1:
        return False
    if len(typed) == len(meant) + 1:
        extra = next((k for k in range(len(meant)) if typed[k] != meant[k]), len(meant))
        return typed[extra] == typed[extra - 1]
    return True


def nearer_a_plain_word(typed: str, meant: str) -> bool:
    """Whether a word typed with a slip is at least as near (`fuzz.ratio`) a plain word it is a plausible slip of
    (a stop or conversation word) as the catalog word `meant`: "wiith" is "with", not "width"; "lke" is "like".
    "sumer" stays "summer" (nearer than "super")."""
    near = fuzz.ratio(typed, meant)
    return any(w != meant and abs(len(w) - len(typed)) <= 1 and plausible_slip(typed, w)
               and fuzz.ratio(typed, w) >= near for w in _PLAIN_BY_LETTER.get(typed[:1], ()))


def slip_meant(typed: str, meant: str, english: frozenset[str],
               text_df: Callable[[str], int] | None = None) -> str | None:
    """`meant`, the catalog word closest to a word typed, unless the word is an everyday word of the slang table
    (`grounding.slang`: "pinny" is no "penny"), a plain word is nearer (`nearer_a_plain_word`), the word is
    English typed on purpose (`another_word`) or a word of the catalog's own text (`held_word`)."""
    if (typed in SLANG or nearer_a_plain_word(typed, meant) or another_word(typed, meant, english)
            or held_word(typed, meant, text_df)):
        return None
    return meant


_HELD_MIN = 2           # products whose text holds a word for it to be a word of its own (one may hold a typo)


def held_word(typed: str, meant: str, text_df: Callable[[str], int] | None) -> bool:
    """Whether a word typed is one the catalog's own text holds (`text_df`: products whose full text holds a word
    by its stem) and the title word one letter away is of the same length and differs before the last letter: a
    letter replaced or two swapped there is another word ("hikes" is no "hides", "calfs" no "calls", "itchy" no
    store "Ibchy", "batwing" no "bathing").  Not so when the two share their stem (as many products hold
    either: "comfortible" is "comfortable"), nor for another last letter, often the same word with another
    ending ("cushiony": cushions); a letter left out may leave a word of its own by chance ("earings": "ear")."""
    if text_df is None or len(typed) != len(meant) or meant.startswith(typed[:-1]):
        return False
    held = text_df(typed)
    return held >= _HELD_MIN and held != text_df(meant)


def another_word(typed: str, meant: str, english: frozenset[str]) -> bool:
    """Whether a word of plain English (`english`: the whole words of the meaning model's tokenizer), or one with
    an ending ("shifts", "hooked", "picking"), was typed on purpose: the catalog word one letter away is another
    word ("heard" is no "heart", "sick" no "stick", "shifts" no "shirts", "hooked" no "hooded"), unless it is
    the same word with another ending ("adapter": "adapters"; "closes": "closed")."""
    base = typed if typed in english else english_stem(typed, english)
    return base is not None and not meant.startswith(base)


_STEM_MIN = 4                   # shorter pieces of words ("pin", "tra") are too many to tell a slip from


def english_stem(typed: str, english: frozenset[str]) -> str | None:
    """The English word (of `english`, `_STEM_MIN` letters or more) that `typed` is with an ending, if any."""
    return next((w for w in _bases(typed) if len(w) >= _STEM_MIN and w in english), None)


def _bases(typed: str) -> Iterator[str]:
    """The words `typed` may be with an ending, in order: "shifts" shift, "roses" rose (or ros), "closed" close,
    "hooked" hook, "shaded" shade, "spotting" spot."""
    if typed.endswith("s"):
        yield typed[:-1]
    if typed.endswith("es"):
        yield typed[:-2]
    if typed.endswith("ed"):
        yield typed[:-1]                                    # a final "e" before "d"
    for ending in ("ed", "ing"):
        if typed.endswith(ending):
            head = typed[:-len(ending)]
            yield head
            yield head + "e"                                # a final "e" dropped
            if len(head) > 2 and head[-1] == head[-2]:
                yield head[:-1]                             # a consonant doubled


def cue_slip(typed: str) -> str | None:
    """The cue word that a word of three letters or more is a slip of, when exactly one is."""
    if len(typed) < 3 or not typed.isalpha():
        return None
    meant = [w for w in CUE_WORDS if plausible_slip(typed, w)]
    return meant[0] if len(meant) == 1 else None


# Chat shorthand no listing uses, read as the word meant before anything reads the message ("wmns blk lthr
# boots", "sz m w/o hood"): hand-set vocabulary, as the slang of `grounding.slang` is (no listing title holds any).
SHORTHAND = {"blk": "black", "wht": "white", "gry": "gray", "lthr": "leather", "slv": "sleeve", "slvs": "sleeves",
             "wmns": "womens", "wmn": "women"}
_WITHOUT_RE = re.compile(r"\bw/o\b", re.I)


def respell_cues(text: str, known: Callable[[str], bool], text_df: Callable[[str], int] | None = None) -> str:
    """`text` with each word that is not `known` and is a slip of a cue word replaced by that word, and chat
    shorthand by the word meant ("w/o" by "without"; the rest of the text as typed).  A word the catalog's own
    text holds (`text_df`, as `held_word` reads it) is typed on purpose: "lace itches" is no "inches"."""
    text = _WITHOUT_RE.sub("without", text)
    meant = {tok: SHORTHAND.get(tok) or cue_slip(tok) for tok in tokens(text)
             if not known(tok) and (text_df is None or tok in SHORTHAND or text_df(tok) < _HELD_MIN)}
    meant = {tok: word for tok, word in meant.items() if word is not None}
    return respelled(text, meant) if meant else text


def respelled(text: str, meant: dict[str, str]) -> str:
    """`text` with each word typed with a slip replaced by the word meant (as a whole word, in any case)."""
    words = sorted(meant, key=len, reverse=True)
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, words)) + r")\b", re.I)
    return pattern.sub(lambda m: meant.get(m.group().lower(), m.group()), text)
