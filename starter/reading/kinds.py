"""The names a message, a session's scenario and a session's path take, as enums.

They are `StrEnum`s: each member equals its string, so traces and JSON read
the same words as the protocol's texts ("override", "intent_override").
"""
from __future__ import annotations

from enum import StrEnum


class MessageKind(StrEnum):
    """What a shopper message is, as read (a template exactly, or free text by its cues)."""

    OPEN_BUYING = "open_buying"          # "I'm looking for C. A key requirement is: V."
    OPEN_BROWSING = "open_browsing"      # "I'm looking for C, but I'm still exploring."
    OPEN_OVERRIDE = "open_override"      # "I'm looking for C. <old value>"
    FREE_OPENING = "free_opening"        # a first message in the shopper's own words
    OVERRIDE = "override"                # "Actually, ignore my earlier preference..."
    VALUES = "values"                    # "For that, what matters is: ..." (or free text stating values)
    NO_PREFERENCE = "no_preference"      # "I don't have an additional preference for A."
    BOUNDARY = "boundary"                # "I don't have a preference for A; please use your judgment."
    NO_ATTRIBUTE = "no_attribute"        # "Those options are not quite right yet..."
    FREE = "free"                        # anything else


class Scenario(StrEnum):
    """The protocol's session scenario, as far as the agent can tell."""

    BUYING = "buying"
    BROWSING = "browsing"
    INTENT_OVERRIDE = "intent_override"
    UNKNOWN = "unknown"


class SessionPath(StrEnum):
    """Which model reads a session: the template shopper's exact likelihood, or the people model."""

    TEMPLATE = "template"
    PEOPLE = "people"
