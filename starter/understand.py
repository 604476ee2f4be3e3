"""Understand a message the templates do not explain.

Template messages never come here (they are explained exactly and cost zero
tokens).  For anything else:
1. offline fuzzy grounding: message fragments matched against the clue index
   (reworded, misspelled and damaged values still find their clue strings),
   and typo-corrected spellings of the shopper's words;
2. with `LLM_ENABLED=1`, a schema-constrained extraction by the model, whose
   every proposal goes through `grounding.Gate` with the regex proposals: only
   what the shopper's words and the catalog support is kept, the rest is
   recorded with the reason it was rejected.
Any model failure (refused, timeout, invalid twice) leaves the offline result.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any

from grounding import Gate, Grounded, Rejected, proposals_from_llm, proposals_from_regex
from starter.catalog import tokens
from starter.parse import FILLER, Observation

log = logging.getLogger(__name__)

# A fragment match must score at least this (0..100) to bring its products in.
MIN_CLUE_SCORE = 70.0
# Clues shared by more products than this say too little to expand the pool.
MAX_CLUE_PRODUCTS = 400


@dataclass
class Understanding:
    """What the gate accepted from one non-template message, and why the rest was not."""

    accepted: list[Grounded] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    rejected_phrases: list[tuple[str, str]] = field(default_factory=list)
    clue_matches: list[tuple[str, float]] = field(default_factory=list)
    corrected_tokens: frozenset[str] = frozenset()
    intent: str | None = None
    no_preference_attribute: str | None = None
    llm_called: bool = False
    llm_error: str | None = None
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})

    def snapshot(self) -> dict[str, Any]:
        return {
            "clue_matches": [[c, s] for c, s in self.clue_matches[:8]],
            "corrected_tokens": sorted(self.corrected_tokens),
            "rejected_phrases": [{"phrase": p, "reason": r} for p, r in self.rejected_phrases[:20]],
            "llm_called": self.llm_called, "llm_error": self.llm_error, "intent": self.intent,
            "no_preference_attribute": self.no_preference_attribute, "usage": dict(self.usage),
        }


class Understander:
    """Fuzzy grounding always; the model only when enabled and only for non-template text."""

    def __init__(self, gate: Gate, llm: Any | None = None) -> None:
        self.gate = gate
        self.llm = llm

    def understand(self, obs: Observation, context: dict[str, Any]) -> Understanding:
        u = Understanding()
        if obs.template:
            # A template's values are quotes of the product: "No Closure closure" is no wish.
            obs.negated, obs.negation_phrases = [], []
        text = obs.value_text if obs.template and obs.value_text else obs.text
        frags = self.gate.match_fragments(text, limit=8)
        u.clue_matches = list(frags)
        u.rejected_phrases = list(frags.rejected_phrases)
        quoted_negations(obs, u.clue_matches)
        corrected: set[str] = set()
        for tok in tokens(text):
            if tok in FILLER or len(tok) < 4:
                continue
            for form, sim in self.gate.correct(tok)[:1]:
                if form != tok and sim >= 0.8:
                    corrected.add(form)
        u.corrected_tokens = frozenset(corrected)
        proposals = proposals_from_regex(obs)
        if self.llm is not None:
            u.llm_called = True
            reply = self.llm.extract(text, context)
            for k in ("prompt_tokens", "completion_tokens"):
                u.usage[k] += int(reply.usage.get(k, 0) or 0)
            if reply.data is None:
                u.llm_error = reply.error or "no data"
            else:
                llm_props, meta = proposals_from_llm(reply.data)
                proposals += llm_props
                u.intent = meta.get("intent")
                u.no_preference_attribute = meta.get("no_preference_attribute")
        u.accepted, u.rejected = self.gate.ground(proposals, text)
        return u


def quoted_negations(obs: Observation, clue_matches: list[tuple[str, float]]) -> None:
    """Drop negations that are part of a value the shopper quotes ("never rust and tarnish
    resistance" is a product claim, not a wish); they stay only when no matched clue holds them."""
    if not obs.negation_phrases:
        return
    clue_text = " ".join(c.lower() for c, score in clue_matches if score >= MIN_CLUE_SCORE)
    kept_phrases = [ph for ph in obs.negation_phrases if ph not in clue_text]
    kept_words = {ph.split()[-1] for ph in kept_phrases}
    obs.negation_phrases = kept_phrases
    obs.negated = sorted(w for w in obs.negated if w in kept_words)


# Words that must be in the message for the model's reading of its intent to be kept.
_OVERRIDE_WORDS = re.compile(r"\b(ignore|forget|scratch|never ?mind|change|changed|instead|rather|switch|actually|"
                             r"different|new|disregard|replace|no longer|on second thought)\b")
# A no-preference needs a negated preference ("don't care", "no preference", "doesn't
# matter") or a word of indifference; a bare "care" ("I care about X") is the opposite.
_NO_PREFERENCE_WORDS = re.compile(r"\b(?:don'?t|doesn'?t|do not|does not|no|not|never)\b[^.;!?]{0,30}"
                                  r"\b(?:care|matter|mind|preference|opinion|fussy|picky)\b|"
                                  r"\b(?:whatever|either (?:way|one)|flexible|indifferent|any (?:is|will do))\b")
# A no-preference answer names (almost) nothing about the product.
MAX_NO_PREFERENCE_WORDS = 3


def apply_understanding(obs: Observation, u: Understanding, turn: int) -> None:
    """Fold what was accepted into the observation (the only way model output reaches retrieval).

    Only spelling corrections of the shopper's words join the evidence, negations only
    for words the shopper wrote, and the model's intent re-labels free text only when
    the shopper's own words carry it.
    """
    said = set(tokens(obs.text))
    for g in u.accepted:
        if g.negated:
            words = {t for t in tokens(g.canonical or g.value) if t not in FILLER}
            obs.negated = sorted(set(obs.negated) | (words & said))
    # Only corrections of words the shopper wrote (Gate.correct) join the evidence: a
    # model's accepted value may still carry words nobody said ("clarion ...").
    obs.extra_tokens = frozenset(obs.extra_tokens | (u.corrected_tokens - set(obs.negated)))
    if obs.template or turn <= 1 or u.intent is None:
        return
    low = obs.text.lower()
    if u.intent == "override" and obs.kind != "override":
        if _OVERRIDE_WORDS.search(low):
            obs.kind = "override"
        else:
            u.rejected.append(Rejected("intent", "override", "llm", "no override wording in the shopper's words"))
    elif u.intent == "no_preference" and obs.kind == "values":
        content = [w for w in obs.keywords if w not in FILLER]
        if _NO_PREFERENCE_WORDS.search(low) and len(content) <= MAX_NO_PREFERENCE_WORDS:
            obs.kind = "no_preference"
        else:
            u.rejected.append(Rejected("intent", "no_preference", "llm",
                                       "the shopper names product details or no no-preference wording"))
