"""Text helpers of the grounding gate: tokens with offsets, content words,
budgets, and the detector for ids / URLs / instructions.

Nothing here knows the catalog; `grounding.gate` combines these with it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from starter.parse import COLOR_WORDS, FILLER, MATERIAL_WORDS

# Same token shape as `starter.catalog.tokens` (decimals kept whole), but with
# offsets into the original text so that evidence can quote the shopper.
TOKEN_RE = re.compile(r"[a-z0-9]+(?:\.[0-9]+)?", re.IGNORECASE)

# Function words that carry no product information, on top of parse.FILLER
# (which is shared with ranking and must not be edited from here).
EXTRA_STOP = frozenset("""
too t s don doesn won isn aren can will which these those there their they them its our your we us he she
if then than such only just even maybe perhaps kind sort type stuff thing things one ones pair something
anything nothing everything someone got go going let lets make made give tell show told say says
""".split())
STOP = FILLER | EXTRA_STOP

# A wider material / colour lexicon than the protocol's regexes: a value made
# of these words is catalog vocabulary even when no clue spells it out.
MATERIALS = frozenset(MATERIAL_WORDS) | frozenset("""
polyamide elastane lycra acrylic viscose modal bamboo mesh jersey chiffon lace sherpa fur faux vinyl cork jute
hemp merino alpaca mohair tweed corduroy twill flannel terry microfiber neoprene latex foam gold silver
sterling stainless steel titanium tungsten brass copper platinum pearl pearls crystal crystals diamond
diamonds gemstone plastic resin wood wooden glass ceramic acetate metal alloy zinc rhinestone sequin sequins
knit knitted cashmere tulle organza georgette poplin oxford seersucker gabardine shearling sheepskin nubuck
patent synthetic pvc eva tpu tpr pu
""".split())
COLORS = frozenset(COLOR_WORDS) | frozenset("""
teal turquoise maroon burgundy olive coral lavender mint charcoal cream nude camel rose fuchsia magenta cyan
multicolor multicolored multi clear transparent leopard camo camouflage plaid wine mustard apricot champagne
bronze rust taupe peach lilac violet indigo aqua emerald sapphire ruby off colour colors colours color dark
light pastel neon metallic floral striped stripes checkered
""".split())
LEXICON = MATERIALS | COLORS

# Words that mean "price" in a message (a qualitative budget needs one).
PRICE_CUES = frozenset("""
cheap cheaper cheapest inexpensive affordable budget price priced prices pricey pricy expensive costly cost
costs dollar dollars bucks usd spend spending bargain deal economical premium luxury luxurious splurge
""".split())
_LOW_WORDS = frozenset("cheap cheaper cheapest inexpensive affordable budget bargain economical low".split())
_HIGH_WORDS = frozenset("pricey pricy expensive costly premium luxury luxurious splurge high end high-end".split())


def content_tokens(text: str) -> list[str]:
    """Lower-cased content tokens in order (stop words and 1-letter words dropped, numbers kept)."""
    return [t for t in (m.group().lower() for m in TOKEN_RE.finditer(text))
            if t not in STOP and (len(t) > 1 or t.isdigit())]


def tokens_with_spans(text: str) -> list[tuple[str, int, int]]:
    """Every token (lower-cased) with its character span in `text`."""
    return [(m.group().lower(), m.start(), m.end()) for m in TOKEN_RE.finditer(text)]


def is_content(tok: str) -> bool:
    return tok not in STOP and (len(tok) > 1 or tok.isdigit())


def is_number(tok: str) -> bool:
    return tok.replace(".", "", 1).isdigit()


# --------------------------------------------------------------------------- budgets

@dataclass(frozen=True)
class Budget:
    """A parsed budget: an upper bound, a lower bound, a target, or only a qualitative flag."""

    max_price: float | None = None
    min_price: float | None = None
    around: float | None = None
    qualitative: str | None = None   # "low" | "high" | None

    @property
    def has_number(self) -> bool:
        return self.max_price is not None or self.min_price is not None or self.around is not None

    def numbers(self) -> list[float]:
        return [x for x in (self.max_price, self.min_price, self.around) if x is not None]


_NUM = r"\$?\s*(\d+(?:\.\d+)?)\s*(?:\$|dollars?|bucks|usd)?"
_RANGE_RE = re.compile(r"(?:between\s+)?\$?\s*(\d+(?:\.\d+)?)\s*(?:-|–|to|and)\s*" + _NUM, re.I)
_MAX_RE = re.compile(r"(?:under|below|less than|at most|max(?:imum)?|up to|no more than|not more than|<=?|"
                     r"cheaper than|within|budget of|budget is|budget:)\s*" + _NUM, re.I)
_MIN_RE = re.compile(r"(?:over|above|more than|at least|min(?:imum)?|>=?)\s*" + _NUM, re.I)
_AROUND_RE = re.compile(r"(?:around|about|roughly|approximately|approx\.?|~|near|close to|budget around)\s*" + _NUM,
                        re.I)
_BARE_RE = re.compile(r"\$\s*(\d+(?:\.\d+)?)|(\d+(?:\.\d+)?)\s*(?:dollars?|bucks|usd)\b|^\s*(\d+(?:\.\d+)?)\s*$", re.I)
_NEG_PRICE_RE = re.compile(r"\b(?:not|isn'?t|no|nothing|never)\s+(?:too\s+|very\s+|that\s+|so\s+|overly\s+)?"
                           r"(pricey|pricy|expensive|costly)\b", re.I)


def qualitative_budget(text: str) -> str | None:
    """"low" for cheap / affordable / not too pricey, "high" for pricey / premium, else None."""
    low = text.lower()
    if _NEG_PRICE_RE.search(low):
        return "low"
    words = set(t.lower() for t in TOKEN_RE.findall(low))
    if words & _LOW_WORDS or "low cost" in low or "low-cost" in low:
        return "low"
    if words & _HIGH_WORDS:
        return "high"
    return None


def parse_budget(text: str) -> Budget | None:
    """`under $30` -> max 30; `around 25 dollars` -> around 25; `$20-$40` -> range;
    `cheap` / `not too pricey` -> qualitative "low"; `premium` -> "high"; else None."""
    if not isinstance(text, str) or not text.strip():
        return None
    low = text.lower()
    m = _RANGE_RE.search(low)
    if m and ("between" in m.group(0) or "-" in m.group(0) or "–" in m.group(0) or "$" in m.group(0)
              or " to " in m.group(0)):
        a, b = float(m.group(1)), float(m.group(2))
        if a > b:
            a, b = b, a
        return Budget(max_price=b, min_price=a)
    m = _MAX_RE.search(low)
    if m:
        return Budget(max_price=float(m.group(1)))
    m = _MIN_RE.search(low)
    if m:
        return Budget(min_price=float(m.group(1)))
    m = _AROUND_RE.search(low)
    if m:
        return Budget(around=float(m.group(1)))
    m = _BARE_RE.search(low)
    if m:
        return Budget(around=float(next(g for g in m.groups() if g)))
    q = qualitative_budget(low)
    return Budget(qualitative=q) if q else None


# --------------------------------------------------------------------------- injection / ids

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
