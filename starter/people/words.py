"""The words of a person's message that say nothing about the product itself."""
from __future__ import annotations

from grounding.audience import AUDIENCE_WORDS
from grounding.budget import BUDGET_WORDS, PRICE_CUES
from grounding.budget import names_price
from grounding.words import STOP, tokens
from starter.reading.understand import Reading

# Words that say nothing about the product itself, on top of the stop words
# (who it is for is read as an audience fact instead).
PEOPLE_STOP = STOP | AUDIENCE_WORDS | BUDGET_WORDS | PRICE_CUES | frozenset("""
myself looking need needs want wants wanted after got get getting buy buying shopping find finding show
have has having also really pretty little bit lot kind sort something anything thing things one ones
would could should will might maybe please thanks thank hi hello hey do does did am is are was were be been
so too very just only even still like love loves liked idea prefer preferably ideally great nice good fine
okay ok yes no not sure mostly usually always often wear wearing wears use using used
all know other others options option mine none sorry sry oops wait meant mean actually instead changed mind
thx ty pls plz sup yo hmm lol oh super
""".split())


def message_words(reading: Reading) -> list[str]:
    """A free-text message's content words (and typo corrections), in order, without negated words
    and without the numbers of a budget."""
    negated = set(reading.negated)
    budget_numbers = set(tokens(reading.text)) if names_price(reading.text) else set()
    words: list[str] = []
    for w in list(tokens(reading.text)) + sorted(reading.extra_tokens):
        if w in PEOPLE_STOP or w in negated or (len(w) < 2 and not w.isdigit()):
            continue
        if w in budget_numbers and w.replace(".", "", 1).isdigit():
            continue
        if w not in words:
            words.append(w)
    return words


def query_words(readings: list[Reading]) -> list[str]:
    """The cumulative query: every content word said so far, in order (`message_words` of each
    free-text message), less the words a later message rules out ("in white" ... "sorry, beige not
    white": a correction stops counting for the earlier value)."""
    free = [r for r in readings if not r.template]
    words: list[str] = []
    for k, r in enumerate(free):
        later = {w for s in free[k + 1:] for w in s.negated}
        words += [w for w in message_words(r) if w not in words and w not in later]
    return words
