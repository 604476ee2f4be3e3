"""The customer-facing text of a response: what is shown, and the question in plain words."""
from __future__ import annotations

import re

from contest.rules import ALLOWED_ATTRIBUTES
from grounding.words import tokens

SAFE_QUESTION = "other"
SAFE_MESSAGE = "Sorry, let me try again. What else matters to you about it?"
QUESTION_TEXT = {
    "other": "What else matters to you about it?",
    "material": "Which material would you like?",
    "color": "Any colour in mind?",
    "size": "Anything about size or fit width?",
    "style": "Any particular style, fit or department?",
    "use_case": "What will you use it for?",
    "feature": "Which feature matters most?",
    "budget": "What budget do you have in mind?",
    "brand": "Any brand preference?",
    "category": "What kind of item is it?",
}


def _lead(count: int, one: str, many: str) -> str:
    """What is shown: none, one, or `many` with {count} filled in."""
    if count == 0:
        return "I could not find a match yet."
    return one if count == 1 else many.format(count=count)


def response_message(count: int, ask: str | None) -> str:
    """"Here are N options, best first." plus the question, if any."""
    lead = _lead(count, "Here is my best match.", "Here are {count} options, best first.")
    if ask and ask in ALLOWED_ATTRIBUTES:
        return f"{lead} {QUESTION_TEXT[ask]}"
    return lead


# A person is asked in plain words, never the same sentence twice in a row.
PEOPLE_QUESTIONS: tuple[str, ...] = (
    "What else can you tell me about it?",
    "Is there a detail that makes it stand out, like a print, a feature or what it's made of?",
    "Anything more about the look, the fit or what it's for?",
    "What else do you remember about it?",
)


# Before the shopper has said anything about the product, the list is the catalog's most popular.
OPENING_QUESTION = "What are you looking for today?"


def people_message(count: int, ask: str | None, asked_before: int, before: str = "", described: bool = True,
                   unsaid: tuple[str, ...] = ()) -> str:
    """The text for a person: `before` (a reply to small talk or to their question), what is shown, and
    a question that varies from turn to turn; while nothing is `described`, what is shown is called popular
    and the question asks what they look for."""
    if described:
        lead = _lead(count, "This looks closest to what you describe.",
                     "Here are {count} that fit what you describe, best first.")
    else:
        lead = _lead(count, "Here is a popular pick to start with.", "Here are {count} popular picks to start with.")
    text = f"{before} {lead}".strip()
    if ask is None:
        return text
    return f"{text} {people_question(asked_before, described, unsaid)}"


def people_question(asked_before: int, described: bool, unsaid: tuple[str, ...]) -> str:
    """An open question that follows the conversation: every other turn it names up to two things not said
    yet (`unsaid`, in plain words: "who it's for", "a colour"), taken in turn, else a plain "anything else"
    that varies; what the shopper answers is theirs to choose, as `other` asks."""
    if not described:
        return OPENING_QUESTION
    if unsaid and asked_before % 2 == 0:
        start = (asked_before // 2) % len(unsaid)
        named = (unsaid[start:] + unsaid[:start])[:2]
        return f"Anything else you can tell me, like {' or '.join(named)}?"
    return PEOPLE_QUESTIONS[asked_before % len(PEOPLE_QUESTIONS)]


_GREETINGS = frozenset("hi hello hey hiya sup yo howdy morning evening".split())
_THANKS = frozenset("thanks thank thx ty cheers appreciate".split())
_FAREWELLS = frozenset("bye goodbye cya".split())
# A shopper asking about the products ("do you have any with pockets?", "any in modal?").
_QUESTION_RE = re.compile(r"\?\s*$|^\s*(?:do (?:you|u) have|have you got|got any|any\b|is there|are there|"
                          r"do (?:they|any|these)|does (?:it|any))", re.I)


def small_talk_reply(text: str) -> str:
    """A short friendly answer to a message that says nothing about the product: to thanks, to a
    goodbye, to a greeting ("how are you?" too), else a plain "Sure."."""
    words = set(tokens(text))
    if words & _THANKS:
        return "You're welcome!"
    if words & _FAREWELLS:
        return "Happy shopping!"
    if words & _GREETINGS or {"how", "you"} <= words:          # "how are you?"
        return "Hi! Happy to help."
    return "Sure."


def is_question(text: str) -> bool:
    """Does the shopper ask about the products?"""
    return _QUESTION_RE.search(text) is not None


def question_answer(words: list[str], holders: int, count: int) -> str:
    """The answer to "do you have any with pockets?" from what is shown: how many of them say so."""
    detail = " ".join(words[:3])
    if not count:
        return f"I could not find any with {detail} yet."
    if holders == 0:
        return f"None of these mention {detail}; these are the closest."
    if count == 1:
        return f"Yes, this one mentions {detail}."
    return f"Yes, {holders} of these {count} mention {detail}."
