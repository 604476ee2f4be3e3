"""The hidden intent card, derived from the target product (PROTOCOL.md "Hidden intent card").

Every function mirrors one rule of the official evaluator, so that the agent's
replay of a candidate's card and the evaluator's derivation of the target's
card are the same code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

# The protocol's words: the first of each found in a product's text joins its card.
MATERIAL_WORDS: tuple[str, ...] = ("cotton", "polyester", "nylon", "leather", "wool", "spandex", "silk", "rayon",
                                   "fabric")
COLOR_WORDS: tuple[str, ...] = ("black", "white", "blue", "red", "pink", "green", "brown", "gray", "grey", "purple",
                                "yellow", "orange")
MATERIAL_RE = re.compile(r"\b(" + "|".join(MATERIAL_WORDS) + r")\b", re.I)
COLOR_RE = re.compile(r"\b(" + "|".join(COLOR_WORDS) + r")\b", re.I)
# classify()'s substring tests, first rule wins (PROTOCOL.md `classify`).
_CLASSIFY_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("material", MATERIAL_WORDS),
    ("color", ("color", "black", "white", "blue", "red", "pink", "green")),
    ("size", ("size", "sizing", "width", "wide", "narrow")),
    ("style", ("department", "style", "fit", "sleeve", "neck")),
    ("use_case", ("hiking", "running", "gym", "winter", "outdoor", "work")),
)
_BUDGET_RE = re.compile(r"(?:\$|<=|under)\s*\d")
_CLEAN_STRIP = " -;,.\t\n"
_DROPPED_CATEGORY_PARTS = {"clothing", "clothing shoes & jewelry", "clothing, shoes & jewelry"}
# Hard constraints are the first two card values, soft preferences the next two.
HARD_COUNT, CARD_SIZE = 2, 4


VALUE_LIMIT = 180     # PROTOCOL.md: a card value is cut to this many characters


def clean(s: str, limit: int = VALUE_LIMIT) -> str:
    r"""Collapse whitespace, strip separators, cut to `limit` characters.

    PROTOCOL.md collapses with `re.sub(r"\s+", " ", s)`.  `str.split()` splits at exactly the
    characters `\s` matches (both test `Py_UNICODE_ISSPACE`; checked over all of Unicode in the
    tests) and drops the ends' whitespace, which the strip removes anyway: the same string, in
    half the time (a cold build cleans every card value)."""
    s = " ".join(s.split()).strip(_CLEAN_STRIP)
    return s[:limit].rstrip()


def flatten(v: Any) -> list[str]:
    """A product field as the list of strings the card is drawn from."""
    if isinstance(v, dict):
        return [f"{k}: {x}" for k, x in v.items() if x is not None and x != "" and x != []]
    if isinstance(v, list):
        return [str(x) for x in v if x is not None and x != ""]
    if v is None or v == "":
        return []
    return [str(v)]


def _searchable_pieces(p: dict) -> Iterator[str]:
    for name in ("title", "features", "details", "description", "categories", "store"):
        value = p.get(name)
        if isinstance(value, dict):
            yield from (f"{k} {x}" for k, x in value.items())
        elif isinstance(value, list):
            yield from (str(x) for x in value)
        elif value is not None:
            yield str(value)


def searchable_text(p: dict) -> str:
    """The text the first material / colour word is searched in."""
    return " ".join(_searchable_pieces(p)).strip()


_WORDS = {MATERIAL_RE: MATERIAL_WORDS, COLOR_RE: COLOR_WORDS}
# The only characters for which case-insensitive matching of an ASCII word
# differs from matching the lower-cased text (checked over all of Unicode:
# each other character keeps its length, its \w-ness and its non-ASCII-ness
# when lower-cased): dotted/dotless i, long s, Kelvin sign.
_FOLD_SPECIAL = ("\u0130", "\u0131", "\u017f", "\u212a")


def first_word(regex: re.Pattern, p: dict, text: str | None = None) -> str | None:
    """The lower-cased first match of `regex` (MATERIAL_RE / COLOR_RE) in `searchable_text(p)`.

    Case-insensitive matching of these ASCII words equals case-sensitive
    matching of the lower-cased text (same length, same word boundaries)
    unless the text holds one of four special characters; that is several
    times faster.  Otherwise the protocol's regex is used as it is.
    """
    if text is None:
        text = searchable_text(p)
    words = _WORDS.get(regex)
    if words is not None and not any(ch in text for ch in _FOLD_SPECIAL):
        return _earliest_word(text.lower(), words)
    m = regex.search(text)
    return m.group(1).lower() if m else None


def _is_word_char(ch: str) -> bool:
    """`\\w` of Python's re for str patterns."""
    return ch.isalnum() or ch == "_"


def _earliest_word(low: str, words: tuple[str, ...]) -> str | None:
    """The word (none a prefix of another) at the earliest whole-word position in `low`."""
    best_pos, best = len(low) + 1, None
    n = len(low)
    for w in words:
        pos = low.find(w, 0, best_pos + len(w))
        while 0 <= pos < best_pos:
            end = pos + len(w)
            if (pos == 0 or not _is_word_char(low[pos - 1])) and (end == n or not _is_word_char(low[end])):
                best_pos, best = pos, w
                break
            pos = low.find(w, pos + 1, best_pos + len(w))
    return best


@dataclass(frozen=True)
class IntentCard:
    """The shopper's hidden wishes, derived from the target product."""

    title: str
    hard_constraints: tuple[str, ...]
    soft_preferences: tuple[str, ...]

    @property
    def constraints(self) -> tuple[str, ...]:
        """All values in the order they may be revealed."""
        return self.hard_constraints + self.soft_preferences


def card_values(p: dict, limit: int | None = None) -> list[str]:
    """The de-duplicated, cleaned candidate values of a product, in card order.

    With `limit`, stops after that many values (the card uses only four).
    """
    candidates = flatten(p.get("features")) + flatten(p.get("details"))
    text = searchable_text(p)
    material = first_word(MATERIAL_RE, p, text)
    color = first_word(COLOR_RE, p, text)
    if material:
        candidates.insert(0, material)
    if color:
        candidates.insert(1, "color: " + color)
    price = p.get("price")
    if price is not None and price != "":
        candidates.append("budget around $" + str(price))
    cleaned: list[str] = []
    seen: set[str] = set()
    for raw in candidates:
        value = clean(raw)
        if value and value not in seen:
            seen.add(value)
            cleaned.append(value)
            if limit is not None and len(cleaned) >= limit:
                break
    return cleaned


def card_title(p: dict) -> str:
    """The card's title (also its only value when the product has no other)."""
    return clean(str(p.get("title") or "product"))


def split_card(values: list[str]) -> tuple[list[str], list[str]]:
    """(hard constraints, soft preferences): values 0-1 and 2-3, soft repeating hard[0] when empty."""
    return values[0:HARD_COUNT], (values[HARD_COUNT:CARD_SIZE] or values[0:1])


def intent_card(p: dict) -> IntentCard:
    """PROTOCOL.md `intent_card(p)`."""
    title = card_title(p)
    hard, soft = split_card(card_values(p) or [title])
    return IntentCard(title=title, hard_constraints=tuple(hard), soft_preferences=tuple(soft))


def coarse_category(categories: Iterable[str] | None) -> str:
    """The opening's category phrase: the last two meaningful path parts."""
    parts: list[str] = []
    for entry in categories or []:
        for part in str(entry).split(","):
            part = part.strip()
            if part and part.lower() not in _DROPPED_CATEGORY_PARTS:
                parts.append(part)
    return " ".join(parts[-2:]) if parts else "clothing item"


def classify(value: str) -> str:
    """The attribute type of a card value (plain substring tests, first rule wins)."""
    v = value.lower()
    if "budget" in v or _BUDGET_RE.search(v):
        return "budget"
    for attribute, words in _CLASSIFY_RULES:
        if any(w in v for w in words):
            return attribute
    return "feature"
