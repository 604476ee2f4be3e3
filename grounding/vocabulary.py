"""What grounding needs to know about a catalog, as an interface.

The agent's catalog index implements it; grounding never imports the agent.
"""
from __future__ import annotations

from typing import Mapping, Protocol, Sequence


class Vocabulary(Protocol):
    """Catalog vocabulary: card values (clues) with their products, word rarity, shelves."""

    clues: Mapping[str, Sequence[int]]      # card value -> product positions holding it
    clue_words: Mapping[str, tuple[str, ...]]   # card value -> its distinct words, sorted
    shelf_sizes: Mapping[str, int]          # shelf key (coarse category) -> products on it
    default_idf: float                      # rarity of a word the catalog never uses

    def idf_of(self, tok: str) -> float:
        """Rarity (inverse document frequency) of a card-value word."""
        ...

    # Optional: `clue_postings()` -> what `grounding.clues.clue_postings` computes from `clue_words`
    # (or None), so that a vocabulary that stores it spares the clue index that work at every start.
    # Optional: `clue_list()` -> `sorted(clues)` (or None), for the same reason.
    # Optional: `text_df(word)` -> how many products' full text holds the word (by its stem): a word typed that
    # the catalog's text holds is not read as a slip of a title word of its length (`grounding.slips.held_word`).
