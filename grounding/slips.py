"""Is a catalog word what a person meant by a word they typed?

The clue index offers the closest catalog word to any word it does not know, and
most words a person types that the catalog lacks are English, not slips:
"supposed" is not "supported", "hates" not "hats", "brain" not "rain", "calling"
not "falling".  A typing slip keeps the first letter and is one edit away (a
letter missed, swapped, replaced or doubled: "windbreker", "wieght", "jeens",
"jeanss"); a word the shopper typed whole with one letter more than a catalog
word ("hates", "heard", "spent") is a different word unless that letter doubles
its neighbour.
"""
from __future__ import annotations

from rapidfuzz.distance import OSA


def plausible_slip(typed: str, meant: str) -> bool:
    """Whether `meant` (a catalog word) is a likely slip of the keyboard for `typed`."""
    if not typed or not meant or typed[0] != meant[0] or OSA.distance(typed, meant) != 1:
        return False
    if len(typed) == len(meant) + 1:
        extra = next((k for k in range(len(meant)) if typed[k] != meant[k]), len(meant))
        return typed[extra] == typed[extra - 1]
    return True
