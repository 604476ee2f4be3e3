"""The contest's fixed numbers and names (PROTOCOL.md, "Agent contract" and "Loop and scoring")."""
from __future__ import annotations

ALLOWED_ATTRIBUTES: tuple[str, ...] = (
    "category", "material", "color", "size", "style",
    "brand", "budget", "feature", "use_case", "other",
)
SCENARIOS: tuple[str, ...] = ("buying", "browsing", "intent_override", "boundary")
MAX_TURNS = 10
TOP_K = 10
# TechnicalScore = W_HIT * Hit@10 + W_MRR * MRR + W_EFF * Efficiency.
W_HIT, W_MRR, W_EFF = 0.5, 0.3, 0.2
# A miss counts this turn in MTTC; Efficiency = clip((MISS_TURN - MTTC) / 10, 0, 1).
MISS_TURN = 11


def hit_reward(rank: int, turn: int) -> float:
    """TechnicalScore one session earns with a hit at `rank` on `turn`."""
    return W_HIT + W_MRR / rank + W_EFF * max(0.0, (MISS_TURN - turn) / 10)
