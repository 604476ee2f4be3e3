"""What the simulated shopper would say if a given product were the target.

The protocol's shopper is deterministic given the target's card, the
scenario and the questions asked, so for every candidate the agent can
predict each message exactly, with the contest's own templates and reveal
rule (`contest.messages`).  Comparing predictions with what was actually said
is the strongest evidence there is (see `rank.py`).
"""
from __future__ import annotations

from contest import messages as M
from starter.catalog import Product
from starter.config import QUESTION_ATTRIBUTES, TUNABLES

Answers = tuple[tuple[str, ...], ...]
# The card values a candidate's shopper has disclosed so far, in the order disclosed.  A tuple, not a
# set: read only by membership, and a tuple of strings leaves the garbage collector's tracking while a
# set never does (at a million products the live sessions' tracks made each full collection 300-490 ms,
# most of the slowest turns).
Disclosed = tuple[str, ...]
# Where each question attribute's answer sits in an `Answers` tuple.
ANSWER_POSITION: dict[str, int] = {a: k for k, a in enumerate(QUESTION_ATTRIBUTES)}
_REPLY_AS: tuple[str, ...] = tuple(M.reply_attribute(a) for a in QUESTION_ATTRIBUTES)
# (card types, which card values are disclosed) -> per question attribute, the slice of the card
# values it reveals.  Cards share few type patterns, so this stays small.
_PLANS: dict[tuple[tuple[str, ...], tuple[bool, ...]], tuple[slice, ...]] = {}
PLAN_CACHE_ENTRIES = TUNABLES.answer_plan_entries
_SLICES: dict[tuple[int, int, int], slice] = {}     # (start, stop, step) -> the one slice (few: card positions)


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


def question_answers(p: Product, disclosed: Disclosed) -> Answers:
    """The values revealed by each of QUESTION_ATTRIBUTES (in that order) if `p` were the target:
    `M.reveal_each` as a tuple, read off the card through the plan of its type pattern."""
    values = p.constraints
    key = (p.types, tuple(map(disclosed.__contains__, values)) if disclosed else ())
    plan = _PLANS.get(key) or _plan(*key)      # the memo read inline: this runs per candidate per turn
    return tuple(map(values.__getitem__, plan))


def answer_at(p: Product, disclosed: Disclosed, position: int) -> tuple[str, ...]:
    """`question_answers(p, disclosed)[position]` alone."""
    values = p.constraints
    key = (p.types, tuple(map(disclosed.__contains__, values)) if disclosed else ())
    return values[(_PLANS.get(key) or _plan(*key))[position]]


def _plan(types: tuple[str, ...], flags: tuple[bool, ...]) -> tuple[slice, ...]:
    """Rule 4 (`M.reveal_each`) for every question attribute as slices of the card values: the first
    two undisclosed values of the attribute's type, in card order (of any type for `other`).  Two
    values at positions j < k are the slice j:k+1:k-j."""
    key = (types, flags)
    got = _PLANS.get(key)
    if got is None:
        per = M.VALUES_PER_REPLY
        undisclosed: list[int] = []
        by_type: dict[str, list[int]] = {}
        for j, vtype in enumerate(types):
            if not (flags and flags[j]):
                undisclosed.append(j)
                by_type.setdefault(vtype, []).append(j)
        got = tuple(_slice((undisclosed if a == "other" else by_type.get(a, []))[:per]) for a in _REPLY_AS)
        if len(_PLANS) < PLAN_CACHE_ENTRIES:
            _PLANS[key] = got
    return got


def _slice(positions: list[int]) -> slice:
    """The slice of one or two card positions, one object per distinct slice: plans share them (a
    slice is tracked by the garbage collector; a million-product run held 48,000 of them)."""
    if not positions:
        key = (0, 0, 1)
    elif len(positions) == 1:
        key = (positions[0], positions[0] + 1, 1)
    else:
        j, k = positions
        key = (j, k + 1, k - j)
    got = _SLICES.get(key)
    if got is None:
        got = _SLICES[key] = slice(*key)
    return got
