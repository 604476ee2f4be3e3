"""The deterministic simulated shopper of PROTOCOL.md (the evaluator plays it)."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from contest.card import IntentCard, card_title, classify, intent_card
from contest.messages import (FALLBACK_NEW_VALUE, FALLBACK_OLD_VALUE, NO_ATTRIBUTE_MESSAGE, boundary_message,
                              no_preference_message, opening_message, override_message, reply_attribute, reveal,
                              values_message)

OVERRIDE_TURNS = (3, 4)


@dataclass(frozen=True)
class Behavior:
    """Scenario behaviour: for override sessions, when and what changes."""

    override_turn: int | None = None
    old_value: str | None = None
    new_value: str | None = None


def derive_behavior(sample_id: str, scenario_type: str, card: IntentCard) -> Behavior:
    """PROTOCOL.md intent-override behaviour (seeded by sample id and scenario)."""
    if scenario_type != "intent_override":
        return Behavior()
    rng = random.Random(sample_id + "\0" + scenario_type)
    turn = rng.choice(list(OVERRIDE_TURNS))
    old = card.soft_preferences[-1] if card.soft_preferences else FALLBACK_OLD_VALUE
    new = card.hard_constraints[0] if card.hard_constraints else FALLBACK_NEW_VALUE
    return Behavior(override_turn=turn, old_value=old, new_value=new)


def card_from_row(row: dict, target: dict) -> tuple[IntentCard, Behavior]:
    """Use a session's own `intent_card` / `behavior` if it carries both, else derive them."""
    sample_id = str(row.get("sample_id", ""))
    scenario = str(row.get("scenario_type", ""))
    if isinstance(row.get("intent_card"), dict) and isinstance(row.get("behavior"), dict):
        ic, bh = row["intent_card"], row["behavior"]
        card = IntentCard(
            title=str(ic.get("title", card_title(target))),
            hard_constraints=tuple(ic.get("hard_constraints", [])),
            soft_preferences=tuple(ic.get("soft_preferences", [])),
        )
        behavior = Behavior(
            override_turn=bh.get("override_turn"),
            old_value=bh.get("old_value"),
            new_value=bh.get("new_value"),
        )
        return card, behavior
    card = intent_card(target)
    return card, derive_behavior(sample_id, scenario, card)


@dataclass
class Customer:
    """The deterministic simulated shopper of PROTOCOL.md.

    `phrasing` lets a perturbation reword messages without touching the
    policy: it receives (kind, text, values) and returns the text to send.
    """

    scenario_type: str
    category: str
    card: IntentCard
    behavior: Behavior
    phrasing: Any = None
    disclosed: set[str] = field(default_factory=set)
    boundary_used: bool = False
    override_sent: bool = False

    hidden: frozenset[str] = frozenset()

    def _say(self, kind: str, text: str, values: tuple[str, ...] = ()) -> str:
        """The official text, or the perturbation's rewording of the same content."""
        if self.phrasing is None:
            return text
        return self.phrasing(kind, text, {"category": self.category, "values": values})

    def opening(self) -> str:
        hard = self.card.hard_constraints
        c = self.category
        if self.scenario_type == "buying" and hard and hard[0] not in self.hidden:
            self.disclosed.add(hard[0])
            return self._say("open_buying", opening_message("buying", c, hard[0]), (hard[0],))
        if self.scenario_type == "intent_override":
            old = self.behavior.old_value or FALLBACK_OLD_VALUE
            if old in self.hidden:  # hideclue: the old value is a real target value too
                old = FALLBACK_OLD_VALUE
            return self._say("open_override", opening_message("intent_override", c, old), (old,))
        return self._say("open_browsing", opening_message("browsing", c, None))

    def is_override_turn(self, turn: int) -> bool:
        return self.scenario_type == "intent_override" and self.behavior.override_turn == turn

    def override_message(self) -> str:
        new = self.behavior.new_value or FALLBACK_NEW_VALUE
        if new in self.hidden:  # hideclue with < 3 card values: hard[0] is also the last one
            new = FALLBACK_NEW_VALUE
        self.disclosed.add(new)
        self.override_sent = True
        return self._say("override", override_message(new), (new,))

    def hits_count(self) -> bool:
        """A hit counts unless this is an override session whose override is still to come."""
        return self.scenario_type != "intent_override" or self.override_sent

    def reply(self, ask_attribute: Any, turn: int | None = None) -> str:
        """The answer to the agent's `ask_attribute` after a turn without a hit (`turn` is not used:
        the template shopper's reply does not depend on it)."""
        a = ask_attribute
        if self.scenario_type == "boundary" and not self.boundary_used and isinstance(a, str) and a != "":
            self.boundary_used = True
            return self._say("boundary", boundary_message(a), (a,))
        if not isinstance(a, str) or a == "":
            return self._say("no_attribute", NO_ATTRIBUTE_MESSAGE)
        a = reply_attribute(a)
        values = self.card.constraints
        matches = reveal(values, [classify(v) for v in values], self.disclosed, a, self.hidden)
        if not matches:
            return self._say("no_preference", no_preference_message(a), (a,))
        self.disclosed.update(matches)
        return self._say("values", values_message(matches), tuple(matches))
