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

# A child named by kinship ("my son", "my lass"): a boy or a girl, or a grown-up (`_GROWN_UP`).
_SONS = "son grandson nephew stepson godson lad"
_DAUGHTERS = "daughter granddaughter niece stepdaughter goddaughter lass"
# A shopper's word -> the audiences it names.
SHOPPER_WORDS: dict[str, frozenset[str]] = {}
for _group, _words in (
    ("men", "men man mens husband boyfriend dad daddy father guy guys male brother grandpa grandfather gentleman "
            "gentlemen groom uncle hubby hubs bf fiance bro grandad granddad gramps papa stepdad"),
    ("women", "women woman womens wife girlfriend mom mommy mother ladies lady female sister grandma grandmother "
              "bride aunt wifey gf fiancee mum mama momma nana nan nanna granny gran sis stepmom missus mrs"),
    ("boys", _SONS + " sons boys boy"),
    ("girls", _DAUGHTERS + " daughters girls girl"),
    ("baby", "baby babies infant infants newborn newborns toddler toddlers"),
):
    for _w in _words.split():
        SHOPPER_WORDS[_w] = frozenset({_group})
# "my husbands birthday", "my boyfriends trip": a possessive typed without its apostrophe (and plurals).
for _w, _group in [(w, g) for w, g in SHOPPER_WORDS.items() if not w.endswith("s")]:
    SHOPPER_WORDS.setdefault(_w + "s", _group)
for _w in ("kids", "kid", "kiddo", "kiddos", "children", "child", "youth", "teen", "teens", "teenager", "teenage",
           "tween", "tweens", "preteen", "preteens"):
    SHOPPER_WORDS[_w] = frozenset({"boys", "girls"})
for _w in ("unisex", "couples"):
    SHOPPER_WORDS[_w] = frozenset({"men", "women"})
# "Unisex" says the wearer may be of either sex, not how old they are: beside a wearer named ("girls' gloves, they're
# unisex", "a footie for the baby ... unisex is fine") it widens that wearer to both sexes; alone it names grown-ups.
_EITHER_SEX_WORDS = frozenset({"unisex"})
_BOTH_SEXES = {"men": frozenset({"men", "women"}), "women": frozenset({"men", "women"}),
               "boys": frozenset({"boys", "girls"}), "girls": frozenset({"boys", "girls"}), "baby": frozenset({"baby"})}
# The wearer's sex each audience says, and the audiences of each sex.
_SEXES = {"women": "female", "girls": "female", "men": "male", "boys": "male"}
_OF_SEX = {"female": frozenset({"women", "girls"}), "male": frozenset({"men", "boys"})}


def _sexes(audiences: Iterable[str]) -> frozenset[str]:
    """The sexes `audiences` say ("girls", "women": female; "baby": none)."""
    return frozenset(_SEXES[a] for a in audiences if a in _SEXES)


# Family words that may name a grown-up ("my son" is a boy or a man, "my teen" wears adult sizes): a product for
# that grown-up neither agrees nor disagrees with them.
_GROWN_UP: dict[str, frozenset[str]] = {}
for _group, _words in (("men", _SONS), ("women", _DAUGHTERS),
                       ("men women", "teen teenager teenage youth")):
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


# Styles and shades named after a wearer, not for one: "boy shorts for women", "a boyfriend fit shirt", "a dad
# hat", "baby blue", "a babydoll dress".
_STYLE_NAMES_RE = re.compile(r"\bboy\s*-?\s*shorts?\b|\bboyfriend\s+(?:fit|style|cut|jeans|shirts?|tees?|"
                             r"cardigans?|sweaters?|blazers?)\b|\bdad\s+(?:hats?|caps?|sneakers|shoes)\b|"
                             r"\bbaby\s*-?\s*(?:blue|pink|yellow|green|purple|lavender|dolls?)\b", re.I)


# Outings named after a group of friends, who are no wearer: "thanks, girls night is saturday!", "something boho
# for a girls trip", "our boys weekend".
_OUTINGS_RE = re.compile(r"\b(?:girls?|boys?|guys?|ladies|lads|gals?)['’]?\s*(?:night|nite|trip|weekend|getaway|"
                         r"vacation|holiday|brunch)s?\b|\b(?:girls?|boys?)['’]?\s+day\s+out\b", re.I)


def style_name_words(text: str) -> frozenset[str]:
    """The wearer words of styles named after a wearer ("boy", "dad" in "boy shorts", "a dad hat"): words of
    the product, not of whom it is for."""
    return frozenset(w for m in _STYLE_NAMES_RE.finditer(text) for w in tokens(m.group()) if w in SHOPPER_WORDS)


@lru_cache(maxsize=MEMO_SIZE)
def grown_up_audiences(text: str) -> frozenset[str]:
    """The grown-ups a message's family words may also name ("for my son" -> men; see `_GROWN_UP`), unless it
    states the wearer's age, which then decides ("my son, he's 8": none; "she's 15": women)."""
    text = _about_the_wearer(text)
    words = tokens(text)
    if _AGE_RE.search(text):
        return ages_said(text, _single_sex_words(words))[1]
    if _CHILD_WORDS.intersection(words):
        return frozenset()
    out: set[str] = set()
    for tok in words:
        out |= _GROWN_UP.get(tok, frozenset())
    return _of_named_sex(frozenset(out), _single_sex_words(words))


def _single_sex_words(words: list[str]) -> frozenset[str]:
    """The audiences a message's words of one sex name ("son", "her husband", "girls'")."""
    return frozenset(a for tok in words for a in SHOPPER_WORDS.get(tok, ()) if len(SHOPPER_WORDS[tok]) == 1
                     and a in _SEXES)


# "a gift for him", "something for her": the wearer's sex, not their age; read only while no wearer was named
# ("for my son ... better for him" keeps the son).
_FOR_PRONOUN_RE = re.compile(r"\bfor (him|her)\b", re.I)
_PRONOUN_AUDIENCES = {"him": _OF_SEX["male"], "her": _OF_SEX["female"]}


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
# the wearer ("a camping trip with my wife, she needs shorts").  Nor is the one whose wedding or funeral it is
# ("my sister's wedding is next month", "a dress for my son's wedding": the shopper attends); a birthday's is
# ("for my dad's birthday": a gift).  Nor is a relative who has had a baby ("my sister had her baby girl last
# week": the baby is).
_RELATIVES = sorted(set(SHOPPER_WORDS) - set(_CATALOG_WORDS) - {"male", "female", "unisex", "couples", "gentleman",
                                                                 "gentlemen", "lady", "guy", "guys"},
                    key=len, reverse=True)
_RELATIVE = "(?:" + "|".join(_RELATIVES) + ")"
_MENTIONED_RE = re.compile(
    r"(\bfor\s+)?(?<!call )(?<!calls )(?<!called )(?<!calling )\b(?:her|his|their)\s+"
    r"(?:(?:little|big|older|younger|baby)\s+)?" + _RELATIVE + r"\b(?:'?s)?"
    r"|\blike\s+(?:(?:my|her|his|their|our|the)\s+)?" + _RELATIVE + r"\b"
    r"|\b(?:my|our|her|his|their)\s+(?:(?:little|big|older|younger|baby)\s+)?" + _RELATIVE
    + r"(?:'s|’s|s|s')\s+(?:wedding|funeral)s?\b"
    r"|\b" + _RELATIVE + r"\s+(?:(?:just|also|always|even)\s+)?(?:says|said|thinks|thought|told\s+me)\b"
    r"(?!\s+(?:that\s+)?(?:he|she|they)\b)"
    r"|\b(?:my|our)\s+(?:(?:little|big|older|younger)\s+)?" + _RELATIVE + r"\s+(?:(?:just|finally|recently)\s+)?"
    r"(?:had|has\s+had|is\s+having|gave\s+birth\s+to|welcomed)\b(?=\s+(?:(?:a|her|his|their|the)\s+)?"
    r"(?:(?:new|little|first|baby)\s+)?(?:baby|babies|twins?|son|daughter|boy|girl|newborn)\b)", re.I)


# A baby on the way is no wearer of what its mother buys: "until the baby comes", "my baby bump", "baby brain".
_EXPECTED_BABY_RE = re.compile(r"\bbaby\s+(?:bump|brain)\b|\b(?:the|our|my)\s+baby\s+(?:comes|arrives|is\s+(?:due|born|"
                               r"here|coming)|gets\s+here)\b", re.I)


# Ages said in words ("she's seven", "a few months old"), as the age reader reads them in digits.
_NUMBER_WORDS = {w: str(n) for n, w in enumerate("one two three four five six seven eight nine ten eleven twelve "
                                                 "thirteen fourteen fifteen sixteen seventeen".split(), 1)}
_NUMBER_WORD = "(" + "|".join(_NUMBER_WORDS) + ")"
_SPELLED_AGE_RE = re.compile(r"\b(?:(?:he|she)\s*(?:'s|’s|s|\s+is)\s+(?:only\s+|just\s+|turning\s+)?|"
                             r"turn(?:s|ing|ed)\s+)" + _NUMBER_WORD + r"\b|\b" + _NUMBER_WORD
                             + r"[\s-]+(?:years?|months?|weeks?)[\s-]+old\b", re.I)
_FEW_RE = re.compile(r"\b(?:a\s+)?(?:few|couple(?:\s+of)?)\s+(?=(?:weeks?|months?)[\s-]+old\b)", re.I)


def _in_digits(text: str) -> str:
    """The text with an age said in words written in digits ("she's seven" -> "she's 7"; "a few months old" ->
    "3 months old")."""
    text = _FEW_RE.sub("3 ", text)
    return _SPELLED_AGE_RE.sub(lambda m: m.group().lower().replace(
        (m.group(1) or m.group(2)).lower(), _NUMBER_WORDS[(m.group(1) or m.group(2)).lower()], 1), text)


def _wearer_text(text: str) -> str:
    """The message without the people it mentions who are not the wearer (see `_MENTIONED_RE`) and without a baby
    on the way, its ages in digits."""
    return _in_digits(_EXPECTED_BABY_RE.sub(" ", _MENTIONED_RE.sub(lambda m: m.group() if m.group(1) else " ", text)))


# "a skinny little guy", "my little lady": a child called by a grown-up's word.
_LITTLE_ONES_RE = re.compile(r"\blittle\s+(?:(guy|man|dude|fella|gentleman)|(lady|miss|princess))\b", re.I)
# "my little brother", "lil sis", "my younger sister": a sibling younger than the shopper, who is a child or a grown-up
# as a son or a daughter is (read as those words), never only a grown-up as "brother" and "sister" alone are.
_YOUNGER_SIBLING_RE = re.compile(r"\b(?:little|lil|younger|baby|kid)\s+(?:(brothers?|bros?)|(sisters?|sis))\b", re.I)


def _about_the_wearer(text: str) -> str:
    """What the readers of who it is for read: the wearer's words (`_wearer_text`), without styles named after a
    wearer ("boy shorts") or outings after a group ("girls night"), each younger sibling named as the child of
    the same sex ("lil bro" -> "son")."""
    return _YOUNGER_SIBLING_RE.sub(lambda m: " son " if m.group(1) else " daughter ",
                                   _STYLE_NAMES_RE.sub(" ", _OUTINGS_RE.sub(" ", _wearer_text(text))))


# An age said of the wearer: "my 8 year old", "a 3yo", "for my 6 month old", "she's 9", "hes 3", "he is turning 5"
# (a height, "he's 6'5", or a size, "she's 5 foot", is no age; "lasts 3 years" names no wearer).
_AGE_RE = re.compile(
    r"\b(\d{1,2})\s*-?\s*(?:(years?|yrs?|months?|mos?|weeks?|wks?)\s*-?\s*old|(yo|y/o)\b)"
    r"|\b(he|she)\s*(?:'s|’s|s|\s+is)\s+(?:only\s+|just\s+|about\s+|almost\s+|nearly\s+|turning\s+)?(\d{1,2})\b"
    r"(?!\s*(?:'|’|\"|ft\b|feet|foot|inch|in\b|cm|kg|lbs?\b|pounds|%|\.\d|pack|pairs?|months?|mos?\b|x\b|"
    r"waist|inseam|chest|neck|length|long|wide|narrow|medium|sizes?\b|of\b|-\s*\d|to\s+\d|or\s+\d))"
    r"|\b(?:(he|she)\s*)?(?:(?:is|'s|just|only)\s+)*turn(?:s|ing|ed)\s+(\d{1,2})\b", re.I)
# A child's words of either sex ("kids", "teen"), which a word of one sex beside them narrows.
_KID_WORDS = frozenset(w for w, a in SHOPPER_WORDS.items() if a == {"boys", "girls"})
# Words that say the wearer is a child, so a family word beside them names no grown-up ("my toddler daughter").
_CHILD_WORDS = frozenset(w for w, a in SHOPPER_WORDS.items() if a == {"baby"}) | {
    "kid", "kids", "kiddo", "kiddos", "child", "children"}


def _of_named_sex(audiences: frozenset[str], named: frozenset[str]) -> frozenset[str]:
    """`audiences` less those of the other sex when `named` says the wearer's sex ("my teenage son": no girls)."""
    sexes = _sexes(named)
    if not sexes:
        return audiences
    return audiences & frozenset({"baby"}).union(*(_OF_SEX[x] for x in sexes))


def _age_audiences(age: int, months: bool) -> tuple[frozenset[str], frozenset[str]]:
    """(whom clothes for a wearer of this age are made for, the grown-ups they may also wear): hand-set from US
    sizing (baby sizes to 24 months, toddler 2T-5T, kids to about 14, adult sizes from the teens)."""
    if months or age < 2:
        return frozenset({"baby"}), frozenset()
    if age <= 4:
        return frozenset({"baby", "boys", "girls"}), frozenset()
    if age <= 12:
        return frozenset({"boys", "girls"}), frozenset()
    if age <= 17:
        return frozenset({"boys", "girls"}), frozenset({"men", "women"})
    return frozenset({"men", "women"}), frozenset()


def ages_said(text: str, named: frozenset[str] = frozenset()) -> tuple[frozenset[str], frozenset[str]]:
    """(the audiences the ages a message states name, the grown-ups they may also mean), of the wearer's sex
    when the age's pronoun or the wearers `named` beside it say it ("my 8 year old son": boys)."""
    out: set[str] = set()
    grown: set[str] = set()
    for m in _AGE_RE.finditer(text):
        number = m.group(1) or m.group(5) or m.group(7)
        pronoun = (m.group(4) or m.group(6) or "").lower()
        unit = (m.group(2) or "").lower()
        audiences, grown_ups = _age_audiences(int(number), unit.startswith(("mo", "w")))
        sex = _OF_SEX["male" if pronoun == "he" else "female"] if pronoun else named
        out |= _of_named_sex(audiences, sex)
        grown |= _of_named_sex(grown_ups, sex)
    return frozenset(out), frozenset(grown)


def wearers_agree(product: frozenset[str], wished: frozenset[str]) -> bool:
    """Whether a product made for `product` suits a wearer the shopper named as `wished`: they share an
    audience, and where both say the wearer's sex, the same one (a toddler boy's brief is no toddler girl's)."""
    if not product & wished:
        return False
    made, wanted = _sexes(product), _sexes(wished)
    return not made or not wanted or bool(made & wanted)


def either_sex(audiences: frozenset[str]) -> frozenset[str]:
    """The wearers of `audiences`' ages, of both sexes ("girls" -> girls and boys; "baby" stays the baby)."""
    return frozenset().union(*(_BOTH_SEXES[a] for a in audiences))


_CHILDREN = frozenset({"boys", "girls", "baby"})


def of_the_sex_said(said: frozenset[str], earlier: frozenset[str]) -> frozenset[str] | None:
    """The wearers a message names of both sexes ("kids size", "my kid", "toddler to big kid sizes"), narrowed to
    the one sex of the child named before ("my son": a boy's size), or None when the message names one sex, or
    the earlier wearer was a grown-up or of no one sex (then the message names someone new, or both were meant)."""
    sex = _sexes(earlier)
    if len(sex) != 1 or len(_sexes(said)) != 2 or said != either_sex(said) or not earlier <= _CHILDREN:
        return None
    (one,) = sex
    return frozenset(a for a in said if a not in _SEXES or _SEXES[a] == one)


def names_either_sex_only(text: str) -> bool:
    """Whether the only wearer a message names is one of either sex ("unisex is fine", "they're unisex")."""
    text = _wearer_text(text)
    words = [tok for tok in tokens(text) if tok in SHOPPER_WORDS]
    return bool(words) and all(tok in _EITHER_SEX_WORDS for tok in words) and not _AGE_RE.search(text)


def shopper_audiences(text: str) -> frozenset[str]:
    """The audiences a message names ("for my son" -> boys; "kids" -> boys and girls; "my little guy" -> boys;
    a style named after a wearer, "boy shorts", names none)."""
    text = _LITTLE_ONES_RE.sub(lambda m: " boy " if m.group(1) else " girl ", _about_the_wearer(text))
    out: set[str] = {"men", "women"} if _FOR_A_COUPLE_RE.search(text) else set()
    kids: set[str] = set()
    words = tokens(text)
    for tok in words:
        if tok not in _EITHER_SEX_WORDS:
            (kids if tok in _KID_WORDS else out).update(SHOPPER_WORDS.get(tok, frozenset()))
    # A word of one sex narrows a child's word of both ("my teenage son": a boy), and an age said is the more
    # precise word ("my son, he's 20" is a man, "my daughter is 3" a toddler girl).
    named = frozenset(out) | _of_named_sex(frozenset(kids), _single_sex_words(words))
    named = ages_said(text, named)[0] or named
    if _EITHER_SEX_WORDS.intersection(words):          # "unisex, so my wife can borrow it" names both sexes
        return either_sex(named) if named else SHOPPER_WORDS["unisex"]
    return named


def product_audiences(title: str, categories: Iterable[str]) -> frozenset[str]:
    """The audiences a product is for, from its category path and title (empty: not said)."""
    out: set[str] = set()
    for tok in tokens(" ".join(str(c) for c in categories) + " " + title):
        out |= _CATALOG_WORDS.get(tok, frozenset())
    return frozenset(out)


# "not for women" ("not 4 women"), "not a girl", "isn't for my son", "not a boxy men's tee", "nothing made for
# men": who the product is NOT for (one word between an article and the wearer, "a boxy", never without the
# article: "no heels womens 8" wants women's).
_AUDIENCE_ALTERNATION = "|".join(sorted(AUDIENCE_WORDS, key=len, reverse=True))
_NEGATED_AUDIENCE_RE = re.compile(
    r"\b(?:not|no|isn'?t|never|nothing)\s+(?:(?:made|meant|designed|intended)\s+)?(?:(?:for|4)\s+)?"
    r"(?:(?:a|an|the|any)\s+(?:[a-z]+\s+)?|my\s+)?(?:(?:little|baby)\s+)?(" + _AUDIENCE_ALTERNATION
    + r")\b(?:'?s)?", re.I)
# The wearers joined to a ruled-out one are ruled out with it: "not for men or kids", "no kids or mens sizes".
_JOINED_AUDIENCE_RE = re.compile(r",?\s+(?:or|nor|and)\s+(?:(?:for|4)\s+)?(?:(?:a|an|the|any|my)\s+)?"
                                 r"(?:(?:little|baby)\s+)?(" + _AUDIENCE_ALTERNATION + r")\b(?:'?s)?", re.I)


# A clause about what was shown ("these are mostly women's", "those look cheap", "they all look like men's"):
# it describes the list, not the wish.  "These" and "those" + a verb always point at the list; "they" alone is
# the product wished for as often ("They're women's high-rise briefs", "They look athletic", the persona cards'
# voice), so for who it is for it speaks of the list only when it judges a set ("all", "mostly") or how they look.
_THESE_CLAUSE = r"\b(?:these|those|all of them)(?:'re|\s+(?:are|were|look|looks|seem|all))\b[^,.;!?]*"
LIST_REMARK_RE = re.compile(_THESE_CLAUSE, re.I)
_ABOUT_SHOWN_RE = re.compile(
    _THESE_CLAUSE + r"|\bthey(?:(?:'re|\s+(?:are|were))\s+(?:all|mostly)|\s+(?:look|looks|seem|all))\b[^,.;!?]*", re.I)


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
