"""How well predicted card values match the words said: an IDF-weighted F1 over content words.

The template turn compares every candidate's predicted reply with the reply
that came, once per distinct prediction; at a million products that is
thousands of predictions a turn.  `pair_similarities` computes them all at
once over the card values' words stored with the index, float for float as
`value_similarity` computes one.
"""
from __future__ import annotations

from bisect import bisect_left

import numpy as np

from grounding.words import FILLER, tokens
from starter.index.arrays import distinct, member
from starter.index.card_arrays import ValueWords
from starter.index.catalog import CatalogIndex
from starter.settings import SETTINGS
from starter.index.memo import RecentMemo

_TOKSET_CACHE: RecentMemo[str, tuple[str, ...]] = RecentMemo(SETTINGS.index.token_set_cache_entries)
SUBSTRING_SCAN_MAX_WORDS = SETTINGS.index.substring_scan_max_words


def _tok_words(text: str) -> tuple[str, ...]:
    """Content words of a text, once each (cached: card values repeat across turns and products).

    The memo keeps tuples, which the garbage collector stops tracking; a memo of 30,000 frozensets
    made every full collection walk their 460,000 words (about 80 ms, in the middle of some turn)."""
    got = _TOKSET_CACHE.get(text)
    if got is None:
        got = tuple(dict.fromkeys(t for t in tokens(text) if t not in FILLER))
        _TOKSET_CACHE.put(text, got)
    return got


def _tok_set(text: str) -> frozenset[str]:
    """Content words of a text, as a set."""
    return frozenset(_tok_words(text))


def value_similarity(index: CatalogIndex, predicted: tuple[str, ...] | list[str], said: frozenset[str]) -> float:
    """IDF-weighted F1 between the predicted values' words and the words said."""
    if said and not _may_share(predicted, said):
        return 0.0                     # no word in common (what the full computation finds, cheaply)
    if len(predicted) == 1:
        pred = _tok_set(predicted[0])
    else:
        pred = frozenset().union(*(_tok_words(v) for v in predicted)) if predicted else frozenset()
    if not pred and not said:
        return 1.0
    if not pred or not said:
        return 0.0
    common = pred & said
    if not common:
        return 0.0
    matched = index.weight(common)
    recall = matched / index.weight(pred)
    precision = matched / index.weight(said)
    return 2 * recall * precision / (recall + precision)


def _may_share(values: tuple[str, ...] | list[str], said: frozenset[str]) -> bool:
    """Whether a said word may be a word of the values.  Every token of a text is a substring of its
    lower-cased form (`grounding.words.tokens`), so a said word found in no value's lower-cased text
    is in none of their token sets: False proves the sets are disjoint, without tokenising.  A long
    message (a pasted list, a word salad) is checked against the values' (memoised) words instead:
    one scan per said word per value costs more than tokenising once.  Either way, False only when
    the sets are disjoint, where the full computation gives 0.0 too."""
    if len(said) > SUBSTRING_SCAN_MAX_WORDS:
        return any(not said.isdisjoint(_tok_words(value)) for value in values)
    for value in values:
        low = value.lower()
        for word in said:
            if word in low:
                return True
    return False


def pair_similarities(index: CatalogIndex, first: np.ndarray, second: np.ndarray,
                      said: frozenset[str]) -> np.ndarray:
    """`value_similarity` of each predicted pair (card value ids `first`, `second`; negative: no value)
    against `said`, over the index's value words (`starter.index.card_arrays.ValueWords`), float for float: each
    pair's words once (the union of its values' words), weights added in sorted word order as
    `CatalogIndex.weight` adds them."""
    out = np.zeros(len(first), dtype=np.float64)
    if not len(first):
        return out
    cards = index.cards
    if not said:                     # nothing said: 1.0 for a pair with no words either, else 0.0
        offsets = cards.words.offsets
        count = offsets[first + 1] - offsets[first]
        has_second = second >= 0
        count[has_second] += offsets[second[has_second] + 1] - offsets[second[has_second]]
        out[count == 0] = 1.0
        return out
    vocabulary = cards.words.vocabulary
    said_ids = []
    for w in said:
        k = bisect_left(vocabulary, w)
        if k < len(vocabulary) and vocabulary[k] == w:
            said_ids.append(k)
    if not said_ids:
        return out                   # no said word is a card value word: nothing in common
    has_second = second >= 0
    if not has_second.any():         # single values: their own words are distinct, no pass to narrow them
        owner, word = _words_of(cards.words, first)
        return _f1(index, cards.word_idf, owner, word, said_ids, said, out, np.arange(len(first)))
    # Only pairs one of whose values holds a said word can score above 0: found per distinct value first.
    values = distinct(np.concatenate((first, second[has_second])))
    owner, word = _words_of(cards.words, values)
    holds = np.zeros(len(values), dtype=bool)
    holds[owner[member(word, said_ids)]] = True
    may = holds[np.searchsorted(values, first)]
    may[has_second] |= holds[np.searchsorted(values, second[has_second])]
    some = np.flatnonzero(may)
    if not len(some):
        return out
    owner, word = _pair_words(cards.words, first[some], second[some])
    return _f1(index, cards.word_idf, owner, word, said_ids, said, out, some)


def _f1(index: CatalogIndex, word_idf: np.ndarray, owner: np.ndarray, word: np.ndarray, said_ids: list[int],
        said: frozenset[str], out: np.ndarray, at: np.ndarray) -> np.ndarray:
    """`out` with the F1 of each owner's words (in order) against `said` written at `at[owner]`."""
    idf = word_idf[word]
    matched = np.bincount(owner, weights=np.where(member(word, said_ids), idf, 0.0), minlength=len(at))
    some = matched > 0
    if some.any():
        pred = np.bincount(owner, weights=idf, minlength=len(at))
        recall = matched[some] / pred[some]
        precision = matched[some] / index.weight(said)
        out[at[some]] = 2 * recall * precision / (recall + precision)
    return out


def _words_of(words: ValueWords, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position in `values`, word id) for every word of each value, in order (words ascending)."""
    starts = words.offsets[values]
    lengths = words.offsets[values + 1] - starts
    at = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths) + np.repeat(starts, lengths)
    return np.repeat(np.arange(len(values)), lengths), words.ids[at].astype(np.int64)


def _pair_words(words: ValueWords, first: np.ndarray, second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(pair, word id) for every word of each pair's values, each once, sorted by pair then word (a value's
    own words are distinct and ascending, so only pairs of two values need the sort)."""
    pairs, word = _words_of(words, first)
    two = np.flatnonzero(second >= 0)
    if not len(two):
        return pairs, word
    more, more_word = _words_of(words, second[two])
    n_words = max(len(words.vocabulary), 1)
    entries = distinct(np.concatenate((pairs * n_words + word, two[more] * n_words + more_word)))
    return entries // n_words, entries % n_words
