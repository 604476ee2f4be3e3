"""The words of a person's message that say nothing about the product itself."""
from __future__ import annotations

from grounding.audience import AUDIENCE_WORDS
from grounding.budget import BUDGET_WORDS, PRICE_CUES
from grounding.words import STOP

# Words that say nothing about the product itself, on top of the stop words
# (who it is for is read as an audience fact instead).
PEOPLE_STOP = STOP | AUDIENCE_WORDS | BUDGET_WORDS | PRICE_CUES | frozenset("""
myself looking need needs want wants wanted after got get getting buy buying shopping find finding show
have has having also really pretty little bit lot kind sort something anything thing things one ones
would could should will might maybe please thanks thank hi hello hey do does did am is are was were be been
so too very just only even still like love loves liked idea prefer preferably ideally great nice good fine
okay ok yes no not sure mostly usually always often wear wearing wears use using used
""".split())
