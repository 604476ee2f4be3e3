"""A part said absent names the products that lack it: "no tags" is tagless, "no sleeves" sleeveless.

The catalog names such a product by its "-less" word ("Tagless Plunge Bras", "Sleeveless Midi Dress",
"Wireless Bralette", "Laceless Sneakers"), which the shopper's "no tags, they scratch" never spells: the
negation alone rules out what states tags, but nothing says what the shopper wants instead.  A part right
after "no", "without" or "zero" (and "any") that ends its phrase (a comma, the end, "please", "so ...") gives
its "-less" word when the catalog uses it and the reading rejects the part (a product word, not "no worries");
the head of a compound counts ("no underwire": wireless).  A part that goes on to name something else ("no open
back", "no shoulder strap", "no long sleeves", "no lace trim") or is a fabric ("no lace": lace as the material,
not laces) says nothing of the kind.
"""
from __future__ import annotations

import re
from typing import Callable

from grounding.negation import number_forms
from grounding.words import LEXICON

_ABSENT_RE = re.compile(r"\b(?:no|without|w/o|zero)\s+(?:any\s+)?([a-z]{3,})\b(?=\s*(?:$|[,.;:!?)]|(?:please|pls|plz|"
                        r"so|because|bc|since|or|and|they|it|that|thanks|thx|at\s+all)\b))")
_SUFFIX = "less"
_MIN_PART = 3            # the shortest head of a compound read ("wire" in "underwire"; "tie", "rim")


def privative_words(low: str, rejected: frozenset[str], known: Callable[[str], bool]) -> frozenset[str]:
    """The "-less" words of the catalog (`known`) that the parts the lower-cased message says are absent (and
    its reading rejects) give ("no tags, they scratch" -> tagless; "without any laces" -> laceless; "no
    underwire" -> wireless)."""
    out: set[str] = set()
    for m in _ABSENT_RE.finditer(low):
        said = m.group(1)
        if said not in rejected or said in LEXICON or said.endswith(_SUFFIX):
            continue
        form = _privative(said, known)
        if form is not None:
            out.add(form)
    return frozenset(out)


def _privative(said: str, known: Callable[[str], bool]) -> str | None:
    """The catalog's "-less" word for a part said in either number, its longest head first."""
    for stem in [said, *sorted(number_forms(said) - {said})]:
        for start in range(0, len(stem) - _MIN_PART + 1):
            form = stem[start:] + _SUFFIX
            if known(form):
                return form
    return None
