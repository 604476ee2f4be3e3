"""A perturbed customer voice for robustness panels (`--perturb`).

The policy (which values are revealed when) never changes; only the words do:
- `para`: every template reworded into one of several natural variants;
- `drop`: a share of the words inside revealed values and the category deleted;
- `catdamage`: the category's words shuffled and one dropped;
- `hideclue`: the last card constraint is never revealed (handled by the customer);
combined with `+`, e.g. `para+drop`.  Everything is seeded per session.
"""
from __future__ import annotations

import random
import re
from typing import Callable

from contest import messages as M

MODES = ("para", "drop", "catdamage", "hideclue")

# The official texts with the slots this module fills ({category}, {v0}, {joined}).
OFFICIAL = {
    "open_buying": M.OPEN_BUYING.format(category="{category}", value="{v0}"),
    "open_override": M.OPEN_OVERRIDE.format(category="{category}", value="{v0}"),
    "open_browsing": M.OPEN_BROWSING.format(category="{category}"),
    "override": M.OVERRIDE.format(value="{v0}"),
    "boundary": M.BOUNDARY.format(attribute="{v0}"),
    "no_attribute": M.NO_ATTRIBUTE_MESSAGE,
    "no_preference": M.NO_PREFERENCE.format(attribute="{v0}"),
    "values": M.VALUES.format(values="{joined}"),
}

PARAPHRASES: dict[str, list[str]] = {
    "open_buying": [
        "Hi! I need {category}, and it has to be {v0}.",
        "Can you help me find {category}? Must have: {v0}",
        "shopping for {category} -- {v0} is a must",
        "I want to buy {category}. The important thing for me is {v0}.",
        "Looking to get {category}; non-negotiable: {v0}",
        "hey, searching {category}... really need it {v0}",
    ],
    "open_override": [
        "Hi, I'm shopping for {category}. I'd like {v0}",
        "I need {category}. Ideally {v0}",
        "looking at {category} -- something with {v0}",
        "Could you show me {category}? I was thinking {v0}",
    ],
    "open_browsing": [
        "Just browsing {category} for now.",
        "Hi, show me some {category}? Not sure what I want yet.",
        "I'm window shopping: {category}.",
        "any good {category}? still making up my mind",
        "Looking around at {category}, nothing specific in mind.",
    ],
    "override": [
        "Wait, forget what I said before. I really need {v0}.",
        "Scratch that earlier preference -- the thing I need is {v0}.",
        "Change of plans: {v0} is what matters now.",
        "Never mind my earlier wish; I need {v0} instead.",
    ],
    "boundary": [
        "No strong opinion on {v0}, you decide.",
        "{v0}? Doesn't matter to me, your call.",
        "I'm flexible about {v0}; pick what you think is best.",
    ],
    "no_attribute": [
        "Hmm, none of these are it. Could you ask me something specific?",
        "Not quite what I want. Ask me a question about it maybe?",
        "These aren't right. What would help you narrow it down?",
    ],
    "no_preference": [
        "I don't really care about {v0}.",
        "No particular {v0} preference here.",
        "{v0} doesn't matter to me.",
    ],
    "values": [
        "Well, I care about {joined}.",
        "It should have {joined}.",
        "Mostly this: {joined}",
        "I'd want {joined}, please.",
        "Important to me: {joined}.",
    ],
}
_JOINERS = [" and ", ", plus ", ", also "]
_WORD_RE = re.compile(r"\S+")


def parse_modes(spec: str) -> frozenset[str]:
    """`none`, one mode, or a `+` combination; raises ValueError on an unknown mode."""
    spec = (spec or "none").strip().lower()
    if spec in ("", "none"):
        return frozenset()
    modes = frozenset(m.strip() for m in spec.split("+") if m.strip())
    unknown = modes - set(MODES)
    if unknown:
        raise ValueError(f"unknown --perturb mode(s): {', '.join(sorted(unknown))}; choose from {', '.join(MODES)}")
    return modes


def drop_words(text: str, rate: float, rng: random.Random) -> str:
    """Delete a share of the words (always keeping at least one)."""
    words = _WORD_RE.findall(text)
    if len(words) <= 1:
        return text
    kept = [w for w in words if rng.random() >= rate]
    if not kept:
        kept = [words[rng.randrange(len(words))]]
    return " ".join(kept)


def damage_category(category: str, rng: random.Random) -> str:
    """Shuffle the category's words and drop one of them."""
    words = category.split()
    if len(words) <= 1:
        return category
    rng.shuffle(words)
    del words[rng.randrange(len(words))]
    return " ".join(words)


def make_phrasing(modes: frozenset[str], sample_id: str, drop_rate: float = 0.35) -> Callable[[str, str, dict], str]:
    """A phrasing function for `Customer`: (kind, official_text, slots) -> text."""
    rng = random.Random(f"perturb:{sample_id}:{'+'.join(sorted(modes))}")

    def phrase(kind: str, text: str, slots: dict) -> str:
        values = list(slots.get("values") or ())
        category = str(slots.get("category", ""))
        value_kinds = {"open_buying", "open_override", "override", "values"}
        if "drop" in modes:
            category = drop_words(category, drop_rate, rng)
            if kind in value_kinds:
                values = [drop_words(v, drop_rate, rng) for v in values]
        if "catdamage" in modes:
            category = damage_category(category, rng)
        if "para" in modes:
            template = rng.choice(PARAPHRASES[kind])
            joiner = rng.choice(_JOINERS)
        else:
            template = OFFICIAL[kind]
            joiner = "; "
        return template.format(category=category, v0=values[0] if values else "",
                               joined=joiner.join(values))

    return phrase
