"""Who a product is for: the shopper's words ("my husband", "for my son", "toddler") and the catalog's.

A shopper names the wearer in most messages; the catalog says it in the
category path ("... > Men > Shoes > ...") and the title ("Women's ...",
"Girls' ...").  Both are read into the same small set of audiences.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from grounding.budget import DECADE_PRICE_RE
from grounding.words import MEMO_SIZE, tokens

AUDIENCES: tuple[str, ...] = ("women", "men", "girls", "boys", "baby")

# A shopper's word -> the audiences it names.
SHOPPER_WORDS: dict[str, frozenset[str]] = {}
for _group, _words in (
    ("men", "men man mens husband boyfriend dad daddy father guy guys male brother grandpa grandfather gentleman "
            "gentlemen groom uncle hubby hubs bf fiance bro grandad granddad gramps papa stepdad"),
    ("women", "women woman womens wife girlfriend mom mommy mother ladies lady female sister grandma grandmother "
              "bride aunt wifey gf fiancee mum mama momma nana granny gran sis stepmom"),
    ("boys", "son sons boys boy grandson nephew"),
    ("girls", "daughter daughters girls girl granddaughter niece"),
    ("baby", "baby babies infant infants newborn newborns toddler toddlers"),
):
    for _w in _words.split():
        SHOPPER_WORDS[_w] = frozenset({_group})
# "my husbands birthday", "my boyfriends trip": a possessive typed without its apostrophe (and plurals).
for _w, _group in [(w, g) for w, g in SHOPPER_WORDS.items() if not w.endswith("s")]:
    SHOPPER_WORDS.setdefault(_w + "s", _group)
for _w in ("kids", "kid", "kiddo", "kiddos", "children", "child", "youth", "teen", "teens", "teenager"):
    SHOPPER_WORDS[_w] = frozenset({"boys", "girls"})
for _w in ("unisex", "couples"):
    SHOPPER_WORDS[_w] = frozenset({"men", "women"})
# Family words that may name a grown-up ("my son" is a boy or a man, "my teen" wears adult sizes): a product for
# that grown-up neither agrees nor disagrees with them.
_GROWN_UP: dict[str, frozenset[str]] = {}
for _group, _words in (("men", "son grandson nephew stepson"),
                       ("women", "daughter granddaughter niece stepdaughter"),
                       ("men women", "teen teenager youth")):
    for _w in _words.split():
        _GROWN_UP[_w] = _GROWN_UP[_w + "s"] = frozenset(_group.split())     # "my daughters birthday" too
# "for a couple" names two wearers; "a couple of photos", "a couple millimeters" a number.
_FOR_A_COUPLE_RE = re.compile(r"\bfor\s+(?:a|the|my|our)?\s*couple\b(?!\s+of)", re.I)

# The catalog's words in a title or a category path.
_CATALOG_WORDS: dict[str, frozenset[str]] = {
    "women": frozenset({"women"}), "womens": frozenset({"women"}), "woman": frozenset({"women"}),
    "ladies": frozenset({"women"}), "men": frozenset({"men"}), "mens": frozenset({"men"}),
    "man": frozenset({"men"}), "girls": frozenset({"girls"}), "girl": frozenset({"girls"}),
    "boys": frozenset({"boys"}), "boy": frozenset({"boys"}), "baby": frozenset({"baby"}),
    "toddler": frozenset({"baby"}), "infant": frozenset({"baby"}), "newborn": frozenset({"baby"}),
    "kids": frozenset({"boys", "girls"}), "youth": frozenset({"boys", "girls"}),
    "unisex": frozenset({"men", "women"}),
}
AUDIENCE_WORDS = frozenset(SHOPPER_WORDS) | {"couple"}        # words of who it is for, none of them a product word


# Styles named after a wearer, not for one: "boy shorts for women", "a boyfriend fit shirt", "a dad hat".
_STYLE_NAMES_RE = re.compile(r"\bboy\s*-?\s*shorts?\b|\bboyfriend\s+(?:fit|style|cut|jeans|shirts?|tees?|"
                             r"cardigans?|sweaters?|blazers?)\b|\bdad\s+(?:hats?|caps?|sneakers|shoes)\b", re.I)


def style_name_words(text: str) -> frozenset[str]:
    """The wearer words of styles named after a wearer ("boy", "dad" in "boy shorts", "a dad hat"): words of
    the product, not of whom it is for."""
    return frozenset(w for m in _STYLE_NAMES_RE.finditer(text) for w in tokens(m.group()) if w in SHOPPER_WORDS)


@lru_cache(maxsize=MEMO_SIZE)
def grown_up_audiences(text: str) -> frozenset[str]:
    """The grown-ups a message's family words may also name ("for my son" -> men; see `_GROWN_UP`)."""
    out: set[str] = set()
    for tok in tokens(_STYLE_NAMES_RE.sub(" ", _wearer_text(text))):
        out |= _GROWN_UP.get(tok, frozenset())
    return frozenset(out)


# "a gift for him", "something for her": the wearer's sex, not their age; read only while no wearer was named
# ("for my son ... better for him" keeps the son).
_FOR_PRONOUN_RE = re.compile(r"\bfor (him|her)\b", re.I)
_PRONOUN_AUDIENCES = {"him": frozenset({"men", "boys"}), "her": frozenset({"women", "girls"})}


def pronoun_audiences(text: str) -> frozenset[str]:
    """Whom "for him" / "for her" may mean (both ages), else empty."""
    out: set[str] = set()
    for m in _FOR_PRONOUN_RE.finditer(text):
        out |= _PRONOUN_AUDIENCES[m.group(1).lower()]
    return frozenset(out)


# People a message mentions who are not the wearer: someone else's relative ("what her sister wanted", "fishing
# w her dad", unless the product is "for her sister"; "they call her grandma" is no possessive), a model ("like
# mommy", "like my grandma's") and someone who has a say without being the one who wears it ("my wife says small",
# "my wife just said long sleeves"; "my dad said he wants a cap" names him).  The catalog's own words ("his mens
# size", "I'd like womens") always name the wearer.  "With my wife" does not count here: the companion is often
# the wearer ("a camping trip with my wife, she needs shorts").
_RELATIVES = sorted(set(SHOPPER_WORDS) - set(_CATALOG_WORDS) - {"male", "female", "unisex", "couples", "gentleman",
                                                                 "gentlemen", "lady", "guy", "guys"},
                    key=len, reverse=True)
_RELATIVE = "(?:" + "|".join(_RELATIVES) + ")"
_MENTIONED_RE = re.compile(
    r"(\bfor\s+)?(?<!call )(?<!calls )(?<!called )(?<!calling )\b(?:her|his|their)\s+"
    r"(?:(?:little|big|older|younger|baby)\s+)?" + _RELATIVE + r"\b(?:'?s)?"
    r"|\blike\s+(?:(?:my|her|his|their|our|the)\s+)?" + _RELATIVE + r"\b"
    r"|\b" + _RELATIVE + r"\s+(?:(?:just|also|always|even)\s+)?(?:says|said|thinks|thought|told\s+me)\b"
    r"(?!\s+(?:that\s+)?(?:he|she|they)\b)", re.I)


def _wearer_text(text: str) -> str:
    """The message without the people it mentions who are not the wearer (see `_MENTIONED_RE`)."""
    return _MENTIONED_RE.sub(lambda m: m.group() if m.group(1) else " ", text)


# "a skinny little guy", "my little lady": a child called by a grown-up's word.
_LITTLE_ONES_RE = re.compile(r"\blittle\s+(?:(guy|man|dude|fella|gentleman)|(lady|miss|princess))\b", re.I)


def shopper_audiences(text: str) -> frozenset[str]:
    """The audiences a message names ("for my son" -> boys; "kids" -> boys and girls; "my little guy" -> boys;
    a style named after a wearer, "boy shorts", names none)."""
    text = _LITTLE_ONES_RE.sub(lambda m: " boy " if m.group(1) else " girl ",
                               _STYLE_NAMES_RE.sub(" ", _wearer_text(text)))
    out: set[str] = {"men", "women"} if _FOR_A_COUPLE_RE.search(text) else set()
    for tok in tokens(text):
        out |= SHOPPER_WORDS.get(tok, frozenset())
    return frozenset(out)


def product_audiences(title: str, categories: Iterable[str]) -> frozenset[str]:
    """The audiences a product is for, from its category path and title (empty: not said)."""
    out: set[str] = set()
    for tok in tokens(" ".join(str(c) for c in categories) + " " + title):
        out |= _CATALOG_WORDS.get(tok, frozenset())
    return frozenset(out)


# "not for women", "not a girl", "isn't for my son", "not a boxy men's tee", "nothing made for men": who the
# product is NOT for (one word between an article and the wearer, "a boxy", never without the article: "no heels
# womens 8" wants women's).
_AUDIENCE_ALTERNATION = "|".join(sorted(AUDIENCE_WORDS, key=len, reverse=True))
_NEGATED_AUDIENCE_RE = re.compile(
    r"\b(?:not|no|isn'?t|never|nothing)\s+(?:(?:made|meant|designed|intended)\s+)?(?:for\s+)?"
    r"(?:(?:a|an|the|any)\s+(?:[a-z]+\s+)?|my\s+)?(?:(?:little|baby)\s+)?(" + _AUDIENCE_ALTERNATION
    + r")\b(?:'?s)?", re.I)
# The wearers joined to a ruled-out one are ruled out with it: "not for men or kids", "no kids or mens sizes".
_JOINED_AUDIENCE_RE = re.compile(r",?\s+(?:or|nor|and)\s+(?:for\s+)?(?:(?:a|an|the|any|my)\s+)?"
                                 r"(?:(?:little|baby)\s+)?(" + _AUDIENCE_ALTERNATION + r")\b(?:'?s)?", re.I)


# A clause about what was shown ("these are mostly women's", "they all look like men's"): it describes the
# list, not the wish.  "They" alone is the product wished for as often ("They're women's high-rise briefs",
# the persona cards' voice), so it speaks of the list only when it judges a set ("all", "mostly") or how
# they look.
_ABOUT_SHOWN_RE = re.compile(
    r"\b(?:(?:these|those|all of them)(?:'re|\s+(?:are|were|look|looks|seem|all))|"
    r"they(?:(?:'re|\s+(?:are|were))\s+(?:all|mostly)|\s+(?:look|looks|seem|all)))\b[^,.;!?]*", re.I)


@lru_cache(maxsize=MEMO_SIZE)
def audiences_said(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(audiences the message names, audiences it rules out): "it's for a boy, not a girl" -> ({boys},
    {girls}); a word after a negation cue counts only against, and one in a clause about the list shown
    ("these are mostly women's") or in a price ("mid teens") not at all."""
    text = DECADE_PRICE_RE.sub(" ", _ABOUT_SHOWN_RE.sub(" ", text))      # "mid teens" is a price, no wearer
    negated: set[str] = set()
    rest, at = [], 0
    for m in _NEGATED_AUDIENCE_RE.finditer(text):
        if m.start() < at:
            continue                     # inside the wearers joined to an earlier negation
        negated |= SHOPPER_WORDS.get(m.group(1).lower(), frozenset())
        rest.append(text[at:m.start(1)])
        at = m.end()
        while joined := _JOINED_AUDIENCE_RE.match(text, at):
            negated |= SHOPPER_WORDS.get(joined.group(1).lower(), frozenset())
            at = joined.end()
    rest.append(text[at:])
    said = shopper_audiences(" ".join(rest))
    # "nephew, not son": a wearer named and ruled out by the same message is a corrected family word, not a
    # wearer ruled out.
    return said, frozenset(negated - said)
