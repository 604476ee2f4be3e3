"""The TechJam Track 4 protocol, rule by rule (see ../shared/techjam/PROTOCOL.md).

Every function here mirrors one rule of the official evaluator so that a number
measured locally means what the official scorer would say.  Nothing in this
module knows about any particular agent.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

ALLOWED_ATTRIBUTES: tuple[str, ...] = (
    "category", "material", "color", "size", "style",
    "brand", "budget", "feature", "use_case", "other",
)
SCENARIOS: tuple[str, ...] = ("buying", "browsing", "intent_override", "boundary")
MAX_TURNS = 10
TOP_K = 10

MATERIAL_RE = re.compile(r"\b(cotton|polyester|nylon|leather|wool|spandex|silk|rayon|fabric)\b", re.I)
COLOR_RE = re.compile(r"\b(black|white|blue|red|pink|green|brown|gray|grey|purple|yellow|orange)\b", re.I)
_WS_RE = re.compile(r"\s+")
_CLEAN_STRIP = " -;,.\t\n"
_BUDGET_RE = re.compile(r"(?:\$|<=|under)\s*\d")
_DROPPED_CATEGORY_PARTS = {"clothing", "clothing shoes & jewelry", "clothing, shoes & jewelry"}

NO_ATTRIBUTE_MESSAGE = "Those options are not quite right yet. Ask me about one specific attribute."
FALLBACK_OLD_VALUE = "I prefer a different style."
FALLBACK_NEW_VALUE = "Please prioritize the target requirements."


def clean(s: str, limit: int = 180) -> str:
    """Collapse whitespace, strip separators, cut to `limit` characters."""
    s = _WS_RE.sub(" ", s).strip(_CLEAN_STRIP)
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


_WORDS = {MATERIAL_RE: ("cotton", "polyester", "nylon", "leather", "wool", "spandex", "silk", "rayon", "fabric"),
          COLOR_RE: ("black", "white", "blue", "red", "pink", "green", "brown", "gray", "grey", "purple", "yellow",
                     "orange")}
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


def intent_card(p: dict) -> IntentCard:
    """PROTOCOL.md `intent_card(p)`."""
    title = clean(str(p.get("title") or "product"))
    cleaned = card_values(p) or [title]
    hard = cleaned[0:2]
    soft = cleaned[2:4] or cleaned[0:1]
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
    if any(w in v for w in ("cotton", "polyester", "nylon", "leather", "wool", "spandex", "silk", "rayon", "fabric")):
        return "material"
    if any(w in v for w in ("color", "black", "white", "blue", "red", "pink", "green")):
        return "color"
    if any(w in v for w in ("size", "sizing", "width", "wide", "narrow")):
        return "size"
    if any(w in v for w in ("department", "style", "fit", "sleeve", "neck")):
        return "style"
    if any(w in v for w in ("hiking", "running", "gym", "winter", "outdoor", "work")):
        return "use_case"
    return "feature"


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
    turn = rng.choice([3, 4])
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
            title=str(ic.get("title", clean(str(target.get("title") or "product")))),
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
            return self._say("open_buying", f"I'm looking for {c}. A key requirement is: {hard[0]}.", (hard[0],))
        if self.scenario_type == "intent_override":
            old = self.behavior.old_value or FALLBACK_OLD_VALUE
            if old in self.hidden:  # hideclue: the old value is a real target value too
                old = FALLBACK_OLD_VALUE
            return self._say("open_override", f"I'm looking for {c}. {old}", (old,))
        return self._say("open_browsing", f"I'm looking for {c}, but I'm still exploring.")

    def is_override_turn(self, turn: int) -> bool:
        return self.scenario_type == "intent_override" and self.behavior.override_turn == turn

    def override_message(self) -> str:
        new = self.behavior.new_value or FALLBACK_NEW_VALUE
        if new in self.hidden:  # hideclue with < 3 card values: hard[0] is also the last one
            new = FALLBACK_NEW_VALUE
        self.disclosed.add(new)
        self.override_sent = True
        return self._say("override", f"Actually, ignore my earlier preference. What I need is: {new}.", (new,))

    def hits_count(self) -> bool:
        """A hit counts unless this is an override session whose override is still to come."""
        return self.scenario_type != "intent_override" or self.override_sent

    def reply(self, ask_attribute: Any) -> str:
        """The answer to the agent's `ask_attribute` after a turn without a hit."""
        a = ask_attribute
        if self.scenario_type == "boundary" and not self.boundary_used and isinstance(a, str) and a != "":
            self.boundary_used = True
            return self._say("boundary", f"I don't have a preference for {a}; please use your judgment.", (a,))
        if not isinstance(a, str) or a == "":
            return self._say("no_attribute", NO_ATTRIBUTE_MESSAGE)
        if a not in ALLOWED_ATTRIBUTES:
            a = "other"
        matches = [v for v in self.card.constraints if v not in self.disclosed and v not in self.hidden and (a == "other" or classify(v) == a)][:2]
        if not matches:
            return self._say("no_preference", f"I don't have an additional preference for {a}.", (a,))
        self.disclosed.update(matches)
        return self._say("values", "For that, what matters is: " + "; ".join(matches) + ".", tuple(matches))


def normalize_recommendations(recs: Any, catalog_ids: set[str] | dict, top_k: int = TOP_K) -> list[str]:
    """The first `top_k` unique catalog ids of a response's recommendations."""
    if not isinstance(recs, list):
        return []
    out: list[str] = []
    seen: set[str] = set()
    for item in recs:
        if isinstance(item, dict):
            raw = item.get("parent_asin")
            if raw is None:
                continue
        else:
            raw = item
        try:
            pid = str(raw).strip()
        except Exception:
            continue
        if not pid or pid in seen or pid not in catalog_ids:
            continue
        seen.add(pid)
        out.append(pid)
        if len(out) >= top_k:
            break
    return out


def valid_response(resp: Any) -> bool:
    """A dict whose `message` is a str; anything else counts as an empty response."""
    return isinstance(resp, dict) and isinstance(resp.get("message"), str)


def token_counts(resp: dict) -> tuple[int, int]:
    """(prompt, completion) tokens, each counted only if a non-negative int."""
    usage = resp.get("usage") if isinstance(resp, dict) else None
    if not isinstance(usage, dict):
        return 0, 0
    counts = []
    for key in ("prompt_tokens", "completion_tokens"):
        v = usage.get(key)
        counts.append(int(v) if isinstance(v, int) and v >= 0 else 0)
    return counts[0], counts[1]


def summarize(results: list[dict]) -> dict:
    """Hit rate, MRR, MTTC, efficiency and score with the official rounding."""
    n = len(results)
    if n == 0:
        return {"sample_count": 0, "hit_rate_at_10": 0.0, "mrr": 0.0, "mttc": 11.0,
                "efficiency": 0.0, "recommended_technical_score": 0.0}
    hits = sum(1 for r in results if r["hit"])
    hit_rate = round(hits / n, 6)
    mrr = round(sum(1.0 / r["rank"] for r in results if r["hit"]) / n, 6)
    mttc = round(sum(r["turn"] if r["hit"] else 11 for r in results) / n, 6)
    efficiency = round(min(1.0, max(0.0, (11 - mttc) / 10)), 6)
    score = round(0.5 * hit_rate + 0.3 * mrr + 0.2 * efficiency, 6)
    return {"sample_count": n, "hit_rate_at_10": hit_rate, "mrr": mrr, "mttc": mttc,
            "efficiency": efficiency, "recommended_technical_score": score}
