"""Ids, URLs and instructions: text that must never become a constraint.

Shoppers (or attackers) may type product ids, links or prompt instructions;
none of it may reach retrieval.  The one exemption is decided by the gate:
a value taken verbatim from an official template that is a catalog card value.
"""
from __future__ import annotations

import re

# Always refused (unless the value is verbatim catalog text from a template message).
ASIN_RE = re.compile(r"\bB0[0-9A-Z]{8}\b", re.I)
ID_RE = re.compile(r"\b(?:parent_asin|asin|product[_ ]id|sku)\b\s*[:=#]?\s*[A-Z0-9]{6,}", re.I)
URL_RE = re.compile(r"(?:https?://|www\.|\b[a-z0-9-]+\.(?:com|net|org|io|ai|co)\b(?:/\S*)?)", re.I)
HARD_INSTRUCTION_RE = re.compile(
    # ("ignore my previous preference" is a shopper's override, not an attack: the object must be
    # instructions / prompt / rules / system.)
    r"\b(?:ignore|disregard|forget|override)\b[^.;:]{0,40}\b(?:instructions?|prompts?|rules|guidelines|system)\b"
    r"|\bsystem\s*prompt\b|\byou are now\b|\bact as\b|\bpretend (?:to be|you)\b|\bjailbreak\b|\bdeveloper mode\b"
    r"|^\s*(?:system|assistant|developer|user)\s*:|<\s*/?\s*(?:system|assistant|instructions?)\s*>"
    r"|\bnew instructions?\b|\breturn (?:only|the) (?:product|asin|id)\b",
    re.I)
# Refused unless the value is verbatim a catalog clue (761 real card values say "recommend").
# ("recommended" is left alone: "Hand wash recommended", "Manufacturer recommended age" are card values.)
SOFT_INSTRUCTION_RE = re.compile(r"\b(?:recommend(?:s|ations?)?|instructions?|prompts?|ignore|disregard|"
                                 r"output|respond|rank)\b", re.I)


def hard_injection(text: str) -> str | None:
    """Why `text` is an id, URL or instruction that must never reach retrieval (None if it is not)."""
    if ASIN_RE.search(text) or ID_RE.search(text):
        return "looks like an instruction or id (product id)"
    if URL_RE.search(text):
        return "looks like an instruction or id (URL)"
    if HARD_INSTRUCTION_RE.search(text):
        return "looks like an instruction or id (instruction)"
    return None


def soft_injection(text: str) -> str | None:
    if SOFT_INSTRUCTION_RE.search(text):
        return "looks like an instruction or id (instruction word)"
    return None
