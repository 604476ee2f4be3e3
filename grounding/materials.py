"""Material families: whether the material a shopper says is one a product is made of.

A product names its materials in its title and in its card values ("Material:
91% Nylon, 9% Spandex", "Rubber sole", "100% Linen"), often by another word of
the same family than the shopper's ("Elastane" for spandex, "Suede" for
leather, "Viscose" for rayon), so words are compared by family.  A weave
("denim", "fleece") is made of some fibre, so a product that names only fibres
neither agrees nor disagrees with it; nor does a product that names no
material of a family.
"""
from __future__ import annotations

from typing import Iterable

from grounding.words import families_named, tokens, word_families

# Fibres: a product that names fibres, none of them said, is not made of the one said.
_FIBRES = {
    "cotton": "cotton",
    "polyester": "polyester poly",
    "nylon": "nylon polyamide",
    "spandex": "spandex elastane lycra",
    "leather": "leather suede nubuck sheepskin",
    "suede": "suede",
    "wool": "wool merino",
    "cashmere": "cashmere",
    "silk": "silk",
    "rayon": "rayon viscose modal",
    "linen": "linen",
    "rubber": "rubber",
}
# Weaves and finishes, made of any fibre ("denim" is mostly cotton, "fleece" polyester): naming one agrees,
# naming only fibres says nothing against it.
_WEAVES = {w: w for w in "denim fleece satin velvet canvas flannel sherpa chiffon terry corduroy".split()}
FAMILIES = word_families({**_FIBRES, **_WEAVES})
FIBRES = frozenset(_FIBRES)


def families(words: Iterable[str]) -> frozenset[str]:
    """The material families the words name (a word of no family names none)."""
    return families_named(FAMILIES, words)


def named_materials(title: str, material_values: Iterable[str]) -> frozenset[str]:
    """The material families a product names in its title and the card values given (the caller chooses
    which: `starter.people.features` reads the material-classified and the short ones)."""
    return families(tokens(" ".join((title, *material_values)).lower()))


def material_agreement(named: frozenset[str], wanted: frozenset[str]) -> float:
    """+1 when the product names a material of a family `wanted` (`families` of what the shopper said), -1 when
    a fibre is wanted and the product names fibres of other families only, 0 otherwise (nothing named, or
    only a weave wanted)."""
    if not wanted or not named:
        return 0.0
    if named & wanted:
        return 1.0
    return -1.0 if wanted & FIBRES and named & FIBRES else 0.0


def materials_said(text: str) -> frozenset[str]:
    """The words of a message that name a material of a family (the reader's material words and their kin:
    "modal", "poly", "elastane"), before any negation is taken out."""
    return frozenset(w for w in tokens(text.lower()) if w in FAMILIES)
