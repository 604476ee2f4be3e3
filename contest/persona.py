"""The persona shopper of PERSONAS.md: a person who speaks from a card written in their own words.

Everything else is the protocol (same contract, 10 turns, the same hit rule
and scores).  The rules here are exact, so every evaluator plays the same
session.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contest.rules import ALLOWED_ATTRIBUTES

ANSWER_ATTRIBUTES: tuple[str, ...] = ("color", "material", "size", "style", "use_case", "feature", "budget",
                                      "brand", "category")
# Once `other` is used up, answers are volunteered in this order.
VOLUNTEER_ORDER: tuple[str, ...] = ("feature", "style", "material", "color", "use_case", "size", "budget", "brand",
                                    "category")
SPOKEN: dict[str, str] = {"category": "the type", "material": "material", "color": "color", "size": "size",
                          "style": "style", "brand": "brand", "budget": "price", "feature": "features",
                          "use_case": "what it's for", "other": "anything else"}
NO_PREFERENCE_VARIANTS: tuple[str, ...] = ("No preference on {spoken}.", "{Spoken} doesn't really matter to me.",
                                           "I'm not fussy about {spoken}.", "Honestly, any {spoken} is fine.")
ALREADY_TOLD = "I already told you about {spoken}. "
EXHAUSTED = "That's all I know about it. Can you show me some other options?"
DEFAULT_SCENARIO = "human"


def is_persona_card(row: Any) -> bool:
    """A dataset row is a persona card when it has an `opening` and `answers`, or a scripted conversation
    (a non-empty `script`)."""
    return isinstance(row, dict) and ("opening" in row and "answers" in row or is_script_card(row))


def is_script_card(row: Any) -> bool:
    """A scripted conversation (PERSONAS.md): a card with a non-empty `script` list."""
    return isinstance(row, dict) and isinstance(row.get("script"), list) and len(row["script"]) > 0


def _usable(value: Any) -> bool:
    return isinstance(value, str) and value.strip() != ""


def no_preference_reply(attribute: str, turn: int) -> str:
    """The no-preference reply for the turn being written (2..10)."""
    spoken = SPOKEN[attribute]
    return NO_PREFERENCE_VARIANTS[turn % len(NO_PREFERENCE_VARIANTS)].format(
        spoken=spoken, Spoken=spoken[:1].upper() + spoken[1:])


@dataclass
class PersonaCustomer:
    """The shopper of one persona card (PERSONAS.md "The shopper's rules")."""

    opening_text: str
    answers: dict[str, str | None]
    other: list[str]
    used_answers: set[str] = field(default_factory=set)
    used_other: int = 0

    @classmethod
    def from_card(cls, card: dict) -> "PersonaCustomer":
        answers = card.get("answers") if isinstance(card.get("answers"), dict) else {}
        other = card.get("other") if isinstance(card.get("other"), list) else []
        return cls(opening_text=str(card.get("opening") or ""),
                   answers={a: answers.get(a) for a in ANSWER_ATTRIBUTES},
                   other=[str(x) for x in other if _usable(x)])

    def opening(self) -> str:
        return self.opening_text

    def is_override_turn(self, turn: int) -> bool:
        return False

    def hits_count(self) -> bool:
        return True

    def volunteer(self) -> str:
        """The next volunteered detail (it becomes used), or the exhausted reply."""
        if self.used_other < len(self.other):
            self.used_other += 1
            return self.other[self.used_other - 1]
        for attribute in VOLUNTEER_ORDER:
            value = self.answers.get(attribute)
            if _usable(value) and attribute not in self.used_answers:
                self.used_answers.add(attribute)
                return str(value)
        return EXHAUSTED

    def reply(self, ask_attribute: Any, turn: int) -> str:
        """The answer to the agent's `ask_attribute`; `turn` is the number of the turn being written."""
        a = ask_attribute
        if not isinstance(a, str) or a not in ALLOWED_ATTRIBUTES or a == "other":
            return self.volunteer()
        if a in self.used_answers:
            return ALREADY_TOLD.format(spoken=SPOKEN[a]) + self.volunteer()
        value = self.answers.get(a)
        if _usable(value):
            self.used_answers.add(a)
            return str(value)
        return no_preference_reply(a, turn)


@dataclass
class ScriptedCustomer:
    """The shopper of a scripted conversation (PERSONAS.md "Scripted conversations"): turn t sends
    `script[t-1]` whatever the agent asked or showed; after the last line, the exhausted reply."""

    lines: list[str]

    @classmethod
    def from_card(cls, card: dict) -> "ScriptedCustomer":
        return cls([str(x) for x in card["script"]])

    def opening(self) -> str:
        return self.lines[0]

    def is_override_turn(self, turn: int) -> bool:
        return False

    def hits_count(self) -> bool:
        return True

    def reply(self, ask_attribute: Any, turn: int) -> str:
        """The line of the turn being written (`turn`, 2..10), whatever was asked."""
        return self.lines[turn - 1] if 1 <= turn <= len(self.lines) else EXHAUSTED
