"""Budgets in shopper text: one module for price words and budget grammar.

Two readings share the number pattern and keyword lists below:
- `parse_budget(value)`: a value already known to be about price ("under $30",
  "around 25 dollars", "$20-$40", "not too pricey") -> a structured `Budget`;
- `budget_ceiling(message)`: the highest price a whole message names after a
  price keyword or a `$` (the soft price cap of free-text ranking), never a
  floor (`_MIN_RE`: "over $50" is read as a minimum by both, "nothing over $50" as a cap).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from grounding.words import MEMO_SIZE, NUMBER_WORDS, tokens

_NUMBER = r"(\d+(?:\.\d+)?)"
# The verbs of paying, one alternation for every reader of them ("I'd pay 30", "spending more", "can't pay much").
_PAY = r"(?:spend|spending|pay|paying)"
# Amounts people spell out ("around a hundred dollars", "about twelve dollars", "twenty-five bucks"): replaced
# by digits before any reading (a unit alone, "under five", is too often a count to read as money).
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_ONES = {word: n for word, n in NUMBER_WORDS.items() if n < 10}
_SPELLED = {**{word: n for word, n in NUMBER_WORDS.items() if n >= 10}, "thirteen": 13, "fourteen": 14,
            "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, **_TENS,
            **{f"{tens}{gap}{one}": t + o for tens, t in _TENS.items() for one, o in _ONES.items() for gap in " -"},
            "a hundred": 100, "one hundred": 100, "hundred": 100, "two hundred": 200, "a couple hundred": 200}
# Every word of an amount spelled out: an English word, never a slip of a catalog word ("forty" is no "forth").
AMOUNT_WORDS = frozenset(w for phrase in _SPELLED for w in phrase.split() if w.isalpha() and w != "a")
_SPELLED_WORDS = "(" + "|".join(sorted(_SPELLED, key=len, reverse=True)) + ")"
_SPELLED_RE = re.compile(r"\b(?:(?<=under )|(?<=below )|(?<=around )|(?<=about )|(?<=up to )|(?<=over )|(?<=less than )|"
                         r"(?<=more than )|(?<=max )|(?<=budget )|(?<=budget is ))"
                         + _SPELLED_WORDS + r"\b|\b" + _SPELLED_WORDS
                         + r"\b(?=\s*(?:dollars?|bucks|usd)\b|\s*(?:or so|-?ish|-?\s*something)\b)", re.I)
_AMOUNT = r"\$?\s*" + _NUMBER + r"\s*(?:\$|dollars?|bucks|usd)?"

# Words that mean "price" in a message (a qualitative budget needs one).
PRICE_CUES = frozenset("""
cheap cheapish cheaper cheapest inexpensive affordable budget price priced prices pricey pricy expensive costly cost
costs dollar dollars bucks usd spend spending pay paying paid bargain deal economical premium luxury luxurious splurge
""".split())
LOW_PRICE_WORDS = frozenset("cheap cheapish cheaper cheapest inexpensive affordable budget bargain economical low".split())
HIGH_PRICE_WORDS = frozenset("pricey pricy expensive costly premium luxury luxurious splurge high end high-end".split())
# Negated, these mean a low budget ("not too pricey"), not a rejected feature.
NEGATABLE_PRICE_WORDS = frozenset({"pricey", "pricy", "expensive", "costly", "overpriced"})
# Words of a budget phrase ("under $30", "at most 25 dollars"): no product evidence.
BUDGET_WORDS = frozenset("under below less than at most max maximum up to cheaper around about bout abt arnd budget "
                         "dollars dollar bucks usd price priced cost costs pricey expensive cheap".split())

_RANGE_RE = re.compile(r"(?:between\s+)?(?<![\d.])\$?\s*" + _NUMBER + r"\s*(?:-|–|to|and)\s*" + _AMOUNT, re.I)
# "can go to 75", "he'll go to 150", "could stretch to 60": as far as the shopper goes, a cap.
_GO_TO = r"(?:\b(?:can|could|will|would|might)|'ll|'d)\s+(?:go|stretch)(?:\s+it)?\s+to"
_MAX_RE = re.compile(r"(?:under|below|(?<!no )(?<!not )less than|at most|max(?:imum)?(?: budget| price)?(?: is| of)?|"
                     r"up to|no more than|not more than|<=?|\bsub|capped at|(?:cap|limit|ceiling)(?: is| of)|"
                     r"cheaper than|within|budget(?: of| is|:)?|" + _GO_TO + r")\s*(?:like\s+)?" + _AMOUNT, re.I)
_MIN_RE = re.compile(r"(?:over|above|more than|at least|no less than|not less than|min(?:imum)?|>=?)\s*(?:like\s+)?"
                     + _AMOUNT, re.I)
# A minimum said as a limit is a cap: "nothing over 25", "I don't want to spend more than 30", "won't go
# above $40" (a negation up to four words before), "anything over 100 is too much".
_NOT_OVER_RE = re.compile(r"\b(?:not|no|nothing|never|none|(?:don|doesn|didn|won|shouldn|wouldn|isn|aren|can)'?t|"
                          r"cannot)\b(?:[ \t]+[a-z']+){0,4}?[ \t]+(?:over|above|more than)\s*(?:like\s+)?" + _AMOUNT
                          + r"|\b(?:over|above|more than)\s*" + _AMOUNT
                          + r"\s+(?:is|'s|would be|will be)\s+(?:way\s+|a bit\s+|just\s+)?"
                          r"(?:too\s+(?:much|pricey|pricy|expensive|steep)|out of (?:my |our )?(?:budget|range))", re.I)
# A cap said after the amount: "15 dollars max", "around 20 or less", "60 bucks at most", "25 is my limit".
_CAP_AFTER_RE = re.compile(r"(?<![\d.])" + _AMOUNT + r"\s*(?:max(?:imum)?|tops|at (?:the )?most|"
                           r"or (?:less|under|below|cheaper)|is (?:my|the|our) (?:limit|max|cap|ceiling))\b", re.I)
# "about" as typed on a phone: "bout 25", "abt 25", "arnd 20".
_ABOUT = r"(?:around|about|\bbout|\babt|\barnd)"
# A price verb before the amount ("fine paying 30", "I can spend 80") names about what the shopper means to pay.
_AROUND_RE = re.compile(r"(?:" + _ABOUT + r"|roughly|approximately|approx\.?|~|near|close to|budget around|"
                        r"\b" + _PAY + r")\s*" + _AMOUNT, re.I)
# Everyday approximations: "35ish", "like 15", "40 or so", "35 give or take" (a count or a size is followed by its
# unit, or is too small to be a price; "like 10 of them" is a count).
_ROUGH_RE = re.compile(r"(?<![\d.])\$?" + _NUMBER + r"\s*(?:-?ish|or so|give or take)\b|\blike\s+\$?" + _NUMBER
                       + r"(?!\+?\s*(?:%|percent|pairs?|packs?|pcs|pieces|sets?|inch|inches|in\b|x\b|times|years?|"
                       r"months?|colou?rs?|pockets?|-?\s*something|\s*of\s+(?:them|those|these)\b))\b", re.I)
ROUGH_MIN_PRICE = 10.0        # hand-set: "like 2" or "8ish" is a count or a size, not a price ...
# ... unless the message speaks of price ("super cheap like 7").
# A floor said after the amount: "70+ is fine", "$40+", "50 plus", "45 or more", "60 and up", "50 or a bit
# more", "50 minimum", "40 at least" (never "40+ pairs" or "a 16 plus size": a count or a size is followed by what
# it is).
_COUNTED = r"siz|pairs?|packs?|pcs|pieces|sets?|colou?rs?|items?|styles?|designs?|kinds?"
_PLUS_RE = re.compile(r"(?<![\d.])(?<!upf )(?<!spf )\$?" + _NUMBER + r"\s*(?:\+(?=\s*(?:$|[.,;:!?)]|(?:is|are|would|"
                      r"works|fine|ok|okay|dollars?|bucks|usd|please|pls|for|if)\b))|(?:dollars?\s+|bucks\s+)?"
                      r"(?:plus\b(?!\s*-?\s*(?:" + _COUNTED + r"))|"
                      r"or\s+(?:a\s+(?:bit|little|tad)\s+)?(?:more|higher|above|up)\b|minimum\b|"
                      r"at\s+(?:the\s+)?least\b|"
                      r"and\s+(?:up|above|higher|over)\b))", re.I)
# Two amounts said as alternatives after a price verb or an approximation, or before a currency word: "happy
# paying 60 or 70", "she'd spend 70 or 80", "like 10 or 15 bucks": an approximation, near their middle.
_EITHER_RE = re.compile(r"(?:(?:" + _PAY + r"|around|about|like|maybe)\s+\$?" + _NUMBER
                        + r"\s+or\s+\$?" + _NUMBER + r"(?!\s*(?:more|less|so|under|over|above|below)\b)|(?<![\d.])\$?"
                        + _NUMBER + r"\s+or\s+\$?" + _NUMBER + r"\s*(?:dollars?|bucks|usd)\b)", re.I)
# A price said by its decade: "mid teens", "low 20s", "upper thirties".
_DECADES = {"teens": 10, "20s": 20, "twenties": 20, "30s": 30, "thirties": 30, "40s": 40, "forties": 40,
            "50s": 50, "fifties": 50, "60s": 60, "sixties": 60, "70s": 70, "seventies": 70, "80s": 80,
            "eighties": 80, "90s": 90, "nineties": 90}
_DECADE_STEP = {"low": 3, "lower": 3, "mid": 5, "middle": 5, "high": 8, "upper": 8}
# After a possessive, a decade is an age ("her mid 20s", "my 20 something daughter"), never a price.
_NOT_AN_AGE = r"(?<!\bher )(?<!\bhis )(?<!\bmy )(?<!\btheir )(?<!\byour )"
# "20 something", "thirty-something": a price near the middle of its decade.
_SOMETHING_RE = re.compile(_NOT_AN_AGE + r"(?<![\d.])\$?([1-9]0)\s*-?\s*something\b", re.I)
DECADE_PRICE_RE = re.compile(_NOT_AN_AGE + r"\b(" + "|".join(_DECADE_STEP) + r")[- ]?(" + "|".join(_DECADES) + r")\b",
                             re.I)
_BARE_RE = re.compile(r"\$\s*" + _NUMBER + r"|" + _NUMBER + r"\s*(?:dollars?|bucks|usd)\b|^\s*" + _NUMBER + r"\s*$",
                      re.I)
_NEG_PRICE_RE = re.compile(r"\b(?:not|isn'?t|no|nothing|never)\s+(?:too\s+|very\s+|that\s+|so\s+|overly\s+)?"
                           r"(pricey|pricy|expensive|costly)\b", re.I)
# A message's price mentions: a cap or target keyword, or a `$`, before a number.
_MENTION_RE = re.compile(
    r"(?:under|below|less than|at most|max(?:imum)?|up to|<=?|cheaper than|" + _ABOUT + r"|budget(?: of| around| is)?)"
    r"\s*\$?\s*" + _NUMBER + r"|\$\s*" + _NUMBER)


# A free-text message that names a price: a `$` or currency word beside a number, or a budget
# keyword before one ("under 40", "around $25", "between 20 and 40").
_PRICE_MENTION_RE = re.compile(r"\$\s*\d|\d\s*(?:dollars?|bucks|usd)\b|\b(?:under|below|around|about|bout|abt|arnd|"
                               r"over|above|less than|more than|up to|at most|at least|max|min|minimum|budget|between|"
                               r"sub|capped at|(?:cap|limit|ceiling) (?:is|of)|" + _PAY + r")\s*\$?\d|"
                               r"(?<![a-z\d])<=?\s*\$?\d|" + _GO_TO + r"\s*\$?\d", re.I)


# A number with a unit of measure, a size or a count of things is no amount of money: "under 2 pounds" (a
# US catalog: weight), "up to about 65 degrees", "9 and a half inches", "3 by 4 inches", "from 7 up to 10
# inches", "up to 5XL", "around 8 cards", "women's 5 to 8", "US 8-10".
_QUANTITY = r"\d+(?:\.\d+)?(?:\s+and\s+a\s+half|\s*-?\s*1/2)?"
_UNITS = (r"pounds?|lbs?|oz|ounces?|kgs?|kilos?|kilograms?|grams?|inch(?:es)?|ft|feet|foot|cm|mm|"
          r"(?:milli|centi)?met(?:er|re)s?|degrees?|percent|years?|yrs?|months?|weeks?|days?|hours?|hrs?|miles?|"
          r"mph|lit(?:er|re)s?|ml|x{0,4}l|x{1,4}s|x|t|cards?|pockets?|slots?|compartments?|colou?rs?|pieces?|pcs|"
          r"pairs?|packs?|sets?|kids?|items?|"
          r"in(?=\s+(?:long|wide|tall|high|across|thick|deep|length|inseam)\b|\s*(?:[.,;!?)]|$))")
_SIZE_NUMBER = (r"\b(?:sizes?|us|uk|eu|women'?s|men'?s|kids'?)\s+\d+(?:\.\d+)?(?:\s*(?:-|–|to|or)\s*\d+(?:\.\d+)?)?"
                r"(?![\d.]|\s*(?:\$|dollars?|bucks|usd)\b)")
# (At most three numbers in a chain, "3 by 4 by 5 inches": a bound that keeps the search linear in the text.)
# A ratio ("60/40" cotton and polyester, "24/7") is no price either.
_MEASURE_RE = re.compile(r"\b" + _QUANTITY + r"\+?(?:\s*(?:x|by|-|–|to|up to|and|or)\s*" + _QUANTITY
                         + r"){0,2}\s*-?\s*(?:" + _UNITS + r")\b(?!\s*\d)|\b\d+\s*(?:°|%|\")|\b\d+\s*/\s*\d+\b|"
                         + _SIZE_NUMBER, re.I)


def _amount(m: re.Match) -> float:
    """The amount a match read (its first group that matched: patterns of several alternatives)."""
    return float(next(g for g in m.groups() if g))


def without_measures(text: str) -> str:
    """`text` less its quantities with a unit of measure (`_MEASURE_RE`), which no price reader may take."""
    return _MEASURE_RE.sub(" ", text)


def spelled_out(text: str) -> str:
    """`text` with round amounts spelled in words after a price keyword ("around a hundred", "under
    fifty") or before a currency word, "ish" or "or so" ("fifty bucks"), as digits."""
    return _SPELLED_RE.sub(lambda m: str(_SPELLED[(m.group(1) or m.group(2)).lower()]), text)


def _rough(text: str) -> float | None:
    """The first everyday approximation of a price ("35ish", "like 15", "40 or so", "mid teens", "20 something"),
    if any."""
    least = ROUGH_MIN_PRICE if not set(tokens(text)) & PRICE_CUES else 1.0
    for m in _ROUGH_RE.finditer(text):
        value = float(m.group(1) or m.group(2))
        if value >= least:
            return value
    m = DECADE_PRICE_RE.search(text)
    if m:
        return float(_DECADES[m.group(2).lower()] + _DECADE_STEP[m.group(1).lower()])
    m = _SOMETHING_RE.search(text)
    return float(m.group(1)) + 5.0 if m else None


def _floor_plus(text: str) -> float | None:
    """A floor said after the amount ("70+ is fine", "50 plus", "45 or more"), if any."""
    m = _PLUS_RE.search(text)
    return float(m.group(1)) if m and float(m.group(1)) >= ROUGH_MIN_PRICE else None


def _either(text: str) -> tuple[float, float] | None:
    """Two amounts said as alternatives (`_EITHER_RE`), low first, if any: prices of one product, so the dearer
    is at most twice the cheaper ("size 8 or 9" is no price, nor "2 or 3 pairs")."""
    m = _EITHER_RE.search(text)
    if m is None:
        return None
    found = [float(g) for g in m.groups() if g]
    low, high = min(found), max(found)
    return (low, high) if ROUGH_MIN_PRICE <= low < high <= 2 * low else None


@lru_cache(maxsize=MEMO_SIZE)
def names_price(text: str) -> bool:
    """Does the message name a price with a number (see `_PRICE_MENTION_RE`, the everyday approximations of
    `_rough`, a floor said after the amount and two amounts said as alternatives)?"""
    text = spelled_out(without_measures(text))
    return (_PRICE_MENTION_RE.search(text) is not None or _rough(text) is not None or _floor_plus(text) is not None
            or _either(text) is not None or _cap_after(text) is not None)


def _cap_after(text: str) -> float | None:
    """A cap said after the amount ("40 max", "30 tops", "35 or less", "25 is my limit"), if any: an amount too
    small to be a price is a count ("2 max")."""
    m = _CAP_AFTER_RE.search(text)
    return float(m.group(1)) if m and float(m.group(1)) >= ROUGH_MIN_PRICE else None


@dataclass(frozen=True)
class Budget:
    """A parsed budget: an upper bound, a lower bound, a target, or only a qualitative flag."""

    max_price: float | None = None
    min_price: float | None = None
    around: float | None = None
    qualitative: str | None = None   # "low" | "high" | None
    firm: bool = False               # bounds with no slack: "cheaper" than what was shown means cheaper

    @property
    def has_number(self) -> bool:
        return self.max_price is not None or self.min_price is not None or self.around is not None

    def numbers(self) -> list[float]:
        return [x for x in (self.max_price, self.min_price, self.around) if x is not None]


# "nothing cheap looking", "not cheap": a wish for the better made, never for the cheap.
_NOT_CHEAP_RE = re.compile(r"\b(?:not|no|nothing|never)\s+(?:too\s+|that\s+|so\s+|super\s+|very\s+)?"
                           r"(?:cheap|cheapo|cheaply|cheap-looking)\b", re.I)
# "I don't want to spend a lot", "not looking to spend a fortune", "can't pay much": a wish for the cheaper ("I
# don't mind paying a lot" is none).
_SPEND_LITTLE_RE = re.compile(r"\b(?:not|never|(?:don|doesn|won|can|wouldn)'?t|cannot)\s+"
                              r"(?:(?!mind\b|care\b)[a-z']+\s+){0,3}?" + _PAY + r"\s+(?:a lot|much|a ton|a fortune|"
                              r"too much|big|crazy)\b")
# "too pricey", "way too expensive": a complaint about price, so a wish for cheaper, never for premium.
# "too much" of a thing ("she has too much black") is no price.
_TOO_MUCH = r"too much(?!\s+(?!for\b|to\b|tbh\b|though\b|tho\b|honestly\b|imo\b|money\b)[a-z])"
_TOO_DEAR_RE = re.compile(r"\btoo (?:pricey|pricy|expensive|costly)\b|\b" + _TOO_MUCH)
# "kind of luxury looking", "luxury styled", "looks expensive", "a premium feel": how it looks or feels, which a
# product at any price may; no wish about the price.
_HIGH_WORD = r"(?:luxury|luxurious|premium|expensive|pricey|high[\s-]end)"
_LOOKS_HIGH_RE = re.compile(r"\b" + _HIGH_WORD + r"[\s-]+(?:look(?:s|ing)?|styled?|styling|feel(?:s|ing)?|vibes?)\b"
                            r"|\b(?:looks?|looking|feels?)\s+(?:a bit\s+|a little\s+|kind of\s+|kinda\s+|really\s+|"
                            r"very\s+|so\s+|more\s+)?" + _HIGH_WORD + r"\b")


def qualitative_budget(text: str) -> str | None:
    """"low" for cheap / affordable / not too pricey, "high" for pricey / premium, else None."""
    low = text.lower()
    if _NEG_PRICE_RE.search(low):
        return "low"
    if _NOT_CHEAP_RE.search(low):
        return "high"
    words = set(tokens(low))
    if words & LOW_PRICE_WORDS or "low cost" in low or "low-cost" in low or _TOO_DEAR_RE.search(low) \
            or _SPEND_LITTLE_RE.search(low):
        return "low"
    if set(tokens(_LOOKS_HIGH_RE.sub(" ", low))) & HIGH_PRICE_WORDS:
        return "high"
    return None


def parse_budget(text: str) -> Budget | None:
    """`under $30` -> max 30; `around 25 dollars` -> around 25; `$20-$40` -> range;
    `cheap` / `not too pricey` -> qualitative "low"; `premium` -> "high"; else None.  An amount of zero is no
    price ("around $0", "$0-$50": no bound there), so no reader of a budget divides by it."""
    if not isinstance(text, str) or not text.strip():
        return None
    return _parsed(text)


@lru_cache(maxsize=MEMO_SIZE)
def _parsed(text: str) -> Budget | None:
    """`parse_budget` of a non-empty string."""
    got = _read_budget(text)
    if got is None or all(x > 0 for x in got.numbers()):
        return got
    def positive(x: float | None) -> float | None:
        return x if x is not None and x > 0 else None
    kept = Budget(max_price=positive(got.max_price), min_price=positive(got.min_price), around=positive(got.around),
                  firm=got.firm)
    if kept.has_number:
        return kept
    wish = qualitative_budget(text.lower())
    return Budget(qualitative=wish) if wish else None


def _read_budget(text: str) -> Budget | None:
    """`parse_budget` before its amounts of zero are dropped."""
    low = spelled_out(without_measures(text.lower()))
    m = _RANGE_RE.search(low)
    if m and ("between" in m.group(0) or "-" in m.group(0) or "–" in m.group(0) or "$" in m.group(0)
              or " to " in m.group(0)):
        a, b = float(m.group(1)), float(m.group(2))
        if a > b:
            a, b = b, a
        return Budget(max_price=b, min_price=a)
    if (either := _either(low)) is not None:
        return Budget(around=(either[0] + either[1]) / 2)
    m = _MAX_RE.search(low) or _NOT_OVER_RE.search(low)
    if m:
        return Budget(max_price=_amount(m))
    m = _CAP_AFTER_RE.search(low)
    if m:       # "around 20 bucks max": near 20 and not above it
        cap = float(m.group(1))
        near = _AROUND_RE.search(low)
        return Budget(max_price=cap, around=cap if near and float(near.group(1)) == cap else None)
    m = _MIN_RE.search(low)
    if m:
        return Budget(min_price=float(m.group(1)))
    if (floor := _floor_plus(low)) is not None:
        return Budget(min_price=floor)
    m = _AROUND_RE.search(low)
    if m:
        return Budget(around=float(m.group(1)))
    rough = _rough(low)
    if rough is not None:
        return Budget(around=rough)
    m = _BARE_RE.search(low)
    if m:
        return Budget(around=_amount(m))
    q = qualitative_budget(low)
    return Budget(qualitative=q) if q else None


def budget_ceiling(message: str) -> float | None:
    """The highest price the (lower-cased) message names after a price keyword or `$`, else None."""
    message = without_measures(message)
    caps = {_amount(m) for rx in (_NOT_OVER_RE, _CAP_AFTER_RE) for m in rx.finditer(message)}
    floors = {float(m.group(1)) for m in _MIN_RE.finditer(message)} - caps   # "over $50" is a minimum, not a cap
    found = [x for a, b in _MENTION_RE.findall(message) if (a or b) and (x := float(a or b)) not in floors]
    return max(found + list(caps)) if found or caps else None


# A price asked relative to what was shown: "cheaper", "those look pricey" / "pricier", "too cheap",
# "I can spend more", "something nicer" ("a nightgown would be nicer", "for nicer dinners" say nothing of price).
_RELATIVE_LOWER_RE = re.compile(r"\b(?:cheaper|less expensive|lower price|less pricey|too (?:pricey|pricy|expensive)|"
                                + _TOO_MUCH + r"|(?:look|looks|seem|seems|are|is) "
                                r"(?:a bit |kinda |kind of |so |really )?(?:pricey|pricy|expensive))\b", re.I)
_RELATIVE_HIGHER_RE = re.compile(r"\b(?:pricier|more expensive|higher end|(?:something|anything) nicer|"
                                 + _PAY + r"\s+(?:a\s+(?:little\s+)?(?:bit|little|lot|tad)\s+|"
                                 r"some\s+|way\s+|much\s+)?more|"
                                 r"better quality|"
                                 r"too cheap|(?:look|looks|seem|seems) (?:a bit |kinda |kind of |so |really )?cheap)"
                                 r"\b", re.I)


# "not too pricey", "nothing too expensive": a wish for an inexpensive product (qualitative), not "cheaper than
# these".
_NOT_TOO_DEAR_RE = re.compile(r"\b(?:not|nothing|never|none)\s+(?:too|overly|very|crazy|super)\s+"
                              r"(?:pricey|pricy|expensive|much)\b", re.I)


# "I don't want to spend more", "can't pay more": no wish for dearer ("I don't mind spending more" is one).
_NOT_MORE_RE = re.compile(r"\b(?:not|never|(?:don|doesn|won|can|shouldn|wouldn)'?t|cannot)\b(?!\s+mind\b)"
                          r"(?:\s+[a-z']+){0,3}?\s+" + _PAY + r"\b[^,.;!?]*", re.I)


@lru_cache(maxsize=MEMO_SIZE)
def relative_price(text: str) -> str | None:
    """"lower" or "higher" when a message asks for a price relative to what it was shown, else None
    ("these look too cheap" asks for dearer, although it names "cheap"; "not too pricey" asks for
    nothing relative; "I don't want to spend more" nothing either)."""
    text = _NOT_MORE_RE.sub(" ", _NOT_TOO_DEAR_RE.sub(" ", text))
    if _RELATIVE_HIGHER_RE.search(text):
        return "higher"
    if _RELATIVE_LOWER_RE.search(text):
        return "lower"
    return None


@lru_cache(maxsize=MEMO_SIZE)
def speaks_of_price(text: str) -> bool:
    """Does a message speak of price: a number as a price, a price word ("pay", "cheap"), or a price relative
    to the list?  Only then is a budget read from it ("sizes 8 to 10" is no range of prices)."""
    return bool(names_price(text) or set(tokens(text)) & PRICE_CUES or relative_price(text))


@lru_cache(maxsize=MEMO_SIZE)
def states_an_amount(text: str) -> bool:
    """Does a message state a budget with a number ("under 40", "I'd pay 30 to 40")?  Its numbers are then
    amounts of money, no words of the product."""
    if names_price(text):
        return True
    got = parse_budget(text) if speaks_of_price(text) else None
    return got is not None and got.has_number


# The phrases of a budget said with a number, whose words are no words of the product ("30 tops", "nothing over
# 40", "50 minimum", "capped at 35"); "crop tops under 30" keeps its "tops".
_PHRASE_RES = (_MAX_RE, _MIN_RE, _NOT_OVER_RE, _CAP_AFTER_RE, _PLUS_RE, _ROUGH_RE)


@lru_cache(maxsize=MEMO_SIZE)
def amount_phrase_words(text: str) -> frozenset[str]:
    """The words stating a budget's amount ("30 tops", "around thirty") in a message that states one."""
    if not states_an_amount(text):
        return frozenset()
    bare = without_measures(text.lower())
    low = spelled_out(bare)
    spelled = {w for m in _SPELLED_RE.finditer(bare) for w in tokens(m.group())}
    return frozenset(w for rx in _PHRASE_RES for m in rx.finditer(low) for w in tokens(m.group())) | spelled
