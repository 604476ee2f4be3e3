"""Proposals: what the regexes and the model read in a message, before the gate checks it.

`read_facts(text)` is the deterministic reading (materials, colours,
negations, a budget ceiling, content words); `proposals_from_facts` turns it
into proposals with source "regex"; `proposals_from_llm` turns a model
extraction (prompts/extract.schema.json) into proposals with source "llm".
The model's output is data to be checked, never instructions: every value
still has to pass `Gate.ground`.  Fields that are malformed or outside the
allowed sets are not guessed at; they are listed in `meta["ignored"]`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from contest.rules import ALLOWED_ATTRIBUTES
from grounding.budget import NEGATABLE_PRICE_WORDS, budget_ceiling
from grounding.gate import Proposal
from grounding.negation import negations, number_forms
from grounding.words import (BREAK_OFF_RE, BROKEN_OFF_ENDS, BROKEN_OFF_WORDS, COLOR_RE, COLORS, FILLER, MATERIAL_RE,
                             MATERIALS, NEGATION_STOP, NOT_FACTS, RETRACTED_PLAN_RE, RETRACTED_PLAN_WORDS,
                             RETRACTION_RES, STOP, tokens)


@dataclass(frozen=True)
class TextFacts:
    """The deterministic reading of one message's words."""

    keywords: tuple[str, ...] = ()          # content tokens (filler removed), in order
    materials: tuple[str, ...] = ()
    colors: tuple[str, ...] = ()
    negated: tuple[str, ...] = ()           # sorted words after a negation cue
    negation_phrases: tuple[str, ...] = ()  # "no leather", as said
    budget_max: float | None = None


def negatable(word: str) -> bool:
    """Whether a word after a negation cue can be a product fact: not a conversational word ("not sure")
    nor a function word ("not for women" negates who it is for, not the word "for")."""
    return word not in NEGATION_STOP and word not in STOP


def read_facts(text: str) -> TextFacts:
    """Materials, colours, negations, the budget ceiling and the content words of `text`."""
    low = text.lower()
    found = negations(low, negatable)
    found += [(phrase, word) for phrase, word in _retractions(low) if negatable(word)]
    phrases = tuple(phrase for phrase, _ in found)
    negated = tuple(sorted({word for _, word in found}))
    return TextFacts(
        keywords=tuple(t for t in tokens(low) if t not in FILLER and len(t) > 1 or t.isdigit()),
        materials=tuple(m for m in dict.fromkeys(MATERIAL_RE.findall(low)) if m not in negated),
        colors=tuple(c for c in dict.fromkeys(COLOR_RE.findall(low)) if c not in negated),
        negated=negated,
        negation_phrases=phrases,
        budget_max=budget_ceiling(low),
    )


def _retractions(low: str) -> list[tuple[str, str]]:
    """(phrase, word) for each preference the message takes back (`RETRACTION_RES`, every word of a plan
    given up: `RETRACTED_PLAN_RE`), except a word it says again after the retraction ("a one piece... no
    sorry, I meant a two piece bikini" keeps "piece")."""
    out = []
    for rx in RETRACTION_RES:
        for m in rx.finditer(low):
            if m.group(1) not in tokens(low[m.end():]):
                out.append((m.group(0), m.group(1)))
    for m in RETRACTED_PLAN_RE.finditer(low):
        later = set(tokens(low[m.end():]))
        for word in _plan_words(tokens(m.group(1))):
            if word not in later and not word.isdigit():
                out.append((m.group(0), word))
    for m in BREAK_OFF_RE.finditer(low):
        clause = re.split(r"[.,;:!?…]", low[:m.start()])[-1]
        later = {form for w in tokens(low[m.end():]) for form in number_forms(w)}
        out += [(clause.strip() + m.group(0), word) for word in _broken_off(tokens(clause)) if word not in later]
    return out


def _broken_off(words: list[str]) -> list[str]:
    """The words a break-off takes back, read backwards from it: the content words before it (past a trailing
    "maybe" / "style" / "one(s)"), at most `BROKEN_OFF_WORDS`, up to the first function word or attribute name
    ("size large" takes back "large").  As with a plan given up, the noun after its modifiers stays wanted
    ("low rise bikini... I meant high waisted" keeps the bikini), unless the words are all modifiers: of
    "one(s)" ("a folding compact one"), coordinated ("dainty and thin") or ending in a colour or material
    ("plain white")."""
    k = len(words)
    while k and words[k - 1] in ("maybe", "style", "kind", "please"):
        k -= 1
    all_modifiers = k > 0 and words[k - 1] in ("one", "ones")
    if all_modifiers:
        k -= 1
    out: list[str] = []
    for word in reversed(words[:k]):
        if word in ("and", "or") and out:
            all_modifiers = True
            continue
        if word in BROKEN_OFF_ENDS or not negatable(word) or word.isdigit() or len(out) == BROKEN_OFF_WORDS:
            break
        out.append(word)
    head_is_a_noun = bool(out) and out[0] not in COLORS and out[0] not in MATERIALS     # "plain white" is no noun
    return out[:0:-1] if head_is_a_noun and not all_modifiers and len(out) > 1 else out[::-1]


def _plan_words(words: list[str]) -> list[str]:
    """The words of a plan given up that are taken back: the first (a noun after a modifier stays wanted:
    "a red dress ... but actually green" still wants a dress), or every modifier of "one(s)" ("heavy
    insulated winter ones")."""
    if len(words) > 1 and words[-1] in ("one", "ones"):
        return words[:-1][:RETRACTED_PLAN_WORDS]
    return words[:1]


def proposals_from_facts(materials, colors, negated, budget_max: float | None) -> list[Proposal]:
    """Regex facts of a message as proposals (negated words keep negated=True)."""
    out: list[Proposal] = []
    seen: set[tuple[str, str, bool]] = set()

    def add(attribute: str, value: str, negated: bool) -> None:
        key = (attribute, value, negated)
        if key not in seen:
            seen.add(key)
            out.append(Proposal(attribute, value, negated, "regex"))

    for m in materials or []:
        add("material", m, False)
    for c in colors or []:
        add("color", c, False)
    for w in negated or []:
        if not isinstance(w, str) or not w or w in STOP or w in NOT_FACTS:
            continue
        if w in NEGATABLE_PRICE_WORDS:
            add("budget", f"not too {w}", False)       # "not too pricey" is a low budget, not a negated feature
        elif w in MATERIALS:
            add("material", w, True)
        elif w in COLORS:
            add("color", w, True)
        else:
            add("feature", w, True)
    if budget_max is not None:
        add("budget", f"under ${budget_max:g}", False)
    return out


INTENTS: tuple[str, ...] = ("provide_constraint", "no_preference", "override", "other")
MAX_CONSTRAINTS = 8
MAX_SEARCH_PHRASES = 6
MAX_TEXT = 200

# Words a shopper uses for an attribute ("I don't mind the colour") -> the protocol's attribute.
ATTRIBUTE_SYNONYMS: dict[str, str] = {
    "colour": "color", "colours": "color", "colors": "color", "shade": "color",
    "price": "budget", "cost": "budget", "prices": "budget",
    "materials": "material", "fabric": "material",
    "sizes": "size", "sizing": "size", "width": "size", "length": "size", "fit size": "size",
    "fit": "style", "look": "style", "design": "style", "department": "style",
    "brands": "brand", "make": "brand",
    "features": "feature",
    "use": "use_case", "use case": "use_case", "usage": "use_case", "purpose": "use_case", "occasion": "use_case",
    "type": "category", "kind": "category", "product": "category",
}


def normalize_attribute(word: object) -> tuple[str | None, str | None]:
    """(allowed attribute, None) or (None, reason)."""
    if not isinstance(word, str):
        return None, "not a string"
    w = " ".join(word.lower().replace("-", " ").replace("_", " ").split())
    if not w:
        return None, "empty"
    if w.replace(" ", "_") in ALLOWED_ATTRIBUTES:
        return w.replace(" ", "_"), None
    if w in ATTRIBUTE_SYNONYMS:
        return ATTRIBUTE_SYNONYMS[w], None
    if w.startswith("the ") and w[4:] in ATTRIBUTE_SYNONYMS:
        return ATTRIBUTE_SYNONYMS[w[4:]], None
    return None, "not an allowed attribute"


def proposals_from_llm(data: Any) -> tuple[list[Proposal], dict]:
    """Proposals from a schema-valid extraction, plus meta:
    {"intent": str | None, "no_preference_attribute": str | None, "ignored": [(field, value, reason)]}."""
    meta: dict[str, Any] = {"intent": None, "no_preference_attribute": None, "ignored": []}
    found = _Collected(meta["ignored"])
    if not isinstance(data, dict):
        found.ignored.append(("data", repr(data)[:80], "not an object"))
        return found.proposals, meta
    intent = data.get("intent")
    if isinstance(intent, str) and intent in INTENTS:
        meta["intent"] = intent
    elif intent is not None:
        found.ignored.append(("intent", intent, "not an allowed intent"))
    npa = data.get("no_preference_attribute")
    if npa is not None:
        attr, why = normalize_attribute(npa)
        if attr is None:
            found.ignored.append(("no_preference_attribute", npa, why))
        else:
            meta["no_preference_attribute"] = attr
    _read_constraints(data.get("constraints"), found)
    cat = data.get("category_phrase")
    if cat is not None:
        if isinstance(cat, str) and cat.strip() and len(cat) <= MAX_TEXT:
            if ("category", " ".join(cat.lower().split())) not in found.seen:
                found.add("category", cat, False, "category_phrase")
        else:
            found.ignored.append(("category_phrase", cat, "not a usable string"))
    _read_phrases(data.get("search_phrases"), " ".join(str(cat or "").lower().split()), found)
    return found.proposals, meta


class _Collected:
    """The proposals read from one extraction, without duplicates, and what was ignored and why."""

    def __init__(self, ignored: list[tuple[str, Any, str]]) -> None:
        self.ignored = ignored
        self.proposals: list[Proposal] = []
        self.seen: set[tuple[str, str]] = set()
        self.values_said: set[str] = set()

    def add(self, attribute: str, value: str, negated: bool, fld: str) -> None:
        key = (attribute, " ".join(value.lower().split()))
        if key in self.seen:
            self.ignored.append((fld, value, "duplicate"))
            return
        self.seen.add(key)
        self.proposals.append(Proposal(attribute, value, negated, "llm"))


def _read_constraints(constraints: Any, found: _Collected) -> None:
    if constraints is not None and not isinstance(constraints, list):
        found.ignored.append(("constraints", repr(constraints)[:80], "not a list"))
        constraints = []
    for n, c in enumerate(constraints or []):
        if n >= MAX_CONSTRAINTS:
            found.ignored.append(("constraints", c, "too many constraints"))
            continue
        if not isinstance(c, dict):
            found.ignored.append(("constraints", c, "not an object"))
            continue
        attribute, value, negated = c.get("attribute"), c.get("value"), c.get("negated", False)
        if not isinstance(value, str) or not value.strip():
            found.ignored.append(("constraints", c, "value missing or not a string"))
            continue
        if len(value) > MAX_TEXT:
            found.ignored.append(("constraints", value[:80], "value too long"))
            continue
        if not isinstance(negated, bool):
            found.ignored.append(("constraints", c, "negated is not a boolean; taken as false"))
            negated = False
        # A disallowed attribute is kept: the gate rejects it with its reason, on the record.
        found.add(attribute if isinstance(attribute, str) else "", value, negated, "constraints")
        found.values_said.add(" ".join(value.lower().split()))


def _read_phrases(phrases: Any, category: str, found: _Collected) -> None:
    if phrases is not None and not isinstance(phrases, list):
        found.ignored.append(("search_phrases", repr(phrases)[:80], "not a list"))
        phrases = []
    for n, ph in enumerate(phrases or []):
        if n >= MAX_SEARCH_PHRASES:
            found.ignored.append(("search_phrases", ph, "too many search phrases"))
            continue
        if not isinstance(ph, str) or not ph.strip() or len(ph) > MAX_TEXT:
            found.ignored.append(("search_phrases", ph, "not a usable string"))
            continue
        low = " ".join(ph.lower().split())
        if low in found.values_said or low == category:
            found.ignored.append(("search_phrases", ph, "same as a constraint or category value"))
            continue
        found.add("feature", ph, False, "search_phrases")
