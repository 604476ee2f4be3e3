"""A compound word written the other way: "crew neck" for a listing's "Crewneck", "tshirt" for its "T-Shirt".

Listings write one compound three ways ("T-Shirt", "T Shirt", "Tshirt"; "Crew Neck", "Crewneck"; "Sleep Shirt",
"Sleepshirts") and so do shoppers, and a word index joins none of them: "t shirt" never matches "Tshirt", nor
"tshirt" "T-Shirt" (indexed as "t" and "shirt"), so a product whose title spells its own kind the other way is
scored as if it were not that kind at all.  Two words said one after the other that the listings also write as
one word more often add that word ("crew neck": crewneck); a single letter glued to a word that the listings
write apart more often ("tshirt": "t shirt", "vneck": "v neck") adds the word ("shirt", "neck").  The listings
decide: a form counts only where at least `MIN_LISTINGS` products write it and it is their usual spelling of the
compound, and a letter only where they write it apart ("w heel", with heel, is no "wheel"; "gold" no "g old").
"""
from __future__ import annotations

from typing import Callable

from grounding.negation import number_forms
from grounding.person_words import PEOPLE_STOP
from grounding.words import tokens

# Hand-set: the fewest listings that must write a form before a shopper's other spelling means it.  A vocabulary
# floor, not a weight: a few listings may hold any run-together typo, and a form so rare weighs so much in BM25
# ("fingertip", 4 listings) that it would put its few holders first.
MIN_LISTINGS = 10
# Letters that are words of their own in a message ("a", "i") or a possessive's end ("men's": men, s).
_WORD_LETTERS = frozenset("ais")
_MIN_WORD = 3           # the shortest second part read ("neck", "tee"); shorter parts are endings, not words


def compound_words(text: str, negated: frozenset[str], listed: Callable[[str], int]) -> frozenset[str]:
    """The listings' other spelling of each compound the message says (`listed`: how many products' titles,
    category paths or card values hold a word, or a phrase of words one after the other), less those of a
    compound whose part the message rules out ("not a crew neck")."""
    said = tokens(text)
    out: set[str] = set()
    for first, second in zip(said, said[1:]):
        if negated & {first, second, f"{first}-{second}"} or not _parts(first, second):
            continue
        # In either number ("tank top": the listings' "Tanktops"), and only where the listings write the compound
        # as one word at least as often as apart: a word added beside those said weighs as much again, so "t
        # shirt" (1,584 listings) with "tshirt" (99) would favour the few that glue it.
        joined = {form: listed(form) for form in sorted(number_forms(first + second))}
        apart = max(listed(f"{first} {form}") for form in number_forms(second))
        # A letter is a compound's only where the listings write it apart ("w heel" is "with heel", no "wheel").
        if max(joined.values()) >= max(MIN_LISTINGS, apart) and (len(first) > 1 or apart >= MIN_LISTINGS):
            out.update(form for form, n in joined.items() if n >= MIN_LISTINGS)
    for word in said:
        head, rest = word[:1], word[1:]
        if word in negated or not _parts(head, rest):
            continue
        if listed(f"{head} {rest}") >= max(MIN_LISTINGS, listed(word)):
            out.add(rest)
    return frozenset(out) - set(said)


def _parts(first: str, second: str) -> bool:
    """Whether two tokens can be the parts of one compound: letters only, a second part long enough to be a
    word and no stop word, a first part that is a letter of a compound ("t", "v") or a word that is no stop
    word ("the shirt" is no "theshirt")."""
    if not (first.isalpha() and second.isalpha()) or len(second) < _MIN_WORD or second in PEOPLE_STOP:
        return False
    if len(first) == 1:
        return first not in _WORD_LETTERS
    return first not in PEOPLE_STOP
