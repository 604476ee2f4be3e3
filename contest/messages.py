"""What the simulated shopper says, word for word (PROTOCOL.md "Messages"), and the reveal rule.

The agent reads these templates to recognise a template message and to predict
what a candidate target would make the shopper say; the evaluator's customer
writes them.  One copy of each text.
"""
from __future__ import annotations

from typing import Container, Iterable, Sequence

from contest.rules import ALLOWED_ATTRIBUTES

OPEN_BUYING = "I'm looking for {category}. A key requirement is: {value}."
OPEN_OVERRIDE = "I'm looking for {category}. {value}"
OPEN_BROWSING = "I'm looking for {category}, but I'm still exploring."
OVERRIDE = "Actually, ignore my earlier preference. What I need is: {value}."
VALUES = "For that, what matters is: {values}."
NO_PREFERENCE = "I don't have an additional preference for {attribute}."
BOUNDARY = "I don't have a preference for {attribute}; please use your judgment."
NO_ATTRIBUTE_MESSAGE = "Those options are not quite right yet. Ask me about one specific attribute."
VALUE_SEPARATOR = "; "
FALLBACK_OLD_VALUE = "I prefer a different style."
FALLBACK_NEW_VALUE = "Please prioritize the target requirements."
# At most this many values are revealed by one reply.
VALUES_PER_REPLY = 2


def reply_attribute(attribute: object) -> str:
    """The attribute a reply speaks about: an unknown string is answered as `other`."""
    return attribute if isinstance(attribute, str) and attribute in ALLOWED_ATTRIBUTES else "other"


def reveal_each(values: Sequence[str], types: Sequence[str], disclosed: Container[str],
                attributes: Iterable[str], hidden: Container[str] = frozenset()) -> dict[str, tuple[str, ...]]:
    """Rule 4 for several questions at once: per attribute, the first two values, in card
    order, not yet disclosed (nor hidden) whose type is the attribute (any type for `other`)."""
    by_type: dict[str, list[str]] = {}
    undisclosed: list[str] = []
    for value, vtype in zip(values, types):
        if value not in disclosed and value not in hidden:
            undisclosed.append(value)
            by_type.setdefault(vtype, []).append(value)
    out: dict[str, tuple[str, ...]] = {}
    for attribute in attributes:
        a = reply_attribute(attribute)
        out[attribute] = tuple((undisclosed if a == "other" else by_type.get(a, ()))[:VALUES_PER_REPLY])
    return out


def reveal(values: Sequence[str], types: Sequence[str], disclosed: Container[str], attribute: str,
           hidden: Container[str] = frozenset()) -> tuple[str, ...]:
    """Rule 4 for one question: the values the shopper reveals when asked about `attribute`
    (the same rule as `reveal_each`, in one pass without the per-type table)."""
    a = reply_attribute(attribute)
    out: list[str] = []
    for value, vtype in zip(values, types):
        if value not in disclosed and value not in hidden and (a == "other" or vtype == a):
            out.append(value)
            if len(out) == VALUES_PER_REPLY:
                break
    return tuple(out)


def opening_message(scenario: str, category: str, value: str | None) -> str:
    """The turn-1 message: buying names hard[0], override the old value, the rest only browse."""
    if scenario == "buying" and value is not None:
        return OPEN_BUYING.format(category=category, value=value)
    if scenario == "intent_override" and value is not None:
        return OPEN_OVERRIDE.format(category=category, value=value)
    return OPEN_BROWSING.format(category=category)


def override_message(value: str) -> str:
    return OVERRIDE.format(value=value)


def values_message(values: Sequence[str]) -> str:
    return VALUES.format(values=VALUE_SEPARATOR.join(values))


def no_preference_message(attribute: str) -> str:
    return NO_PREFERENCE.format(attribute=attribute)


def boundary_message(attribute: str) -> str:
    return BOUNDARY.format(attribute=attribute)


def reply_message(values: Sequence[str], attribute: object) -> str:
    """The answer to `attribute` that reveals `values` (no boundary, no override)."""
    if not isinstance(attribute, str) or attribute == "":
        return NO_ATTRIBUTE_MESSAGE
    if not values:
        return no_preference_message(reply_attribute(attribute))
    return values_message(values)


def template_parts(template: str) -> tuple[str, str]:
    """(text before, text after) the single placeholder of a one-slot template."""
    head, _, rest = template.partition("{")
    return head, rest.partition("}")[2]
