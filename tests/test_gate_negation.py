"""The gate grounds the model's negation like its value: a "negated" flag stands only where the shopper's
words rule something out or take something back (a small model proposed "not shirt" for "shirt for my mom",
and the gate took it).  The deterministic readers' negations carry their own cue and are not re-judged."""
from __future__ import annotations

from pathlib import Path

import pytest

from grounding import Gate, Proposal
from starter.index.catalog import CatalogIndex
from starter.settings import GROUNDING, SETTINGS


@pytest.fixture
def gate(small_catalog: Path) -> Gate:
    return Gate(CatalogIndex(small_catalog, SETTINGS.index), GROUNDING)


@pytest.mark.parametrize("message", ["leather boots for my mom", "boots, leather ones", "LEATHER!"])
def test_a_negation_the_message_does_not_say_is_refused(gate: Gate, message: str) -> None:
    acc, rej = gate.ground([Proposal("material", "leather", True, "llm")], message)
    assert acc == [] and [r.reason for r in rej] == ["negation not in the shopper's words"]
    acc, rej = gate.ground([Proposal("material", "leather", False, "llm")], message)
    assert [(a.value, a.negated) for a in acc] == [("leather", False)] and rej == []


@pytest.mark.parametrize("message", ["boots but no leather", "I don't want leather", "anything but leather",
                                     "NOT LEATHER, suede", "actually suede, leather is too stiff"])
def test_a_negation_the_message_says_is_kept(gate: Gate, message: str) -> None:
    acc, rej = gate.ground([Proposal("material", "leather", True, "llm")], message)
    assert [(a.value, a.negated) for a in acc] == [("leather", True)] and rej == []


def test_a_readers_negation_is_not_judged_again(gate: Gate) -> None:
    """"I was thinking of black, but tan" takes black back by a reading of its own (a retraction), with no
    negation word: the regex reader's proposal stands."""
    acc, rej = gate.ground([Proposal("color", "black", True, "regex")], "I was thinking of black, but tan is nicer")
    assert [(a.value, a.negated) for a in acc] == [("black", True)] and rej == []
