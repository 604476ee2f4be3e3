"""A change of mind said in a later message: which earlier words it replaces.

PERSONAS.md's shoppers correct a slip and change their minds across
messages ("dark brown" ... "never mind, he wants light blue"; "skinny fit"
... "nah relaxed fit actually"): once the change is applied, the earlier
value is not true of the product.  A later message replaces the earlier
values of a kind (a colour, a material, a cut of one group) when it names
another value of that kind and says it is a change ("actually", "sorry",
"changed my mind", "instead", "would be better", ...).  Without such a cue
a second value adds ("black" ... "with a white sole").  What is replaced
stops counting for the product; it counts against only where the shopper
rules it out in words (a negation, read elsewhere).
"""
from __future__ import annotations

import re
from functools import lru_cache

from grounding.negation import SHADES, words_said
from grounding.styles import style_mentions
from grounding.words import COLORS, MATERIALS, MEMO_SIZE, tokens

# A message that says it changes something said before: a correction or a change of mind.  Stricter than the
# template path's override cue (`grounding.words.OVERRIDE_WORDS`), where "new" or "different" also ask for
# another product: here a cue must say that a value said before no longer holds.
CHANGE_CUE_RE = re.compile(
    r"\b(?:actually|instead|rather|never\s*mind|nvm|change(?:d)?\s+(?:(?:my|his|her|their|our)\s+)?minds?|"
    r"change\s+of\s+(?:mind|plans?)|scratch\s+(?:that|this|the|those|it|my)|on\s+second\s+thoughts?|"
    r"sorry|sry|oops|whoops|my\s+bad|wait|"
    r"i\s+mean|i\s+meant|nah|make\s+it|switch|(?:would\s+be|is|be|are)\s+(?:way\s+|much\s+|a\s+lot\s+)?better)\b",
    re.I)
# Words of the colour and material lexicons that name no value of their own ("colour", a shade without its
# colour) or a value of another kind too ("gold" is a colour and a metal, "lace" a fabric and a closure).
_NO_VALUE = frozenset("color colors colour colours off multi multicolor multicolored dark light pastel neon "
                      "metallic floral striped stripes checkered clear transparent lace oxford "
                      "jersey gold silver faux".split())
_COLOURS = COLORS - _NO_VALUE
_MATERIALS = MATERIALS - COLORS - _NO_VALUE
# A print or its absence: a kind of value of its own ("solid black" ... "actually a floral one"); "leopard" or
# "plaid" is a colour too.  A look of one colour ("solid", "plain") takes its colour with it when it changes.
_PATTERNS = frozenset("solid plain floral striped stripes stripe plaid checkered leopard camo camouflage paisley polka "
                      "dots dotted print printed graphic patterned".split())
_ONE_COLOUR = frozenset({"solid", "plain"})
# A shade said with its colour ("dark brown", "light blue") goes with it.
_SHADE_RE = re.compile(r"\b(" + "|".join(sorted(SHADES | {"pastel", "neon"})) + r")\s+([a-z]+)\b")
# A colour word that names a kind of garment ("khaki pants" are khakis): a change of colour keeps the garment.
_GARMENT_COLOUR_RE = re.compile(r"\bkhaki(?=\s+(?:pants|trousers|shorts|chinos|slacks)\b)")
# Cuts of two style groups that exclude one another: a leg's cut and a fit ("skinny" ... "relaxed fit").
_SAME_KIND = {"leg": "fit"}


def value_words(text: str) -> dict[str, frozenset[str]]:
    """The words a message names values with, by kind ("colour", "material", "style:<group>"): "dark brown
    suede, slim fit" -> {colour: {dark, brown}, material: {suede}, style:fit: {slim, fit}}."""
    low = text.lower()
    said = tokens(_GARMENT_COLOUR_RE.sub(" ", low))
    out: dict[str, set[str]] = {}
    for w in said:
        if w in _PATTERNS:
            out.setdefault("pattern", set()).add(w)
        if w in _COLOURS:
            out.setdefault("colour", set()).add(w)
        elif w in _MATERIALS:
            out.setdefault("material", set()).add(w)
    for m in _SHADE_RE.finditer(low):
        if m.group(2) in _COLOURS:
            out.setdefault("colour", set()).add(m.group(1))
    for (group, _value), words in style_mentions(low):
        out.setdefault("style:" + _SAME_KIND.get(group, group), set()).update(words)
    return {kind: frozenset(words) for kind, words in out.items()}


def says_a_change(text: str) -> bool:
    """Does a message say it changes something said before ("actually", "sorry", "changed my mind")?"""
    return bool(CHANGE_CUE_RE.search(text))


@lru_cache(maxsize=MEMO_SIZE)
def replaced_words(earlier: str, later: str) -> frozenset[str]:
    """The words of `earlier` that `later` replaces: for each kind both name, when `later` says it is a change,
    the earlier value's words that `later` does not say again ("tan or brown" ... "eh actually charcoal grey"
    replaces tan and brown; "black" ... "with a white sole" replaces nothing; "solid black" ... "actually a
    floral one" replaces both)."""
    if not says_a_change(later):
        return frozenset()
    new = value_words(later)
    if not new:
        return frozenset()
    old = value_words(earlier)
    again = words_said(later)
    kinds = set(new)
    if old.get("pattern", frozenset()) & _ONE_COLOUR and not new.get("pattern", _ONE_COLOUR) <= _ONE_COLOUR:
        kinds.add("colour")             # "plain black" ... "actually a floral print": a print, of its own colours
    return frozenset(w for kind, words in old.items() if kind in kinds for w in words if w not in again)
