"""Proposals from the regex facts and template slots of a parsed message.

`proposals_from_regex(obs)` turns `Observation.materials`, `.colors`,
`.negated` and `.budget_max` into proposals with source "regex";
`proposals_from_template(obs)` turns the value and category slots of an
official template message into proposals with source "template".  Both still
go through `Gate.ground`.
"""
from __future__ import annotations

from collections.abc import Mapping

from evaluator.protocol import classify
from starter.config import ALLOWED_ATTRIBUTES
from starter.parse import Observation

from grounding.gate import Proposal
from grounding.text import COLORS, MATERIALS, STOP

_PRICE_WORDS = frozenset({"pricey", "pricy", "expensive", "costly", "overpriced"})
# Negated words that are conversation, not product facts ("not sure", "not quite", "no idea").
_NOT_FACTS = frozenset("""sure quite exactly really too very that this those these it them one ones idea clue
problem worries big huge fan fussed bothered picky fussy yet anymore much many more lot fan
""".split())


def proposals_from_regex(obs: Observation) -> list[Proposal]:
    """Regex facts of a message as proposals (negated words keep negated=True)."""
    out: list[Proposal] = []
    seen: set[tuple[str, str, bool]] = set()

    def add(attribute: str, value: str, negated: bool) -> None:
        key = (attribute, value, negated)
        if key not in seen:
            seen.add(key)
            out.append(Proposal(attribute, value, negated, "regex"))

    for m in obs.materials or []:
        add("material", m, False)
    for c in obs.colors or []:
        add("color", c, False)
    for w in obs.negated or []:
        if not isinstance(w, str) or not w or w in STOP or w in _NOT_FACTS:
            continue
        if w in _PRICE_WORDS:
            add("budget", f"not too {w}", False)       # "not too pricey" is a low budget, not a negated feature
        elif w in MATERIALS:
            add("material", w, True)
        elif w in COLORS:
            add("color", w, True)
        else:
            add("feature", w, True)
    if obs.budget_max is not None:
        add("budget", f"under ${obs.budget_max:g}", False)
    return out


def proposals_from_template(obs: Observation, clues: Mapping[str, object] | None = None) -> list[Proposal]:
    """The category and value slots of an exactly matched template message.

    A reply slot holds one or two card values joined by "; ", but a card value
    may itself contain "; "; with `clues` (CatalogIndex.clues) the split that
    yields catalog values is chosen, otherwise every "; " splits."""
    if not obs.template:
        return []
    out: list[Proposal] = []
    if obs.category:
        out.append(Proposal("category", obs.category, False, "template"))
    if obs.value_text:
        if obs.kind in ("open_buying", "open_override", "override"):
            parts = [obs.value_text]
        else:
            parts = _split_values(obs.value_text, clues)
        for v in parts:
            if v.strip():
                attr = classify(v)
                out.append(Proposal(attr if attr in ALLOWED_ATTRIBUTES else "other", v, False, "template"))
    return out


def _split_values(text: str, clues: Mapping[str, object] | None) -> list[str]:
    pieces = text.split("; ")
    if clues is None or len(pieces) == 1:
        return pieces
    if text in clues:
        return [text]
    for k in range(1, len(pieces)):
        a, b = "; ".join(pieces[:k]), "; ".join(pieces[k:])
        if a in clues and b in clues:
            return [a, b]
    return pieces
