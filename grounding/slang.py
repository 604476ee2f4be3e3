"""Everyday words for clothes that listings do not use: "undies", "pjs", "kicks", "sunnies", "wellies".

A catalog names a product the way a store files it ("Women's Underwear", "Pajama Set", "Sunglasses"); a
person on a phone says "undies", "jammies", "trainers".  Spelling correction cannot bridge them (neither is a
slip of the other) and BM25 sees no shared word, so the listing's own word is added to what the shopper said.
The table is hand-set vocabulary, like the colour and material families: it cannot be estimated from a catalog
that never uses the words.  Only words listing titles (almost) never use are listed ("hoodie" is a listing word
already; "tee" is one the listings use less than their own "T-Shirt"), and none that also means something else
in a message about clothes ("shades" of a colour, "runners" who wear the shoes).
"""
from __future__ import annotations

import re

from grounding.words import COLORS, tokens

# A shopper's word -> the catalog words it means.
SLANG: dict[str, tuple[str, ...]] = {}
for _meant, _said in (
    ("underwear panties", "undies undie skivvies knickers"),
    ("pajamas pajama", "jammies jammie jammy pjs pj"),
    ("sneakers", "trainers kicks sneaks tennies"),
    ("sweatpants", "sweats trackies trackie"),
    ("sunglasses", "sunnies"),
    ("glasses eyeglasses", "specs"),
    ("shorts denim", "jorts"),
    ("slides", "sliders"),
    ("beanie", "toque tuque"),
    ("hoodie", "hoody"),
    ("birthday", "bday"),
    ("basketball", "bball"),
    # British and Australian everyday words no listing title uses.
    ("rain boots", "wellies welly wellingtons"),
    ("umbrella", "brolly brollies"),
    ("footies", "babygrow babygrows"),
    ("handkerchiefs handkerchief", "hankies hanky"),
    ("sneakers", "plimsolls plimsoll"),
    ("swimsuit", "cossie cozzie"),
    ("elastic", "elasticated"),
    ("rain boots", "galoshes gumboots"),
    ("swimsuit", "bathers"),
    ("cardigan", "cardi cardie cardis cardies"),
    ("nightgown", "nightie nighty nighties"),
    ("windbreaker", "windcheater"),
    ("pajamas", "jimjams"),
    ("vest", "gilet gilets waistcoat waistcoats"),
    ("tank", "singlet singlets"),
    ("rain jacket", "cagoule cagoules kagool"),
    ("apron", "pinny pinnies"),
    ("diaper", "nappy nappies"),
    ("backpack", "rucksack rucksacks"),
    ("duffel", "holdall holdalls"),
    ("flip flops", "jandals jandal"),
    ("swimsuit", "togs"),
    ("footies", "sleepsuit sleepsuits"),
    # Older everyday words no listing title uses (not "pocketbook", a purse or a wallet, nor "dungarees", jeans
    # or overalls by the side of the Atlantic, nor "jumper", a sweater or a pinafore dress).
    ("dress", "frock frocks"),
    ("tuxedo", "tux"),
    ("moccasins", "mocs"),
    ("personalized", "personalised"),
    # Everyday forms of the listing's adjectives, which the stemmed index does not join ("stretchy" is no
    # "stretch"): over the tune halves, a target of a shopper who said "stretchy" has "stretch" in its title 37
    # times in 104 (3.7% of all titles do), "comfy" a "comfortable" or "comfort" 16 in 45 (4.0%), "cushy" a
    # "cushioned" 4 in 16 (2.3%); the informal words themselves are in almost no title (0.1%).
    ("stretch", "stretchy"),
    ("comfortable", "comfy"),
    ("cushioned", "cushy"),
    # A listing word the listings use less than their own: most t-shirts are listed as "T-Shirt" (1,584 listings
    # against 602 "Tee"), indexed as "t" and "shirt"; of the development cards that call it only a "tee", 29 of
    # 52 targets are titled "T-Shirt" and 11 "Tee".
    ("shirt", "tee tees"),
):
    for _w in _said.split():
        SLANG[_w] = tuple(_meant.split())


# "light" said of the weight ("light ones, cute not clunky", "a light jacket") is the listings' "Lightweight": over
# the development cards that say "light" but not "lightweight", 46 of 133 targets have it in the title (8.8% of all
# titles do).  Said of a colour ("light blue", "a light wash"), of shoes that light up, or as "light weight" (a
# compound, `grounding.compounds`), it is not.
_LIGHT_RE = re.compile(r"\blight\b(?![\s-]*(?:up|weight|wash|shades?|tones?|" + "|".join(sorted(COLORS)) + r")\b)")


def slang_words(text: str, negated: frozenset[str] = frozenset()) -> frozenset[str]:
    """The catalog words a message's everyday words mean ("comfy kicks" -> sneakers, "something light" ->
    lightweight), less those of a word the message rules out ("no pjs")."""
    out = {meant for tok in tokens(text) if tok not in negated for meant in SLANG.get(tok, ())}
    if "light" not in negated and _LIGHT_RE.search(text.lower()):
        out.add("lightweight")
    return frozenset(out)
