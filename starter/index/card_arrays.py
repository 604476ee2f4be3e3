"""Every product's card as arrays: value ids by card position, type pattern, shelf, twin positions.

The template turn predicts, for each candidate, which card values the shopper
would reveal (`tests.shopper_model` states the rule per product).  That
prediction depends on the candidate only through its card's value ids, its
pattern of value types and which positions are disclosed, so over arrays it
is a table lookup and a gather per turn instead of a Python call per
candidate (at a million products a pool holds up to 18,000 of them).  The
plan table gives, per (type pattern, disclosed positions, reply attribute),
the card positions rule 4 reveals, worked out for every pattern at once when
the index is made.  Every card has one extra position past its end that holds
no value (`NO_VALUE`) and discloses nothing: "no value revealed" is that
position, so no lookup needs a mask.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Callable, Mapping

import numpy as np

from contest import messages
from contest.card import CARD_SIZE
from contest.rules import ALLOWED_ATTRIBUTES
from grounding.words import FILLER
from starter.settings import QUESTION_ATTRIBUTES
from starter.index.product_table import ProductColumns

# Reply attributes (`messages.reply_attribute` maps every asked attribute onto one of these): the
# question attributes first, so a turn's question columns are one slice of the plan.
REPLY_ATTRIBUTES: tuple[str, ...] = tuple(dict.fromkeys(
    [messages.reply_attribute(a) for a in QUESTION_ATTRIBUTES] + list(ALLOWED_ATTRIBUTES)))
REPLY_COLUMN: dict[str, int] = {a: k for k, a in enumerate(REPLY_ATTRIBUTES)}
QUESTION_COLUMNS = slice(0, len(QUESTION_ATTRIBUTES))
assert REPLY_ATTRIBUTES[QUESTION_COLUMNS] == tuple(messages.reply_attribute(a) for a in QUESTION_ATTRIBUTES)
NO_VALUE = -1


@dataclass(frozen=True)
class ValueWords:
    """Each distinct card value's content words (`similarity._tok_words` as a set), as ids into the
    sorted word list `vocabulary` (every card value word but FILLER), ascending: value k's words are
    `ids[offsets[k]:offsets[k + 1]]`.  Stored with the index, so no turn tokenises a card value."""

    vocabulary: list[str]
    offsets: np.ndarray        # int64, one more than there are values
    ids: np.ndarray            # int32


def vocabulary_of(df: Mapping[str, int]) -> list[str]:
    """The words a card value's similarity reads, sorted: those of `df` (every card value word) but FILLER."""
    return sorted(w for w in df if w not in FILLER)


def value_words_of(values: list[str], clue_words: Mapping[str, tuple[str, ...]], df: Mapping[str, int]) -> ValueWords:
    """The words of every value, from the build's `clue_words` (each value's words, sorted, once each)."""
    vocabulary = vocabulary_of(df)
    word_id = {w: k for k, w in enumerate(vocabulary)}
    ids: list[int] = []
    offsets = [0]
    for v in values:
        ids.extend([word_id[w] for w in clue_words[v] if w in word_id])
        offsets.append(len(ids))
    return ValueWords(vocabulary, np.asarray(offsets, dtype=np.int64), np.asarray(ids, dtype=np.int32))


def store_value_words(db: sqlite3.Connection, words: ValueWords) -> None:
    """The words as arrays and the vocabulary as one text (its words are tokens: no line breaks)."""
    db.execute("CREATE TABLE value_words (name TEXT PRIMARY KEY, data BLOB)")
    db.executemany("INSERT INTO value_words VALUES (?, ?)", [
        ("offsets", words.offsets.astype("<i8").tobytes()), ("ids", words.ids.astype("<i4").tobytes()),
        ("vocabulary", "\n".join(words.vocabulary).encode("utf-8"))])


def load_value_words(db: sqlite3.Connection) -> ValueWords:
    arrays = dict(db.execute("SELECT name, data FROM value_words"))
    text = arrays["vocabulary"].decode("utf-8")
    return ValueWords(text.split("\n") if text else [], np.frombuffer(arrays["offsets"], dtype="<i8"),
                      np.frombuffer(arrays["ids"], dtype="<i4"))


class CardArrays:
    """Per product: card value ids by position, then one `NO_VALUE` position (`values`); the positions
    holding the same value as each position (`twins`, a bit mask: disclosing a value discloses its
    twin, as the membership test of rule 4 does; 0 for the empty position); the type pattern id and
    the shelf id."""

    def __init__(self, cols: ProductColumns, words: ValueWords, idf_of: Callable[[str], float]) -> None:
        n = len(cols.card_offsets) - 1
        starts = cols.card_offsets[:-1]
        lengths = np.diff(cols.card_offsets)
        width = int(lengths.max()) if n else 0
        if width > CARD_SIZE:
            raise ValueError(f"a card holds {width} values; at most {CARD_SIZE} are expected")
        self.width = width
        self.none = width                     # the position that holds no value
        values = np.full((n, width + 1), NO_VALUE, dtype=np.int64)
        for j in range(width):
            has = lengths > j
            values[has, j] = cols.card_values[starts[has] + j]
        self.values = values
        self.lengths = lengths.astype(np.int64)
        twins = np.zeros((n, width + 1), dtype=np.uint8)
        for j in range(width):
            for k in range(width):
                twins[:, j] |= ((values[:, j] == values[:, k]) & (values[:, j] != NO_VALUE)).astype(np.uint8) << k
        self.twins = twins
        self.pattern = cols.types.astype(np.int64)
        self.patterns = cols.type_patterns
        self.shelf = cols.shelf.astype(np.int64)
        self.shelves = cols.shelves
        self.shelf_id: dict[str, int] = {s: k for k, s in enumerate(cols.shelves)}
        self.value_text = cols.values
        self.value_count = len(cols.values)
        # Row key pattern << width | mask -> (reply attribute, 2) positions revealed.
        self._plan = _plan_table(cols.type_patterns, width)
        self._values_flat = values.reshape(-1)
        self._twins_flat = twins.reshape(-1)
        if len(words.offsets) != len(cols.values) + 1:
            raise ValueError("value words disagree with the card values in number")
        self.words = words
        self.word_idf = np.asarray([idf_of(w) for w in words.vocabulary], dtype=np.float64)

    def revealed(self, ids: np.ndarray, masks: np.ndarray, column: int | slice) -> tuple[np.ndarray, np.ndarray]:
        """(positions, value ids) revealed per candidate: for one reply column (n, 2), or for a slice
        of them (n, k, 2).  Nothing revealed: position `none`, value `NO_VALUE`."""
        positions = np.take(self._plan, self.pattern[ids] << self.width | masks, axis=0)[:, column]
        base = ids * (self.width + 1)
        at = positions + (base[:, None] if positions.ndim == 2 else base[:, None, None])
        return positions, self._values_flat[at]

    def disclose(self, ids: np.ndarray, masks: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """The masks with the values at `positions` (n, k) and their twins disclosed."""
        at = positions + (ids * (self.width + 1))[:, None]
        out = masks | self._twins_flat[at[:, 0]]
        for s in range(1, positions.shape[1]):
            out |= self._twins_flat[at[:, s]]
        return out

    def pair_codes(self, value_ids: np.ndarray) -> np.ndarray:
        """One int64 per revealed pair of value ids (`NO_VALUE` included), equal iff the pairs are equal;
        the pair of no values is 0."""
        return (value_ids[..., 0] + 1) * (self.value_count + 1) + (value_ids[..., 1] + 1)

    def split_codes(self, codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The (first, second) value ids of pair codes (`NO_VALUE` where none): `pair_codes` undone."""
        first, second = np.divmod(codes, self.value_count + 1)
        return first - 1, second - 1


def _plan_table(patterns: list[tuple[str, ...]], width: int) -> np.ndarray:
    """Rule 4 for every type pattern, disclosed mask and reply attribute, at once: the first two
    undisclosed positions of the attribute's type, in card order (of any type for `other`); `width`
    (the empty position) where there are fewer.  Row key: pattern << width | mask."""
    kinds = {t: k for k, t in enumerate(sorted({t for p in patterns for t in p}))}
    types = np.full((len(patterns), width), -1, dtype=np.int64)
    for k, p in enumerate(patterns):
        types[k, :len(p)] = [kinds[t] for t in p]
    plan = np.full((len(patterns), 1 << width, len(REPLY_ATTRIBUTES), messages.VALUES_PER_REPLY), width, dtype=np.int64)
    bits = np.arange(width)
    for mask in range(1 << width):
        undisclosed = (types >= 0) & ((mask >> bits) & 1 == 0)
        for col, attribute in enumerate(REPLY_ATTRIBUTES):
            eligible = undisclosed if attribute == "other" else undisclosed & (types == kinds.get(attribute, -2))
            count = np.cumsum(eligible, axis=1)
            for s in range(messages.VALUES_PER_REPLY):
                hit = eligible & (count == s + 1)
                has = hit.any(axis=1)
                plan[has, mask, col, s] = hit.argmax(axis=1)[has]
    return plan.reshape(-1, len(REPLY_ATTRIBUTES), messages.VALUES_PER_REPLY)
