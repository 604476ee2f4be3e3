"""The customer-facing text of a response: what is shown, and the question in plain words."""
from __future__ import annotations

from contest.rules import ALLOWED_ATTRIBUTES

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


def people_message(count: int, ask: str | None, asked_before: int) -> str:
    """The text for a person: what is shown, and a question that varies from turn to turn."""
    lead = _lead(count, "This looks closest to what you describe.",
                 "Here are {count} that fit what you describe, best first.")
    if ask is None:
        return lead
    return f"{lead} {PEOPLE_QUESTIONS[asked_before % len(PEOPLE_QUESTIONS)]}"
