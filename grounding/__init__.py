"""Grounding: the single gate between shopper text and agent state.

    gate = Gate(catalog_index)
    accepted, rejected = gate.ground(proposals, raw_message)
    gate.match_fragments(raw_message)   # [(clue, score)], .rejected_phrases
    gate.match_shelf(phrase)            # [(shelf key, score)]

Proposals come from `proposals_from_template` / `proposals_from_regex`
(parse.Observation) and `proposals_from_llm` (a model extraction).
"""
from grounding.gate import SOURCES, FragmentMatches, Gate, Grounded, Proposal, Rejected
from grounding.llm_adapter import proposals_from_llm
from grounding.regex_proposals import proposals_from_regex, proposals_from_template
from grounding.text import Budget, parse_budget

__all__ = ["Budget", "FragmentMatches", "Gate", "Grounded", "Proposal", "Rejected", "SOURCES", "parse_budget",
           "proposals_from_llm", "proposals_from_regex", "proposals_from_template"]
