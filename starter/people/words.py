"""The words of a person's message that say nothing about the product itself."""
from __future__ import annotations

import re

from grounding.audience import AUDIENCE_WORDS, LIST_REMARK_RE, style_name_words
from grounding.budget import amount_phrase_words, states_an_amount
from grounding.changes import replaced_words
from grounding.negation import contrasted_heads, phrase_words
from grounding.person_words import ASKING_VERBS, PEOPLE_STOP, QUESTION_WORDS
from grounding.words import tokens
from starter.reading.understand import Reading

__all__ = ["PEOPLE_STOP", "message_words", "query_words"]
# Stop words that name the product's cut in a phrase: "plus" (a stop word as "also") in "plus size", "my size is
# plus"; "one" in "a one piece".
_CUT_PHRASES = ((re.compile(r"\bplus[\s-]*siz|\bsizes?\s+(?:is\s+|are\s+)?plus\b", re.I), "plus"),
                (re.compile(r"\bone[\s-]*pieces?\b", re.I), "one"))
# A size said ("size 10", "my size is medium", "sizes 8.5"): the catalog lists a product once for all its sizes,
# so these words match only the rare title that names one size ("... Sneakers All Black Size 10"), not the product.
_SIZE_SAID_RE = re.compile(r"\bsizes?\s+(?:is\s+|are\s+)?(?:(?:us|uk|eu|womens?|mens?)\s+)?"
                           r"(?:\d+(?:\.\d+)?|x{0,3}s|x{0,3}l|\d?x+l|small|medium|large|x+-?large)\b", re.I)
# An age said ("my 10 year old", "she's 8", "a 3yo"): whom the product is for, no words of the product.
_AGE_SAID_RE = re.compile(r"\b\d{1,2}\s*-?\s*(?:years?|yrs?|yo|y/o|months?|mos?)(?:\s*-?\s*old)?\b|"
                          r"\b(?:he|she|they)(?:'s|s|\s+is|\s+are|'re)\s+\d{1,2}(?:\s*(?:years?|yrs?)(?:\s+old)?)?\b",
                          re.I)
# An amount as a token: "50", "19.99", "50ish" (a rough price), "40s" ("in the 40s").
_AMOUNT_TOKEN_RE = re.compile(r"\d+(?:\.\d+)?(?:ish|s)?")
# Chat shorthand: "boots 4 my boy", "4 me" -- a "4" before a pronoun, article or wearer is "for", not a number.
FOR_FOLLOWERS = frozenset("me my him her them us our ur your his the a an".split()) | AUDIENCE_WORDS


def message_words(reading: Reading) -> list[str]:
    """A free-text message's content words (and typo corrections), in order, without negated words, the words
    of a remark about the list shown ("these are mostly women's shoes", "those look thin and cheap") and the
    numbers of a budget or the words of a size or an age said (a wearer's word counts only in a style named
    after one); none for a message whose only such words make a question ("how are you?", "what do you
    sell?"): small talk says nothing about the product."""
    text, negated = reading.text, set(reading.negated)
    # A compound ruled out ("not a t-shirt") rules out its words, but those the message says alone too.
    negated |= {part for w in reading.negated if "-" in w for part in w.split("-")} - phrase_words(text)
    negated |= contrasted_heads(text.lower(), set(reading.negated))       # "not pajama sets, just the shirt"
    said = tokens(LIST_REMARK_RE.sub(" ", text))
    # Stop words that name the product here: "dad" in "a dad hat", "plus" in "plus size", "one" in "one piece".
    kept = style_name_words(text) | {word for rx, word in _CUT_PHRASES if rx.search(text)}
    amounts = states_an_amount(text)          # its numbers are then amounts of money
    priced = amount_phrase_words(text)        # "30 tops", "nothing over 40": no words of the product
    size_or_age = {w for rx in (_SIZE_SAID_RE, _AGE_SAID_RE) for m in rx.finditer(text) for w in tokens(m.group())}
    spelt_for = {k for k, w in enumerate(said[:-1]) if w == "4" and said[k + 1] in FOR_FOLLOWERS}
    words: list[str] = []
    for k, w in enumerate(said + sorted(reading.extra_tokens)):
        if (w in PEOPLE_STOP and w not in kept) or w in negated or (len(w) < 2 and not w.isdigit()) or k in spelt_for:
            continue
        if (amounts and _AMOUNT_TOKEN_RE.fullmatch(w)) or w in size_or_age or w in priced:
            continue
        if w not in words:
            words.append(w)
    return [] if all(w in QUESTION_WORDS or w in ASKING_VERBS for w in words) else words


def taken_back(readings: list[Reading]) -> list[frozenset[str]]:
    """For each free-text message, the words of it that a later message takes back: rules out ("in white" ...
    "sorry, beige not white") or replaces by another value of their kind in a change of mind ("dark brown" ...
    "never mind, light blue"; `grounding.changes`)."""
    free = [r for r in readings if not r.template]
    out: list[frozenset[str]] = []
    for k, r in enumerate(free):
        later = free[k + 1:]
        out.append(frozenset(w for s in later for w in s.negated)
                   | frozenset(w for s in later for w in replaced_words(r.text, s.text)))
    return out


def query_words(readings: list[Reading]) -> list[str]:
    """The cumulative query: every content word said so far, in order (`message_words` of each
    free-text message), less the words a later message takes back (`taken_back`: a correction stops counting
    for the earlier value)."""
    free = [r for r in readings if not r.template]
    words: list[str] = []
    for r, gone in zip(free, taken_back(free)):
        # A compound's other spelling goes with its part ("crew neck" brought crewneck; "v neck, not crew").
        glued = {w for w in r.extra_tokens for g in gone if len(g) >= 3 and (w.startswith(g) or w.endswith(g))}
        words += [w for w in message_words(r) if w not in words and w not in gone and w not in glued]
    return words


def message_pairs(reading: Reading) -> list[tuple[str, str]]:
    """The message's pairs of content words said one right after the other ("tank top", "rain boots"), in
    order: a phrase a product may hold as such, where BM25 sees only its words."""
    content = set(message_words(reading))
    said = tokens(reading.text)
    pairs: list[tuple[str, str]] = []
    for a, b in zip(said, said[1:]):
        if a in content and b in content and a != b and (a, b) not in pairs:
            pairs.append((a, b))
    return pairs
