"""Material families: whether the material a shopper says is one a product is made of.

A product names its materials in its title and in its card values
("Material: 91% Nylon, 9% Spandex", "Rubber sole", "100% Linen"), often by another word of the same family than the shopper's
("Elastane" for spandex, "Suede" for leather, "Viscose" for rayon), so words
are compared by family.  Only the materials a shopper's reading can name
(`grounding.words.MATERIAL_RE`, less "fabric", which names none) and their
kin count: a product that names none of them neither agrees nor disagrees.
"""
from __future__ import annotations

from typing import Iterable

from grounding.words import tokens

_FAMILY_WORDS = {
    "cotton": "cotton",
    "polyester": "polyester",
    "nylon": "nylon polyamide",
    "spandex": "spandex elastane lycra",
    "leather": "leather suede nubuck sheepskin",
    "suede": "suede",
    "wool": "wool merino",
    "cashmere": "cashmere",
    "silk": "silk",
    "rayon": "rayon viscose modal",
    "denim": "denim",
    "linen": "linen",
    "rubber": "rubber",
    "canvas": "canvas",
    "fleece": "fleece",
    "satin": "satin",
    "velvet": "velvet",
}
FAMILIES: dict[str, frozenset[str]] = {}
for _family, _words in _FAMILY_WORDS.items():
    for _w in _words.split():
        FAMILIES[_w] = FAMILIES.get(_w, frozenset()) | {_family}


def families(words: Iterable[str]) -> frozenset[str]:
    """The material families the words name (a word of no family names none)."""
    out: set[str] = set()
    for w in words:
        out |= FAMILIES.get(w, frozenset())
    return frozenset(out)


def named_materials(title: str, material_values: Iterable[str]) -> frozenset[str]:
    """The material families a product names: its title and its card values classified as material."""
    return families(tokens(" ".join((title, *material_values)).lower()))


def material_agreement(named: frozenset[str], said: Iterable[str]) -> float:
    """+1 when the product names a material of a family the shopper said, -1 when it names materials of
    other families only, 0 when either names none."""
    wanted = families(said)
    if not wanted or not named:
        return 0.0
    return 1.0 if named & wanted else -1.0
