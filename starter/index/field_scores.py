"""The people model's full-text numbers, from the posting arrays: BM25 per field group and the share of
the query's words each product holds.

A people conversation's query is cumulative: each turn asks again every word said before, plus the new
ones, under four field groups.  Each word's BM25 term per field group is memoised (bounded by postings
held), and so are the last few queries' sums: a query that extends one of them starts from that sum and
adds only the new words, in the same order, so every float is the one a full sum gives.
"""
from __future__ import annotations

import sqlite3
from collections import OrderedDict

import numpy as np

from starter.index.postings import PostingScorer, bm25_terms, evicted

Key = tuple[str, str, tuple[tuple[float, ...], ...], tuple[str, ...]]     # (kind, table, weight sets, words)


class FieldScorer:
    """BM25 per field group and coverage over one `PostingScorer`'s memoised counts."""

    def __init__(self, postings: PostingScorer, max_sums: int) -> None:
        self.postings = postings
        self.max_sums = max_sums
        # (table, the phrase's terms, column weights) -> (rows holding it, its BM25 term in each)
        self._terms: OrderedDict[tuple[str, tuple[str, ...], tuple[float, ...]],
                                 tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self.held = 0
        # (kind, table, weight sets, query words) -> each weight set's sums (read-only)
        self._sums: OrderedDict[Key, list[np.ndarray]] = OrderedDict()

    def scores(self, table: str, weight_sets: list[tuple[float, ...]], words: list[str]) -> list[np.ndarray] | None:
        """Every row's BM25 for the OR query of `words` under each of `weight_sets` (per-column weights);
        None when the arrays cannot answer (a word that is no token at all, or the arrays turned off).
        The arrays are read-only (remembered for the next query)."""
        return self._summed("bm25", table, weight_sets, words)

    def coverage(self, table: str, weight_sets: list[tuple[float, ...]], words: list[str]) -> list[np.ndarray] | None:
        """How many of `words` each row holds in the columns each of `weight_sets` weighs; None as `scores`."""
        return self._summed("held", table, weight_sets, words)

    def _summed(self, kind: str, table: str, weight_sets: list[tuple[float, ...]],
                words: list[str]) -> list[np.ndarray] | None:
        """Each row's sum over the query's phrases of its BM25 term ("bm25") or of 1 where it holds the
        phrase ("held"), under each weight set; a remembered query the words extend is the start."""
        phrases = self._phrases(table, words)
        if phrases is None:
            return None
        key: Key = (kind, table, tuple(weight_sets), tuple(words))
        start, out = self._longest_prefix(key)
        if start == len(phrases):
            return out
        try:
            for terms in phrases[start:]:
                for acc, weights in zip(out, weight_sets):
                    docs, values = self._term(table, terms, weights)
                    if kind == "held":
                        acc[docs[values > 0]] += 1.0
                    elif len(docs):
                        acc[docs] += values
        except (sqlite3.Error, ValueError, IndexError) as exc:
            return self.postings.turn_off(table, exc)
        self._remember(key, out)
        return out

    def _phrases(self, table: str, words: list[str]) -> list[tuple[str, ...]] | None:
        p = self.postings
        if not p.enabled or table not in p.columns or not words:
            return None
        try:
            p.row_lengths(table)                    # first: it also makes the tables `terms_of` reads
            phrases = [p.terms_of(table, word) for word in words]
        except (sqlite3.Error, ValueError, IndexError) as exc:
            return self.postings.turn_off(table, exc)
        return phrases if all(phrases) else None

    def _longest_prefix(self, key: Key) -> tuple[int, list[np.ndarray]]:
        """How many of the query's words a remembered sum covers, and that sum: itself (read-only) when it
        covers them all, else a copy to add to (zeros when none)."""
        kind, table, weight_sets, words = key
        for n in range(len(words), 0, -1):
            got = self._sums.get((kind, table, weight_sets, words[:n]))
            if got is not None:
                self._sums.move_to_end((kind, table, weight_sets, words[:n]))
                return n, got if n == len(words) else [a.copy() for a in got]
        rows = len(self.postings.row_lengths(table)[0])
        return 0, [np.zeros(rows, dtype=np.float64) for _ in weight_sets]

    def _remember(self, key: Key, out: list[np.ndarray]) -> None:
        """Keep the query's sums (made read-only: they are handed out as they are) for the next query."""
        for a in out:
            a.flags.writeable = False
        if self.max_sums <= 0:
            return
        self._sums[key] = out                                # a new key: it goes in last
        while len(self._sums) > self.max_sums:
            self._sums.popitem(last=False)

    def _term(self, table: str, terms: tuple[str, ...], weights: tuple[float, ...]
              ) -> tuple[np.ndarray, np.ndarray]:
        """The rows holding the phrase and its BM25 term in each under `weights` (memoised, bounded)."""
        key = (table, terms, weights)
        got = self._terms.get(key)
        if got is not None:
            self._terms.move_to_end(key)
            return got
        docs, counts = self.postings.phrase_counts(table, terms)
        values = np.zeros(0)
        if len(docs):
            lengths, rows, mean_length = self.postings.row_lengths(table)
            values = bm25_terms(counts @ np.asarray(weights, dtype=np.float64), lengths[docs], rows, mean_length)
        got = (docs, values)
        self._terms[key] = got
        self.held = evicted(self._terms, self.held + len(docs), self.postings.max_postings)
        return got
