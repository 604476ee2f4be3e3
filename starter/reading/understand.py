"""Understand a message: from what was said (`Observation`) to what the agent reads in it (`Reading`).

Template messages that the catalog explains are read as they are (exactly,
at zero tokens).  Anything else gets:
1. offline fuzzy grounding: message fragments matched against the clue index
   (reworded, misspelled and damaged values still find their clue strings),
   and typo-corrected spellings of the shopper's words;
2. with `LLM_ENABLED=1`, a schema-constrained extraction by the model, whose
   every proposal goes through `grounding.Gate` with the regex proposals: only
   what the shopper's words and the catalog support is kept, the rest is
   recorded with the reason it was rejected.
Any model failure (refused, timeout, invalid twice) leaves the offline result.
The `Observation` is never changed: what understanding adds is the `Reading`.
Free text is also read as spelled right where a word was typed with a slip ("no
lces, sliip on" as "no laces, slip on"): the words ruled out, the cuts, the
materials and colours named; the stores, prices and counts are read as typed
(a store's name or a number word is no slip of a catalog word).
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from grounding import Gate, Grounded, Rejected, proposals_from_facts, proposals_from_llm
from grounding.audience import AUDIENCE_WORDS
from grounding.compounds import compound_words
from grounding.negation import bound_heads, phrase_words
from grounding.privative import privative_words
from grounding.proposals import TextFacts, read_facts
from grounding.slang import slang_words
from grounding.slips import respelled
from grounding.words import FILLER, NO_PREFERENCE_WORDS, OVERRIDE_WORDS, tokens
from starter.settings import GROUNDING, UnderstandingSettings
from starter.reading.parse import Observation
from starter.reading.kinds import MessageKind

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Reading:
    """One message as the agent reads it: the observation plus what understanding decided."""

    obs: Observation
    kind: str                                  # may differ from obs.kind (a model's grounded intent)
    negated: tuple[str, ...]                   # negated words that are wishes (not quoted values)
    negation_phrases: tuple[str, ...]
    extra_tokens: frozenset[str] = frozenset()  # grounded words not spelled as said (typos fixed)
    wearer_slips: tuple[tuple[str, str], ...] = ()   # (typed, meant) for a wearer's word typed with a slip
    spelled: str = ""                          # free text with its typing slips spelled right ("" if none)
    spelled_facts: TextFacts | None = None     # what the parser reads in `spelled`

    @classmethod
    def of(cls, obs: Observation) -> "Reading":
        """The observation taken as it is (no understanding ran)."""
        return cls(obs, obs.kind, obs.facts.negated, obs.facts.negation_phrases)

    # What the rest of the agent reads, by the observation's names.
    text = property(lambda self: self.obs.text)
    spelled_text = property(lambda self: self.spelled or self.obs.text)   # for the readers of closed vocabularies
    template = property(lambda self: self.obs.template)
    category = property(lambda self: self.obs.category)
    value_text = property(lambda self: self.obs.value_text)
    attribute = property(lambda self: self.obs.attribute)
    keywords = property(lambda self: self.obs.facts.keywords)
    materials = property(lambda self: (self.spelled_facts or self.obs.facts).materials)
    colors = property(lambda self: (self.spelled_facts or self.obs.facts).colors)
    budget_max = property(lambda self: self.obs.facts.budget_max)
    browsing_cue = property(lambda self: self.obs.browsing_cue)

    @property
    def wearer_text(self) -> str:
        """The text with the wearer's words spelled right ("for my boyfreind" -> "for my boyfriend"): what the
        readers of who it is for read."""
        return respelled(self.obs.text, dict(self.wearer_slips)) if self.wearer_slips else self.obs.text


@dataclass
class Understanding:
    """What the gate accepted from one message, why the rest was not, and the reading it gives."""

    reading: Reading
    accepted: list[Grounded] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)
    rejected_phrases: list[tuple[str, str]] = field(default_factory=list)
    clue_matches: list[tuple[str, float]] = field(default_factory=list)
    corrected_tokens: frozenset[str] = frozenset()
    wearer_slips: tuple[tuple[str, str], ...] = ()
    intent: str | None = None
    no_preference_attribute: str | None = None
    llm_called: bool = False
    llm_error: str | None = None
    llm_error_kind: str | None = None
    usage: dict[str, int] = field(default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0})


class Understander:
    """Fuzzy grounding always; the model only when enabled and only for non-template text."""

    def __init__(self, gate: Gate, cfg: UnderstandingSettings, catalog_uses: Callable[[str], bool],
                 listed: Callable[[str], int], llm: Any | None = None) -> None:
        """`catalog_uses`: whether some product's text holds a word (the "-less" words of `grounding.privative`);
        `listed`: how many products' titles, category paths or card values hold a word or phrase as written
        (the other spellings of compounds, `grounding.compounds`)."""
        self.gate = gate
        self.cfg = cfg
        self.catalog_uses = catalog_uses
        self.listed = listed
        self.llm = llm

    def understand(self, obs: Observation, context: dict[str, Any], turn: int) -> Understanding:
        u = Understanding(reading=Reading.of(obs))
        text = obs.value_text if obs.template and obs.value_text else obs.text
        frags = self.gate.match_fragments(text, limit=self.cfg.fragments_per_message)
        u.clue_matches = list(frags)
        u.rejected_phrases = list(frags.rejected_phrases)
        corrected = self._slips(text)
        u.corrected_tokens = frozenset(corrected.values())
        u.wearer_slips = tuple(sorted((t, m) for t, m in corrected.items() if m in AUDIENCE_WORDS and _owned(text, t)))
        # Free text is read as spelled right; a wearer's word only where it is owned ("for my husbnd"), as the
        # readers of who it is for take it ("girly" is no slip of "girls").
        respell = {t: m for t, m in corrected.items() if m not in AUDIENCE_WORDS or (t, m) in u.wearer_slips}
        spelled = respelled(obs.text, respell) if respell and not obs.template else ""
        facts = read_facts(spelled) if spelled else obs.facts
        negated, phrases = self._wished_negations(obs, facts, u.clue_matches)
        if negated:         # "not flip flops": the flops too, which the listings name only so
            negated = tuple(sorted(set(negated) | bound_heads(text.lower(), set(negated), self.listed)))
        proposals = proposals_from_facts(facts.materials, facts.colors, negated, obs.facts.budget_max)
        if self.llm is not None:
            u.llm_called = True
            reply = self.llm.extract(text, context)
            for k in ("prompt_tokens", "completion_tokens"):
                u.usage[k] += int(reply.usage.get(k, 0) or 0)
            if reply.data is None:
                u.llm_error = reply.error or "no data"
                u.llm_error_kind = str(reply.error_kind.value) if reply.error_kind is not None else "other"
            else:
                llm_props, meta = proposals_from_llm(reply.data)
                proposals += llm_props
                u.intent = meta.get("intent")
                u.no_preference_attribute = meta.get("no_preference_attribute")
        u.accepted, u.rejected = self.gate.ground(proposals, text)
        u.reading = self._read(obs, u, turn, negated, phrases, (spelled, facts) if spelled else None)
        return u

    def _slips(self, text: str) -> dict[str, str]:
        """Each word typed with a slip of the keyboard, and the catalog word meant (`Gate.slip_of`)."""
        corrected: dict[str, str] = {}
        for tok in tokens(text):
            if len(tok) < GROUNDING.fuzzy_min_len:
                continue
            meant = self.gate.slip_of(tok, self.cfg.correction_min_sim)
            if meant is not None:
                corrected[tok] = meant
        return corrected

    def _wished_negations(self, obs: Observation, facts: TextFacts, clue_matches: list[tuple[str, float]]
                          ) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """A template's values are quotes of the product ("No Closure closure" is no wish);
        free-text negations inside a quoted value are product claims."""
        if obs.template:
            return (), ()
        return quoted_negations(facts.negated, facts.negation_phrases, clue_matches, self.cfg.clue_match_min)

    def _read(self, obs: Observation, u: Understanding, turn: int, negated: tuple[str, ...],
              phrases: tuple[str, ...], spelled: tuple[str, TextFacts] | None) -> Reading:
        """The reading understanding gives (the only way model output reaches retrieval).

        Only spelling corrections of the shopper's words join the evidence, negations
        only for words the shopper wrote, and the model's intent re-labels free
        text only when the shopper's own words carry it.
        """
        text = spelled[0] if spelled else obs.text
        said = phrase_words(text)
        for g in u.accepted:
            if g.negated:
                words = {t for t in phrase_words(g.canonical or g.value) if t not in FILLER}
                negated = tuple(sorted(set(negated) | (words & said)))
        # Only corrections of words the shopper wrote (Gate.correct) join the evidence: a
        # model's accepted value may still carry words nobody said ("clarion ...").
        extra = frozenset(u.corrected_tokens - set(negated))
        if not obs.template:        # "no tags" wants the tagless ones (`grounding.privative`); "undies" underwear
            extra |= privative_words(text.lower(), frozenset(negated), self.catalog_uses)
            extra |= slang_words(obs.text, frozenset(negated))
            extra |= compound_words(text, frozenset(negated), self.listed)      # "crew neck": crewneck
        kind = obs.kind
        if not obs.template and turn > 1 and u.intent is not None:
            low = obs.text.lower()
            if u.intent == MessageKind.OVERRIDE and kind != MessageKind.OVERRIDE:
                if OVERRIDE_WORDS.search(low):
                    kind = MessageKind.OVERRIDE
                else:
                    u.rejected.append(Rejected("intent", MessageKind.OVERRIDE, "llm",
                                               "no override wording in the shopper's words"))
            elif u.intent == MessageKind.NO_PREFERENCE and kind == MessageKind.VALUES:
                content = [w for w in obs.facts.keywords if w not in FILLER]
                if NO_PREFERENCE_WORDS.search(low) and len(content) <= self.cfg.no_preference_max_words:
                    kind = MessageKind.NO_PREFERENCE
                else:
                    u.rejected.append(Rejected("intent", MessageKind.NO_PREFERENCE, "llm",
                                               "the shopper names product details or no no-preference wording"))
        return Reading(obs, kind, negated, phrases, extra, u.wearer_slips if not obs.template else (),
                       *(spelled or ("", None)))


def _owned(text: str, word: str) -> bool:
    """Whether a word follows a possessive or "for" ("for my husbnd", "my lil sistr", "for daugther"): a wearer's word
    typed with a slip, where an English word the catalog lacks ("dont bother", "a sitter", "for a chili") is no
    wearer."""
    w = re.escape(word)
    return re.search(rf"\b(?:(?:my|our|his|her|their|your|ur)\s+(?:[a-z]+\s+)?|(?:for|4)\s+){w}\b", text,
                     re.I) is not None


def quoted_negations(negated: tuple[str, ...], phrases: tuple[str, ...], clue_matches: list[tuple[str, float]],
                     min_score: float) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Drop negations that are part of a value the shopper quotes ("never rust and tarnish
    resistance" is a product claim, not a wish); they stay only when no matched clue holds them."""
    if not phrases:
        return negated, phrases
    clue_text = " ".join(c.lower() for c, score in clue_matches if score >= min_score)
    kept_phrases = tuple(ph for ph in phrases if ph not in clue_text)
    # A negated word may stand anywhere in its phrase ("maxi... sorry" takes back its first word).
    kept_words = {w for ph in kept_phrases for w in phrase_words(ph)}
    return tuple(sorted(w for w in negated if w in kept_words)), kept_phrases
