"""What the simulated shopper would say if a given product were the target.

The protocol's shopper is deterministic given the target's card, the
scenario and the questions asked, so for every candidate the agent can
predict each message exactly.  Comparing predictions with what was actually
said is the strongest evidence there is (see `rank.py`).
"""
from __future__ import annotations

from starter.catalog import Product
from starter.config import ALLOWED_ATTRIBUTES

NO_ATTRIBUTE_TEXT = "Those options are not quite right yet. Ask me about one specific attribute."


def opening_text(p: Product, scenario: str) -> str:
    """The turn-1 message the shopper would send for target `p`."""
    if scenario == "buying":
        return f"I'm looking for {p.shelf}. A key requirement is: {p.constraints[0]}."
    if scenario == "intent_override":
        return f"I'm looking for {p.shelf}. {p.constraints[-1]}"
    return f"I'm looking for {p.shelf}, but I'm still exploring."


def opening_value(p: Product, scenario: str) -> str | None:
    """The card value an opening reveals (buying: hard[0]; override: old value)."""
    if scenario == "buying":
        return p.constraints[0]
    if scenario == "intent_override":
        return p.constraints[-1]
    return None


def initial_disclosed(p: Product, scenario: str) -> frozenset[str]:
    """Values marked disclosed by the opening (only buying discloses)."""
    return frozenset((p.constraints[0],)) if scenario == "buying" else frozenset()


def override_text(p: Product) -> str:
    return f"Actually, ignore my earlier preference. What I need is: {p.constraints[0]}."


def answer_values(p: Product, disclosed: frozenset[str], attribute: str) -> tuple[str, ...]:
    """The (up to two) values the shopper reveals for `attribute` (protocol rule 4)."""
    a = attribute if attribute in ALLOWED_ATTRIBUTES else "other"
    out: list[str] = []
    for value, vtype in zip(p.constraints, p.types):
        if value not in disclosed and (a == "other" or vtype == a):
            out.append(value)
            if len(out) == 2:
                break
    return tuple(out)


def reply_text(values: tuple[str, ...], attribute: str | None) -> str:
    """The reply text for revealed `values` (or the no-preference / no-attribute text)."""
    if not isinstance(attribute, str) or attribute == "":
        return NO_ATTRIBUTE_TEXT
    if not values:
        a = attribute if attribute in ALLOWED_ATTRIBUTES else "other"
        return f"I don't have an additional preference for {a}."
    return "For that, what matters is: " + "; ".join(values) + "."


def predict_reply(p: Product, disclosed: frozenset[str], attribute: str | None) -> tuple[str, tuple[str, ...]]:
    """(text, revealed values) of the reply to `attribute` if `p` were the target."""
    if not isinstance(attribute, str) or attribute == "":
        return NO_ATTRIBUTE_TEXT, ()
    values = answer_values(p, disclosed, attribute)
    return reply_text(values, attribute), values
