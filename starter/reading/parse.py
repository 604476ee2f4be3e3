"""Parse one shopper message into an `Observation` (what was said, immutable).

The protocol's templates (`contest.messages`) are recognised first and
exactly.  Anything else gets a loose reading: cue words decide the kind
(no-preference, refusal, override, "not right") and `grounding.read_facts`
finds materials, colours, budgets, negations and content words, in the message
with its slips of cue words spelled right ("undre 40", "nne of these").  Odd input
(non-str, empty, huge) yields a defined observation.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from contest import messages
from grounding.proposals import TextFacts, read_facts
from grounding.words import (BOUNDARY_CUE, BROWSING_CUES, NO_PREFERENCE_CUE, NOT_RIGHT_CUE, OVERRIDE_CUE)
from starter.settings import GROUNDING
from starter.reading.kinds import MessageKind

MAX_MESSAGE_CHARS = GROUNDING.max_message_chars


def _slot_re(template: str, group: str, fill: dict[str, str] | None = None) -> re.Pattern:
    """An exact matcher for a one-slot template: its text around a capturing group."""
    head, tail = messages.template_parts(template.format(**fill) if fill else template)
    return re.compile("^" + re.escape(head) + f"(?P<{group}>.*)" + re.escape(tail) + "$", re.S)


_LOOKING = messages.template_parts(messages.OPEN_BUYING)[0]                       # "I'm looking for "
OPEN_BUYING_RE = re.compile("^" + re.escape(_LOOKING) + r"(?P<rest>.+)$", re.S)
BUYING_MARK = messages.OPEN_BUYING.split("{category}")[1].split("{value}")[0]     # ". A key requirement is: "
BROWSING_RE = re.compile("^" + re.escape(_LOOKING) + r"(?P<cat>.+)"
                         + re.escape(messages.template_parts(messages.OPEN_BROWSING)[1]) + "$", re.S)
OVERRIDE_RE = _slot_re(messages.OVERRIDE, "v")
VALUES_RE = _slot_re(messages.VALUES, "v")
NO_PREF_RE = _slot_re(messages.NO_PREFERENCE, "a")
BOUNDARY_RE = _slot_re(messages.BOUNDARY, "a")


@dataclass(frozen=True)
class Observation:
    """What one shopper message says, as far as the parser can tell (never changed once made)."""

    kind: str                     # open_buying | open_browsing | open_override | free_opening | override |
    #                               values | no_preference | boundary | no_attribute | free
    text: str
    facts: TextFacts = TextFacts()
    template: bool = False        # matched an official template exactly
    category: str | None = None   # the opening's category phrase (template) or None
    value_text: str | None = None  # the value part of a template message, verbatim
    attribute: str | None = None   # no_preference / boundary attribute
    typed: str = ""               # the message as typed, when `text` spells its slips of cue words right

    @property
    def said(self) -> str:
        """The message as the shopper typed it."""
        return self.typed or self.text

    @property
    def browsing_cue(self) -> bool:
        low = self.text.lower()
        return any(c in low for c in BROWSING_CUES)


def coerce_message(message: object) -> str:
    """Any input as text, cut to MAX_MESSAGE_CHARS (bytes decoded, None empty)."""
    if isinstance(message, str):
        text = message
    elif message is None:
        text = ""
    elif isinstance(message, bytes):
        text = message.decode("utf-8", "replace")
    else:
        text = str(message)
    return text[:MAX_MESSAGE_CHARS]


def parse_message(message: object, turn: int, shelf_keys: dict[str, str] | None = None,
                  respell: Callable[[str], str] | None = None) -> Observation:
    """Classify a message; `shelf_keys` (lower -> key) resolves template category phrases.  A message that is no
    template is read with `respell` applied (`grounding.slips.respell_cues`: "undre 40" as "under 40"), and kept
    as typed in `typed`."""
    text = coerce_message(message)
    stripped = text.strip()
    facts = read_facts(text)

    def obs(kind: str, template: bool = False, **slots: str | None) -> Observation:
        return Observation(kind=kind, text=text, facts=facts, template=template, **slots)

    if not stripped:
        return obs(MessageKind.NO_ATTRIBUTE if turn > 1 else MessageKind.FREE)
    m = BROWSING_RE.match(stripped)
    if m and turn == 1:
        return obs(MessageKind.OPEN_BROWSING, True, category=m.group("cat"))
    m = OPEN_BUYING_RE.match(stripped)
    if m and turn == 1:
        rest = m.group("rest")
        if BUYING_MARK in rest and rest.endswith("."):
            cat, _, value = rest.partition(BUYING_MARK)
            # A category never contains the marker; a value might, so split at the first.
            return obs(MessageKind.OPEN_BUYING, True, category=cat, value_text=value[:-1])
        # Override opening: "I'm looking for C. <old value>" -- C is a shelf key.
        split = _split_shelf_prefix(rest, shelf_keys)
        if split is not None:
            return obs(MessageKind.OPEN_OVERRIDE, True, category=split[0], value_text=split[1])
    for regex, kind, slot in ((OVERRIDE_RE, MessageKind.OVERRIDE, "value_text"), (VALUES_RE, MessageKind.VALUES, "value_text"),
                              (BOUNDARY_RE, MessageKind.BOUNDARY, "attribute"), (NO_PREF_RE, MessageKind.NO_PREFERENCE, "attribute")):
        m = regex.match(stripped)
        if m:
            return obs(kind, True, **{slot: m.group(1)})
    if stripped == messages.NO_ATTRIBUTE_MESSAGE:
        return obs(MessageKind.NO_ATTRIBUTE, True)
    read = respell(text) if respell is not None else text
    if read != text:
        facts = read_facts(read)
        return Observation(kind=_loose_kind(read, turn, facts), text=read, facts=facts, typed=text)
    return obs(_loose_kind(text, turn, facts))


def _split_shelf_prefix(rest: str, shelf_keys: dict[str, str] | None) -> tuple[str, str] | None:
    """Split "C. value" at the first ". " whose left side is a shelf key, else at
    the first ". " (a damaged category is still the part before the value)."""
    first = rest.find(". ")
    if first < 0:
        return None
    start = first
    while shelf_keys is not None:
        pos = rest.find(". ", start)
        if pos < 0:
            break
        if rest[:pos].lower() in shelf_keys:
            return rest[:pos], rest[pos + 2:]
        start = pos + 1
    return rest[:first], rest[first + 2:]


def _loose_kind(text: str, turn: int, facts: TextFacts) -> str:
    """Non-template text: decide the kind from cue words."""
    if turn == 1:
        return MessageKind.FREE_OPENING
    low = text.lower()
    if OVERRIDE_CUE.search(low):
        return MessageKind.OVERRIDE
    if BOUNDARY_CUE.search(low):
        return MessageKind.BOUNDARY
    if NO_PREFERENCE_CUE.search(low):
        return MessageKind.NO_PREFERENCE
    if NOT_RIGHT_CUE.search(low) and len(facts.keywords) <= 2:
        return MessageKind.NO_ATTRIBUTE
    return MessageKind.VALUES
