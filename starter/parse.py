"""Parse one shopper message into an `Observation`.

The protocol's templates are recognised first and exactly.  Anything else
goes through a loose parser (cue words for no-preference, refusal, override
and "not right" messages; regex for materials, colours, budgets and
negations) and keeps its content words as keywords for soft matching and
BM25.  Odd input (non-str, empty, huge) yields a defined observation.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from starter.catalog import tokens

MAX_MESSAGE_CHARS = 4000

OPEN_BUYING_RE = re.compile(r"^I'm looking for (?P<rest>.+)$", re.S)
BUYING_MARK = ". A key requirement is: "
BROWSING_RE = re.compile(r"^I'm looking for (?P<cat>.+), but I'm still exploring\.$", re.S)
OVERRIDE_RE = re.compile(r"^Actually, ignore my earlier preference\. What I need is: (?P<v>.*)\.$", re.S)
VALUES_RE = re.compile(r"^For that, what matters is: (?P<v>.*)\.$", re.S)
NO_PREF_RE = re.compile(r"^I don't have an additional preference for (?P<a>.*)\.$", re.S)
BOUNDARY_RE = re.compile(r"^I don't have a preference for (?P<a>.*); please use your judgment\.$", re.S)
NO_ATTRIBUTE_TEXT = "Those options are not quite right yet. Ask me about one specific attribute."

MATERIAL_WORDS = ("cotton", "polyester", "nylon", "leather", "wool", "spandex", "silk", "rayon", "fabric",
                  "denim", "linen", "suede", "rubber", "canvas", "cashmere", "fleece", "satin", "velvet")
COLOR_WORDS = ("black", "white", "blue", "red", "pink", "green", "brown", "gray", "grey", "purple", "yellow",
               "orange", "navy", "beige", "gold", "silver", "khaki", "ivory", "tan")
_MATERIAL_RE = re.compile(r"\b(" + "|".join(MATERIAL_WORDS) + r")\b")
_COLOR_RE = re.compile(r"\b(" + "|".join(COLOR_WORDS) + r")\b")
_NEGATION_RE = re.compile(r"\b(?:no|not|without|avoid|except|never|hate|dislike|anything but)\s+(?:any\s+|too\s+)?([a-z]+)")
# Words after a negation that say nothing about the product ("not sure", "not quite").
_NEGATION_STOP = frozenset("sure quite really very much yet right it that this so bad only just exactly necessarily "
                           "big fan idea preference particular strong opinion problem worries matter".split())
_BUDGET_RE = re.compile(
    r"(?:under|below|less than|at most|max(?:imum)?|up to|<=?|cheaper than|around|about|budget(?: of| around| is)?)"
    r"\s*\$?\s*(\d+(?:\.\d+)?)|\$\s*(\d+(?:\.\d+)?)"
)
_OVERRIDE_CUE = re.compile(r"\b(ignore|forget|scratch that|never ?mind|change of plans?|changed my mind|instead|"
                           r"on second thought|disregard)\b")
_BOUNDARY_CUE = re.compile(r"\b(your (?:call|judg(?:e)?ment|choice)|you decide|up to you|use your|pick what|"
                           r"whatever you think|you choose|surprise me)\b")
_NO_PREF_CUE = re.compile(r"\b(?:don'?t|do not|doesn'?t|does not|no|not)\b[^.;!?]{0,40}\b(?:preference|care|matter|"
                          r"opinion|particular|fussy|picky|mind)\b|\b(?:flexible|indifferent|any (?:is|will do)|"
                          r"doesn'?t matter|no preference)\b")
_NOT_RIGHT_CUE = re.compile(r"\b(?:not quite|aren'?t right|not right|none of (?:these|those|them)|not it|"
                            r"ask me|what would help|not what i want)\b")
_OPENING_CUE = re.compile(r"\b(?:looking for|shopping for|searching|need|want|find|show me|browsing|"
                          r"in the market for)\b")

# Words of a budget phrase ("under $30", "at most 25 dollars"): the budget is
# read by _BUDGET_RE, so these words are not product evidence.
BUDGET_WORDS = frozenset("under below less than at most max maximum up to cheaper around about budget dollars dollar "
                         "bucks usd price priced cost costs pricey expensive cheap".split())

# Words that carry no product information in shopper messages (template
# scaffolding and conversational filler); removed before soft matching.
FILLER = frozenset("""
a an and are as at be but by for from i in is it me my of on or please some that the this to want with would you
looking i'm im key requirement what matters actually ignore earlier preference need don't dont have additional
still exploring those options not quite right yet ask about one specific attribute use your judgment judgement
hi hey hello can could help find show shopping just browsing now sure something really must non negotiable
important thing mostly well care it's should like ideally thinking was wait forget said before scratch change
plans never mind instead matters doesn't matter particular here flexible pick think best decide call opinion
strong no also plus window any good around at also get buy i'd get looking searching much very so lot
nice great making mind thing things stuff kind sort maybe perhaps okay ok yes yeah thanks thank
""".split())
# Phrases of a shopper who is only browsing (no product wish beyond the category).
BROWSING_CUES = ("exploring", "browsing", "not sure", "nothing specific", "window", "making up my mind",
                 "just looking", "no idea", "undecided", "looking around")


@dataclass
class Observation:
    """What one shopper message says, as far as the agent can tell."""

    kind: str                     # open_buying | open_browsing | open_override | override | values |
    #                               no_preference | boundary | no_attribute | free
    text: str
    template: bool = False        # matched an official template exactly
    category: str | None = None   # the opening's category phrase (template) or None
    value_text: str | None = None  # the value part of a template message, verbatim
    attribute: str | None = None   # no_preference / boundary attribute
    keywords: list[str] = field(default_factory=list)   # content tokens (filler removed)
    materials: list[str] = field(default_factory=list)
    colors: list[str] = field(default_factory=list)
    negated: list[str] = field(default_factory=list)
    budget_max: float | None = None
    extra_tokens: frozenset[str] = frozenset()   # grounded words not spelled as said (typos fixed)
    negation_phrases: list[str] = field(default_factory=list)   # "no leather", as said
    card_explained: bool = False   # some candidate's predicted values match what was said well

    @property
    def browsing_cue(self) -> bool:
        low = self.text.lower()
        return any(c in low for c in BROWSING_CUES)


def _coerce(message: object) -> str:
    if isinstance(message, str):
        text = message
    elif message is None:
        text = ""
    elif isinstance(message, bytes):
        text = message.decode("utf-8", "replace")
    else:
        text = str(message)
    return text[:MAX_MESSAGE_CHARS]


def _regex_facts(obs: Observation) -> None:
    low = obs.text.lower()
    obs.negation_phrases = [m.group(0) for m in _NEGATION_RE.finditer(low) if m.group(1) not in _NEGATION_STOP]
    obs.negated = sorted({m.group(1) for m in _NEGATION_RE.finditer(low) if m.group(1) not in _NEGATION_STOP})
    obs.materials = [m for m in dict.fromkeys(_MATERIAL_RE.findall(low)) if m not in obs.negated]
    obs.colors = [c for c in dict.fromkeys(_COLOR_RE.findall(low)) if c not in obs.negated]
    budgets = [float(a or b) for a, b in _BUDGET_RE.findall(low) if (a or b)]
    obs.budget_max = max(budgets) if budgets else None
    obs.keywords = [t for t in tokens(low) if t not in FILLER and len(t) > 1 or t.isdigit()]


def parse_message(message: object, turn: int, shelf_keys: dict[str, str] | None = None) -> Observation:
    """Classify a message; `shelf_keys` (lower -> key) resolves template category phrases."""
    text = _coerce(message)
    stripped = text.strip()
    obs = Observation(kind="free", text=text)
    _regex_facts(obs)
    if not stripped:
        obs.kind = "no_attribute" if turn > 1 else "free"
        return obs

    m = BROWSING_RE.match(stripped)
    if m and turn == 1:
        obs.kind, obs.template, obs.category = "open_browsing", True, m.group("cat")
        return obs
    m = OPEN_BUYING_RE.match(stripped)
    if m and turn == 1:
        rest = m.group("rest")
        if BUYING_MARK in rest and rest.endswith("."):
            cat, _, value = rest.partition(BUYING_MARK)
            # A category never contains the marker; a value might, so split at the first.
            obs.kind, obs.template, obs.category, obs.value_text = "open_buying", True, cat, value[:-1]
            return obs
        # Override opening: "I'm looking for C. <old value>" — C is a shelf key.
        split = _split_shelf_prefix(rest, shelf_keys)
        if split is not None:
            obs.kind, obs.template, obs.category, obs.value_text = "open_override", True, split[0], split[1]
            return obs
    m = OVERRIDE_RE.match(stripped)
    if m:
        obs.kind, obs.template, obs.value_text = "override", True, m.group("v")
        return obs
    m = VALUES_RE.match(stripped)
    if m:
        obs.kind, obs.template, obs.value_text = "values", True, m.group("v")
        return obs
    m = BOUNDARY_RE.match(stripped)
    if m:
        obs.kind, obs.template, obs.attribute = "boundary", True, m.group("a")
        return obs
    m = NO_PREF_RE.match(stripped)
    if m:
        obs.kind, obs.template, obs.attribute = "no_preference", True, m.group("a")
        return obs
    if stripped == NO_ATTRIBUTE_TEXT:
        obs.kind, obs.template = "no_attribute", True
        return obs
    return _loose(obs, turn)


def _split_shelf_prefix(rest: str, shelf_keys: dict[str, str] | None) -> tuple[str, str] | None:
    """Split "C. value" at the first ". " whose left side is a shelf key, else at
    the first ". " (a damaged category is still the part before the value)."""
    first = rest.find(". ")
    if first < 0:
        return None
    start = first
    while shelf_keys is not None:
        pos = rest.find(". ", start)
        if pos < 0:
            break
        if rest[:pos].lower() in shelf_keys:
            return rest[:pos], rest[pos + 2:]
        start = pos + 1
    return rest[:first], rest[first + 2:]


def _loose(obs: Observation, turn: int) -> Observation:
    """Non-template text: decide the kind from cue words."""
    low = obs.text.lower()
    if turn == 1:
        obs.kind = "free_opening"
        return obs
    if _OVERRIDE_CUE.search(low):
        obs.kind = "override"
    elif _BOUNDARY_CUE.search(low):
        obs.kind = "boundary"
    elif _NO_PREF_CUE.search(low):
        obs.kind = "no_preference"
    elif _NOT_RIGHT_CUE.search(low) and len(obs.keywords) <= 2:
        obs.kind = "no_attribute"
    else:
        obs.kind = "values"
    return obs
