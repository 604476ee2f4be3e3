"""What the simulated shopper would say if a given product were the target.

The protocol's shopper is deterministic given the target's card, the
scenario and the questions asked, so for every candidate the agent can
predict each message exactly, with the contest's own templates and reveal
rule (`contest.messages`).  Comparing predictions with what was actually said
is the strongest evidence there is (see `rank.py`).  This module states the
prediction for one product; the turn computes the same for a whole pool over
the card arrays (`starter.index.card_arrays`), and tests hold the two equal.
"""
from __future__ import annotations

from contest import messages as M
from starter.index.catalog import Product

# The card values a candidate's shopper has disclosed so far (read only by membership).
Disclosed = tuple[str, ...]


def opening_text(p: Product, scenario: str) -> str:
    """The turn-1 message the shopper would send for target `p`."""
    return M.opening_message(scenario, p.shelf, opening_value(p, scenario))


def opening_value(p: Product, scenario: str) -> str | None:
    """The card value an opening reveals (buying: hard[0]; override: old value)."""
    if scenario == "buying":
        return p.constraints[0]
    if scenario == "intent_override":
        return p.constraints[-1]
    return None


def initial_disclosed(p: Product, scenario: str) -> Disclosed:
    """Values marked disclosed by the opening (only buying discloses)."""
    return (p.constraints[0],) if scenario == "buying" else ()


def override_text(p: Product) -> str:
    return M.override_message(p.constraints[0])


def answer_values(p: Product, disclosed: Disclosed, attribute: str) -> tuple[str, ...]:
    """The (up to two) values the shopper reveals for `attribute` (protocol rule 4)."""
    return M.reveal(p.constraints, p.types, disclosed, attribute)


def predict_reply(p: Product, disclosed: Disclosed, attribute: str | None) -> tuple[str, tuple[str, ...]]:
    """(text, revealed values) of the reply to `attribute` if `p` were the target."""
    if not isinstance(attribute, str) or attribute == "":
        return M.NO_ATTRIBUTE_MESSAGE, ()
    values = answer_values(p, disclosed, attribute)
    return M.reply_message(values, attribute), values
