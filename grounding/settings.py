"""The grounding thresholds, as a type: their values live in `starter/settings.py`.

Grounding takes them as an argument so that every tunable of the system has
one home (the agent's config) while grounding imports nothing of the agent.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GroundingTunables:
    """Thresholds of fuzzy matching and proposal grounding (see starter/settings.py for values and provenance)."""

    token_ratio_min: float            # per-token fuzz.ratio (0..100) for a typo to count as the same word
    fuzzy_min_len: int                # shorter tokens (and numbers) must match exactly
    value_in_message_min: float       # IDF share of a value's tokens that must be in the message
    value_in_clue_min: float          # IDF share of a value's tokens that one clue must hold
    shelf_match_min: float            # shelf score (0..100) for a category value to name a shelf
    fragment_clue_coverage_min: float  # a returned fragment match covers this share of the clue
    shortlist: int                    # clues re-scored with rapidfuzz per query
    fragment_weights: tuple[float, float, float]   # F1, clue coverage, token_sort_ratio in a fragment score
    rare_postings: int                # an in-vocabulary token this rare may itself be a typo
    max_proposals: int                # proposals grounded per message
    max_value_chars: int              # longest value considered
    max_message_chars: int            # message text read by the gate
    correction_cache: int             # spelling corrections kept (entries)
    shelf_word_ratio_min: float       # fuzz.ratio for a phrase word to be read as a shelf word
    source_trust: tuple[tuple[str, float], ...]   # confidence scale per proposal source
    brand_max_words: int              # longest store name (in words) looked for in a message
    brand_min_chars: int              # a one-word store name shorter than this is never read as a brand
    brand_common_ratio: float         # refused: a name's words are on this many times more products' cards
    brand_fuzzy_min_chars: int        # a misspelt name is read from this many letters (one slip)
    brand_fuzzy_long_chars: int       # ... and with two slips from this many
