"""The words of a person's message that say nothing about the product itself.

Stop words, who it is for (read as an audience fact instead), budget and price words (read as a budget)
and the words of conversation.  One list for the people path's query, the route's test of a message that
says nothing, and the typo corrector, which never takes one of them for a slip of a catalog word
("sorry" is not "worry", "hubby" not "cubby").
"""
from __future__ import annotations

from grounding.audience import AUDIENCE_WORDS
from grounding.budget import BUDGET_WORDS, PRICE_CUES
from grounding.words import CONVERSATION_WORDS, STOP

PEOPLE_STOP = STOP | AUDIENCE_WORDS | BUDGET_WORDS | PRICE_CUES | CONVERSATION_WORDS

# How much of a thing a question asks for ("lots of pockets", "a bunch of colours"): no detail of the product
# itself, so an answer counts the products that state the thing, not the word "lots".
QUANTITY_WORDS = frozenset("lots lot plenty many much bunch loads tons heaps several few extra more".split())
# The words that make a question ("how are you?", "what do you have?"): what it asks about is the rest.
QUESTION_WORDS = frozenset("how what which why when where who whom whose".split())
# The verbs a shopper asks a shop with ("does it come with a hood?", "do you carry any in wool?", "are there any
# available in navy?"): the question is about the hood, the wool, the navy, never about the verb.
ASKING_VERBS = frozenset("come comes came coming carry carries sell sells stock stocks offer offers available "
                         "exist exists".split())
