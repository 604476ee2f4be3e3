"""The TechJam 2026 Track 4 contest rules, and nothing else (PROTOCOL.md, PERSONAS.md).

Both the agent and the evaluator import this package; it imports nothing of
the project's.  `import contest as P` gives every rule by name.
"""
from contest.card import (COLOR_RE, COLOR_WORDS, MATERIAL_RE, MATERIAL_WORDS, IntentCard, card_title, card_values,
                          classify, clean, coarse_category, first_word, flatten, intent_card, searchable_text,
                          split_card)
from contest.jsonl import field_text, iter_jsonl, read_jsonl
from contest.messages import (FALLBACK_NEW_VALUE, FALLBACK_OLD_VALUE, NO_ATTRIBUTE_MESSAGE, opening_message,
                              override_message, reply_attribute, reply_message, reveal, values_message)
from contest.persona import PersonaCustomer, is_persona_card
from contest.rules import (ALLOWED_ATTRIBUTES, MAX_TURNS, MISS_TURN, SCENARIOS, TOP_K, W_EFF, W_HIT, W_MRR,
                           hit_reward)
from contest.scoring import normalize_recommendations, summarize, token_counts, valid_response
from contest.shopper import Behavior, Customer, card_from_row, derive_behavior

__all__ = [
    "ALLOWED_ATTRIBUTES", "Behavior", "COLOR_RE", "COLOR_WORDS", "Customer", "FALLBACK_NEW_VALUE",
    "FALLBACK_OLD_VALUE", "IntentCard", "MATERIAL_RE", "MATERIAL_WORDS", "MAX_TURNS", "MISS_TURN",
    "NO_ATTRIBUTE_MESSAGE", "PersonaCustomer", "SCENARIOS", "TOP_K", "W_EFF", "W_HIT", "W_MRR", "card_from_row", "card_title",
    "card_values", "classify", "clean", "coarse_category", "derive_behavior", "field_text", "first_word", "flatten",
    "hit_reward", "intent_card", "is_persona_card", "iter_jsonl", "normalize_recommendations", "opening_message", "override_message",
    "read_jsonl", "reply_attribute", "reply_message", "reveal", "searchable_text", "split_card", "summarize",
    "token_counts", "valid_response", "values_message",
]
