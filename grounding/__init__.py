"""Grounding: the single gate between shopper text and agent state.

    gate = Gate(vocabulary, tunables)          # vocabulary: anything like grounding.vocabulary.Vocabulary
    accepted, rejected = gate.ground(proposals, raw_message)
    gate.match_fragments(raw_message)          # [(clue, score)], .rejected_phrases
    gate.shelves.guess(phrase, ...)            # the one shelf matcher

Proposals come from `proposals_from_facts` (the regex reading, `read_facts`)
and `proposals_from_llm` (a model extraction).  Grounding imports only the
contest rules (`contest`) and its own modules.
"""
from grounding.budget import Budget, parse_budget
from grounding.clues import FragmentMatches
from grounding.gate import SOURCES, Gate, Grounded, Proposal, Rejected
from grounding.proposals import TextFacts, proposals_from_facts, proposals_from_llm, read_facts
from grounding.settings import GroundingTunables
from grounding.shelves import ShelfGuess, ShelfMatcher

__all__ = ["Budget", "FragmentMatches", "Gate", "Grounded", "GroundingTunables", "Proposal", "Rejected", "SOURCES",
           "ShelfGuess", "ShelfMatcher", "TextFacts", "parse_budget", "proposals_from_facts", "proposals_from_llm",
           "read_facts"]
