"""How far a shopper's negation reaches.

The word after a negation cue is rejected ("not leather", "no heels", "nothing fancy", "without any lace", "I
don't like polyester", "mine doesn't have buttons"), and a negation often reaches further than that one word:
- coordinated words, each rejected: "no laces or zips", "not clingy or tight", "not a regular or loose cut";
- the modifiers of "one" or "ones", all rejected: "not a heavy chunky one", "not one of those clear
  plastic bubble ones";
- past an intensifier or "one of those": "not super thick" rejects "thick", not "super";
- a shade names its colour: "not dark brown" rejects "brown", which "dark" only qualifies.
A verb after "does not" / "will not" says what the product does ("it does not slip"): nothing is rejected.
A noun after a modifier stays wanted: "not a party dress", "not full briefs", "not a tiny card holder"
reject the modifier only (the shopper still wants a dress, briefs, a card holder).
"""
from __future__ import annotations

import re
from typing import Callable

from grounding.budget import AMOUNT_WORDS
from grounding.words import COLORS, tokens

# "I don't like polyester", "mine doesn't have buttons", "he won't wear heels", "not a fan of zippers", "she
# can't stand anything scratchy", "not into bright colors", "skip anything with a hood", "I'd rather not have
# lace", "allergic to wool": a verb of wanting or having, negated, rejects its object ("doesn't roll", "won't
# fade" say what the product does).
_VERB_CUE = (r"(?:don'?t|doesn'?t|do not|does not|didn'?t|won'?t|will not|wouldn'?t)\s+(?:really\s+|even\s+)?"
             r"(?:want|like|need|wear|have|love)(?:\s+(?:anything|something|them|it)(?:\s+(?:with|that'?s))?)?"
             r"|not a (?:big |huge )?fan of|can'?t stand|cannot stand|not (?:really |very )?into|allergic to|skip"
             r"|(?:would|'d) rather not(?: have| get)?")
# "not for the gym" rules out a use ("we have nothing for the pool deck" rules out nothing).
_CUE = (r"\b(?:" + _VERB_CUE + r"|no|not for|not|nothing|without|avoid|except|never|hates?|hated|dislikes?"
        r"|anything but|instead of|rather than)\s+")
# Words between a cue (or an "or") and the word it rejects: articles, intensifiers, "one of those", "with".
_LEAD = (r"(?:(?:any|anything|too|an?|the|super|very|really|so|overly|those|these|with|one of (?:those|these|the))"
         r"\s+)*")
# The word ruled out; a letter joined to a word ("t-shirt", "v-necks", "a-line"; typed apart: "t shirt", "v neck")
# is one word, since the letter alone names nothing.
_COMPOUND = r"\b(?:[a-z]-[a-z]{2,}|[tv] (?:shirts?|necks?)\b)"
_COMPOUND_RE = re.compile(_COMPOUND)
_WORD = r"(" + _COMPOUND + r"|[a-z][a-z]+)"
NEGATION_RE = re.compile(_CUE + _LEAD + _WORD)
# Up to three more modifiers before "one(s)", read from the end of the first rejected word.
_MODIFIERS_OF_ONES = re.compile(r"((?:\s+[a-z][a-z]+){1,3})\s+ones?\b")
# A coordinated word, read from the end of the last rejected one.
_OR = re.compile(r"\s*,?\s+(?:or|nor)\s+" + _LEAD + _WORD)
SHADES = frozenset("dark light pale bright deep".split())
_NEXT_WORD = re.compile(r"\s+([a-z][a-z]+)")
# "no water gets in", "no lines show": a negated noun doing something describes what the product does (it
# keeps water out), not a part the shopper rejects.  ("he hates seams rubbing" still rejects the seams.)
_BENEFIT_VERB = re.compile(r"\s+(?:gets?|comes?|shows?|showing|leaks?|sticks?|digs?|rubs?|slips?|"
                           r"slides?|falls?|goes|peeks?|pokes?|seeps?|escapes?|rides?|fits|scratch(?:es)?|"
                           r"bunch(?:es)?|pinch(?:es)?|itch(?:es)?)\b")
# "nothing fancy", "nothing tight or clingy" reject a word as "not" does; but "nothing digs in", "nothing shows
# through" say what the product does (the verb: `_BENEFIT_VERB`), and "nothing over 20 bucks", "nothing more than
# 25" name a price.
_NOT_AFTER_NOTHING = frozenset("over under more less than above below through digging rubbing".split())


# A price after a word of `_NOT_AFTER_NOTHING` ("no more than 40", "not over $30", "no more than thirty-five"): a
# limit, no rejected word.
_PRICE_NEXT = re.compile(r"\s*(?:than\s+)?(?:\$?\s*\d|(?:" + "|".join(sorted(AMOUNT_WORDS)) + r")\b)")
# "it does not slip", "so it will not fade": "not" after an auxiliary negates what the product does.
_AUXILIARY_BEFORE = re.compile(r"\b(?:do|does|did|will|would|should|could|can|must|may|might)\s+$")
# "I refuse to buy dresses without pockets", "he won't wear anything without a hood": a refusal of what lacks a
# part wants the part.
_REFUSED_BEFORE = re.compile(r"\b(?:refuse to|won'?t|will not|wouldn'?t|never|can'?t|don'?t)\s+(?:buy|wear|get|"
                             r"want|do|go for)\b[^.,;!?]{0,40}$")


def negations(low: str, negatable: Callable[[str], bool]) -> list[tuple[str, str]]:
    """(the phrase as said from its cue to the word, the rejected word) for every word a negation in the
    lower-cased `low` rejects, in order; `negatable` tells a product word from conversation ("not sure")."""
    out: list[tuple[str, str]] = []
    for m in NEGATION_RE.finditer(low):
        if not negatable(m.group(1)) or _rejects_nothing(low, m):
            continue
        start = m.start()
        word, end = _colour_of_shade(low, m.group(1), m.end(1))
        out.append((low[start:end], word.replace(" ", "-")))
        ones = _MODIFIERS_OF_ONES.match(low, end)
        if ones and all(negatable(w) for w in ones.group(1).split()):
            for w in re.finditer(r"[a-z][a-z]+", ones.group(1)):
                out.append((low[start:ones.start(1) + w.end()], w.group()))
            end = ones.start(1) + len(ones.group(1))
        while (more := _OR.match(low, end)) and negatable(more.group(1)):
            word, end = _colour_of_shade(low, more.group(1), more.end(1))
            out.append((low[start:end], word.replace(" ", "-")))
    return out


def contrasted_heads(low: str, negated: set[str]) -> set[str]:
    """The words after a ruled-out modifier that the message then sets against something else ("not pajama
    sets, just the shirt", "no shoulder strap, just handles": the sets and the strap), in the lower-cased `low`.
    They are not ruled out (the head stays wanted where only its modifier is: "not a party dress"), but this
    message does not ask for them either."""
    heads: set[str] = set()
    for word in negated:
        for m in re.finditer(rf"\b{word_pattern(word)}((?:\s+[a-z][a-z-]+){{1,2}}?)\s*,?\s+(?:just|only)\s", low):
            heads |= set(tokens(m.group(1)))
    return heads


# hand-set: the share of the listings naming a word that name it after a modifier for the two to be one name
# ("flops" is almost only ever "flip flops"; "heels" is as often not "high heels").
BOUND_SHARE = 0.9


def bound_heads(low: str, negated: set[str], listed: Callable[[str], int]) -> set[str]:
    """The words right after a ruled-out word in the lower-cased `low` that the listings (`listed`: how many name
    a word or words in a row) almost only ever name after it: one name of a product, ruled out whole ("not flip
    flops": the flops too).  A head named on its own too stays wanted ("not a sports bra" wants a bra)."""
    heads: set[str] = set()
    for word in negated:
        for m in re.finditer(rf"\b{word_pattern(word)}[\s-]+([a-z][a-z]+)\b", low):
            head = m.group(1)
            alone = listed(head)
            if alone and listed(f"{word.replace('-', ' ')} {head}") >= BOUND_SHARE * alone:
                heads.add(head)
    return heads


def phrase_words(phrase: str) -> set[str]:
    """The words of a phrase as `negations` names them: its compounds ("t-shirt") and its other tokens."""
    low = phrase.lower()
    return set(tokens(_COMPOUND_RE.sub(" ", low))) | {c.replace(" ", "-") for c in _COMPOUND_RE.findall(low)}


def words_said(text: str) -> set[str]:
    """Every word a later message may say again: its tokens and its compounds ("a t-shirt": a, t, shirt,
    t-shirt), so that a word taken back or ruled out before is found whichever way it was named."""
    return set(tokens(text)) | phrase_words(text)


def _rejects_nothing(low: str, m: re.Match[str]) -> bool:
    """Whether a negation says what the product does ("no water gets in", "it does not slip", "nothing digs
    in") or refuses what lacks a part ("won't buy one without pockets"), rejecting no word."""
    return (_BENEFIT_VERB.match(low, m.end(1)) is not None
            or _AUXILIARY_BEFORE.search(low, max(0, m.start() - 12), m.start()) is not None
            or _says_what_it_does(m)
            or (m.group().startswith("without") and _REFUSED_BEFORE.search(low, max(0, m.start() - 60), m.start())
                is not None))


def _says_what_it_does(m: re.Match[str]) -> bool:
    """Whether a match of "nothing" is followed by what the product does or a price, not a rejected word; or
    any negation by a price ("no more than 40", "not over $30")."""
    return (m.group().startswith("nothing") and (m.group(1) in _NOT_AFTER_NOTHING
                                                 or _BENEFIT_VERB.fullmatch(" " + m.group(1)) is not None)) \
        or (m.group(1) in _NOT_AFTER_NOTHING and _PRICE_NEXT.match(m.string, m.end(1)) is not None)


def _colour_of_shade(low: str, word: str, end: int) -> tuple[str, int]:
    """"dark brown": the colour and where it ends, for a shade followed by a colour; else the word as read."""
    if word in SHADES:
        nxt = _NEXT_WORD.match(low, end)
        if nxt and nxt.group(1) in COLORS and nxt.group(1) not in SHADES:
            return nxt.group(1), nxt.end(1)
    return word, end


_SIBILANT_END = ("s", "x", "z", "ch", "sh")


def number_forms(word: str) -> frozenset[str]:
    """The word and its other number by the regular English endings ("bikinis" -> bikini; "strap" -> straps;
    "dresses" -> dress; "panties" -> panty).  Irregular forms are left as said."""
    if len(word) < 3:
        return frozenset({word})
    if word.endswith("ies") and len(word) > 4:
        other = word[:-3] + "y"
    elif word.endswith("es") and word[:-2].endswith(_SIBILANT_END):
        other = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        other = word[:-1]
    elif word.endswith("y") and word[-2] not in "aeiou":
        other = word[:-1] + "ies"
    elif word.endswith(_SIBILANT_END):
        other = word + "es"
    else:
        other = word + "s"
    return frozenset({word, other})


# A product's own words for a part or a substance it lacks: "No Tag", "non-slip", "not see-through", "Tag-Free",
# "Nickel Free", "without seams", "no visible seams" (one word between the cue and the word).
_ABSENCE = r"(?:\b(?:no|non|not|without|zero|free of)[\s-]+(?:[a-z]+[\s-]+)?{w}(?:e?s)?\b|\b{w}(?:e?s)?[\s-]+free\b)"


def word_pattern(word: str) -> str:
    """The regular expression of a word as products and shoppers write it: a compound's hyphen may be a space
    or nothing ("t-shirt": "T Shirt", "Tshirt")."""
    return r"[\s-]?".join(map(re.escape, word.split("-")))


def states_present(low: str, word: str) -> bool:
    """Whether a product's lower-cased text `low` says it has `word` other than as something it lacks
    ("tag-free", "no seams" and "nickel free" do not state a tag, a seam or nickel): a shopper who rules a
    word out agrees with a product that rules it out too."""
    w = word_pattern(word)
    bare = re.sub(_ABSENCE.format(w=w), " ", low)
    return re.search(rf"\b{w}\b", bare) is not None
