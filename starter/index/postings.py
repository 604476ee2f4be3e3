"""FTS5's BM25, computed from cached posting arrays: the same ranking as the SQL query, faster.

Free-text turns ask SQLite for an OR query of up to 40 words, ranked by
`bm25()`.  FTS5 scores every matching row by calling its ranking function per
row, about a microsecond per posting: 30-120 ms a query for the cumulative
queries of people sessions and word salads, most of a turn.  People repeat
themselves (a cumulative query re-asks last turn's words), so this module
keeps each word's postings -- for every product holding it, its
column-weighted frequency -- as arrays, read once (from the counts the build
stored, `term_counts`; from FTS5's own `fts5vocab` view for a phrase of several
terms or an index built without them), and scores a query with array
arithmetic.

It reproduces FTS5's bm25 exactly (sqlite's fts5_aux.c: k1 = 1.2, b = 0.75,
IDF floored at 1e-6, row length = tokens in all columns), adding the phrases'
terms in query order, so the floats, and therefore the order and its ties
(score, then rowid), are the same: tests compare both engines query by query
(6,000 random queries were equal in a one-off check).  A word FTS5 reads as
several tokens ("3.5" is the phrase "3" "5") is matched by position, as FTS5
matches a phrase.  The caller runs the SQL query when `match` says None: a
word that is no token at all, column weights whose sums are not exact in binary
floating point, or a cold query whose postings would cost more to read than
its SQL query (`load_share`).
"""
from __future__ import annotations

import logging
import math
import sqlite3
from collections import OrderedDict
from typing import Callable

import numpy as np

from grounding.topk import best_first
from starter.index.arrays import runs
from starter.index.term_counts import COLUMN_BITS, has_term_counts, read_term_counts

log = logging.getLogger(__name__)

# FTS5's bm25 constants (sqlite ext/fts5/fts5_aux.c).
K1 = 1.2
B = 0.75
# An instance is packed as ((row << 4 | column) << 32 | token offset): up to 16 columns, 2^27 rows.
_COLUMN_BITS = COLUMN_BITS
_OFFSET_BITS = 32


def evicted(cache: OrderedDict, held: int, limit: int) -> int:
    """Drop the least recently used entries of `cache` (each a (rows, ...) pair) until it holds at most
    `limit` postings or one entry; returns the postings it still holds."""
    while held > limit and len(cache) > 1:
        _, (old, _) = cache.popitem(last=False)
        held -= len(old)
    return held


class PostingScorer:
    """BM25 over FTS5 tables from memoised posting arrays (`match`); None when only SQL is exact."""

    def __init__(self, db: sqlite3.Connection, columns: dict[str, tuple[str, ...]], tokenizers: dict[str, str],
                 doc_frequency: Callable[[str, str], int], max_postings: int, max_words: int, load_share: float,
                 enabled: bool = True) -> None:
        self.db = db
        self.columns = columns
        self.tokenizers = tokenizers
        self.doc_frequency = doc_frequency
        self.max_postings = max_postings
        self.max_words = max_words
        self.load_share = load_share
        self.enabled = enabled
        self._lengths: dict[str, tuple[np.ndarray, int, float]] = {}     # table -> (row lengths, rows, mean length)
        self._terms: dict[tuple[str, str], tuple[str, ...]] = {}
        # (table, the phrase's terms, column weights) -> (rows holding it, its bm25 term in each)
        self._postings: OrderedDict[tuple[str, tuple[str, ...], tuple[float, ...]], tuple[np.ndarray, np.ndarray]] = \
            OrderedDict()
        self.held = 0                  # postings held in `_postings`
        # (table, the phrase's terms) -> (rows holding it, its count per column in each): the people model's
        self._counts: OrderedDict[tuple[str, tuple[str, ...]], tuple[np.ndarray, np.ndarray]] = OrderedDict()
        self.counted = 0
        self._stored: bool | None = None     # whether the index stores each term's counts (read once)

    # ---- the query ----------------------------------------------------------------
    def match(self, table: str, weights: tuple[float, ...], words: list[str],
              limit: int) -> list[tuple[int, float]] | None:
        """(rowid, score) best first (tie: rowid), as `SELECT rowid, -bm25(...) ... ORDER BY bm25, rowid
        LIMIT limit` for the OR query of `words` would give; None when that query must answer."""
        if not self.enabled or table not in self.columns or not words or not _exact_sums(weights):
            return None
        try:
            lengths, _, _ = self.row_lengths(table)
            phrases = [self.terms_of(table, word) for word in words]
            if not all(phrases):
                return None            # a word FTS5 reads as no token at all
            if not self._warm_enough(table, words, phrases, weights):
                return None
            parts = [self._phrase_scores(table, terms, weights) for terms in phrases]
        except (sqlite3.Error, ValueError, IndexError) as exc:    # never worse than the SQL query
            return self.turn_off(table, exc)
        score, matched = _summed(parts, len(lengths), weights)
        return _best(np.flatnonzero(matched), score, limit)

    def turn_off(self, table: str, exc: Exception) -> None:
        """The arrays failed to read `table`: one warning, and SQL answers every query from now on."""
        log.warning("array BM25 on %s failed (%s); SQL answers every query from now on", table, exc)
        self.enabled = False
        return None

    def _warm_enough(self, table: str, words: list[str], phrases: list[tuple[str, ...]],
                     weights: tuple[float, ...]) -> bool:
        """Whether the phrases not yet read cost at most `load_share` x the table's rows to read.  A
        phrase read through `fts5vocab` costs about what the SQL query does at 50,000 rows, so a cold
        query of 40 common words would cost twice the SQL query: past the budget, SQL answers this time
        and the first phrases that fit are read.  A single term the build stored costs nothing."""
        budget = self.load_share * self.row_lengths(table)[1]
        cold = [(word, terms) for word, terms in zip(words, phrases)
                if (table, terms, weights) not in self._postings and not self._is_stored(terms)]
        if sum(self.doc_frequency(table, word) for word, _ in cold) <= budget:
            return True
        spent = 0
        for word, terms in cold:
            rows = self.doc_frequency(table, word)
            if spent + rows <= budget:
                self._phrase_scores(table, terms, weights)
                spent += rows
        return False

    def _is_stored(self, terms: tuple[str, ...]) -> bool:
        """Whether the phrase's instances come from the build's stored term counts (single terms)."""
        if self._stored is None:
            self._stored = has_term_counts(self.db)
        return self._stored and len(terms) == 1

    def phrase_counts(self, table: str, terms: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """The rows holding the phrase and its count in each column of each (least recently used dropped
        beyond `max_postings` rows)."""
        key = (table, terms)
        got = self._counts.get(key)
        if got is not None:
            self._counts.move_to_end(key)
            return got
        found = self._instances(table, terms)
        width = len(self.columns[table])
        if found is None:
            got = (np.zeros(0, dtype=np.int64), np.zeros((0, width)))
        else:
            docs, per_doc, column, counts = found
            matrix = np.zeros((len(docs), width), dtype=np.float64)
            matrix[np.repeat(np.arange(len(docs)), per_doc), column] = counts
            got = (docs, matrix)
        self._counts[key] = got
        self.counted = evicted(self._counts, self.counted + len(got[0]), self.max_postings)
        return got

    # ---- what it reads once ---------------------------------------------------------
    def row_lengths(self, table: str) -> tuple[np.ndarray, int, float]:
        """Each row's length in tokens (all columns), the row count and the mean length: as the build
        stored them (`store_row_lengths`), else read from FTS5's docsize table."""
        got = self._lengths.get(table)
        if got is None:
            got = self._lengths[table] = read_row_lengths(self.db, table) or row_lengths(self.db, table)
            self._vocabulary_tables(table)
        return got

    def _vocabulary_tables(self, table: str) -> None:
        """fts5vocab views of the table's index and of a scratch table with its tokenizer (temp schema:
        the index itself may be opened read-only)."""
        self.db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_postings "
                        f"USING fts5vocab(main, '{table}', 'instance')")
        self.db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_words "
                        f"USING fts5(word, tokenize='{self.tokenizers[table]}')")
        self.db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_word_terms "
                        f"USING fts5vocab(temp, '{table}_words', 'instance')")

    def terms_of(self, table: str, word: str) -> tuple[str, ...]:
        """The terms FTS5's tokenizer makes of the word (stemmed for a porter table): its own tokenizer
        reads it in a scratch table, so no tokenizer is imitated.  Memoised (bounded)."""
        key = (table, word)
        got = self._terms.get(key)
        if got is None:
            self.db.execute(f"INSERT INTO temp.{table}_words(rowid, word) VALUES (1, ?)", (word,))
            try:
                got = tuple(r[0] for r in self.db.execute(
                    f"SELECT term FROM temp.{table}_word_terms ORDER BY offset"))
            finally:
                self.db.execute(f"DELETE FROM temp.{table}_words WHERE rowid = 1")
            if len(self._terms) >= self.max_words:
                self._terms.clear()
            self._terms[key] = got
        return got

    def _phrase_scores(self, table: str, terms: tuple[str, ...], weights: tuple[float, ...]
                       ) -> tuple[np.ndarray, np.ndarray]:
        """The rows holding the phrase (one term, or several at consecutive positions of one column:
        "3.5" is "3" then "5") and the phrase's bm25 score in each (it depends on the phrase, the row
        and the weights only; a query adds them up); least recently used dropped beyond `max_postings`."""
        key = (table, terms, weights)
        got = self._postings.get(key)
        if got is not None:
            self._postings.move_to_end(key)
            return got
        lengths, rows, mean_length = self.row_lengths(table)
        found = self._instances(table, terms)
        if found is None:
            got = (np.zeros(0, dtype=np.int32), np.zeros(0))
        else:
            docs, per_doc, column, counts = found
            # Exact: every weight x count and every sum is a binary fraction (`_exact_sums`), so the
            # order bm25 adds a phrase's instances in does not matter.
            freq = np.bincount(np.repeat(np.arange(len(docs)), per_doc),
                               weights=np.array(weights, dtype=np.float64)[column] * counts, minlength=len(docs))
            got = (docs.astype(np.int32), bm25_terms(freq, lengths[docs], rows, mean_length))
        self._postings[key] = got
        self.held = evicted(self._postings, self.held + len(got[0]), self.max_postings)
        return got

    def _instances(self, table: str, terms: tuple[str, ...]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """The phrase's instances (one term, or several at consecutive positions of one column: "3.5" is
        "3" then "5") by row and column: (rows, columns per row, each (row, column)'s column and count),
        sorted; None when no row holds it."""
        if self._is_stored(terms):
            places, counts = read_term_counts(self.db, table, terms[0])
            if not len(places):
                return None
            docs, per_doc = runs(places >> _COLUMN_BITS)
            return docs, per_doc, places & ((1 << _COLUMN_BITS) - 1), counts
        starts = self._positions(table, terms[0])
        for k, term in enumerate(terms[1:], 1):
            starts = np.intersect1d(starts, self._positions(table, term) - k, assume_unique=True)
        if not len(starts):
            return None
        places, counts = runs(starts >> _OFFSET_BITS)          # (row, column), sorted
        docs, per_doc = runs(places >> _COLUMN_BITS)
        return docs, per_doc, places & ((1 << _COLUMN_BITS) - 1), counts

    def _positions(self, table: str, term: str) -> np.ndarray:
        """Every instance of the term in the index, packed as (row, column, token offset), sorted."""
        cases = " ".join(f"WHEN '{c}' THEN {k}" for k, c in enumerate(self.columns[table]))
        packed, = self.db.execute(
            f"SELECT group_concat(((doc << {_COLUMN_BITS}) + CASE col {cases} END) << {_OFFSET_BITS} | offset) "
            f"FROM temp.{table}_postings WHERE term = ?", (term,)).fetchone()
        if not packed:
            return np.zeros(0, dtype=np.int64)
        got = np.fromstring(packed, dtype=np.int64, sep=",")
        return got if bool(np.all(got[1:] > got[:-1])) else np.unique(got)    # FTS5 lists them in order


def bm25_terms(freq: np.ndarray, lengths: np.ndarray, rows: int, mean_length: float) -> np.ndarray:
    """One phrase's bm25 term in each row holding it, from its column-weighted frequency and the rows'
    lengths: fts5_aux.c's expression, operation for operation (IDF from the rows holding it, bm25's
    nHit, floored at 1e-6)."""
    hits = len(freq)
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    if idf <= 0.0:
        idf = 1e-6
    return idf * ((freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * lengths / mean_length)))


def _summed(parts: list[tuple[np.ndarray, np.ndarray]], rows: int,
            weights: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's score, and which rows the query matched.  bincount adds each row's phrase scores one
    by one in the order given, the query's phrase order: bm25's own sum, float for float (a row a
    phrase misses gets nothing, bm25 adds 0.0)."""
    docs = np.concatenate([d for d, _ in parts])
    score = np.bincount(docs, weights=np.concatenate([c for _, c in parts]), minlength=rows)
    matched = np.bincount(docs, minlength=rows) > 0 if min(weights) <= 0 else score > 0
    return score, matched


def _best(candidates: np.ndarray, score: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """The `limit` best (score descending, rowid ascending) of the matched rows."""
    scores = score[candidates]
    return [(int(candidates[k]), float(scores[k])) for k in best_first(candidates, scores, limit)]


def row_lengths(db: sqlite3.Connection, table: str) -> tuple[np.ndarray, int, float]:
    """Each row's length in tokens (all columns; by rowid), the row count and the mean length, from
    FTS5's docsize table (as bm25 reads them: xColumnSize(-1), xRowCount, xColumnTotalSize(-1))."""
    lengths, count, total = _length_parts(db, table)
    return lengths, count, _mean(total, count)


def _length_parts(db: sqlite3.Connection, table: str, chunk: int = 100_000) -> tuple[np.ndarray, int, int]:
    """(lengths by rowid, rows, total tokens), reading the docsize rows `chunk` at a time (all at once,
    a million rows' tuples and decoding arrays cost the filling process 280 MB)."""
    cursor = db.execute(f"SELECT id, sz FROM {table}_docsize")
    id_parts: list[np.ndarray] = []
    length_parts: list[np.ndarray] = []
    while sizes := cursor.fetchmany(chunk):
        id_parts.append(np.fromiter((rid for rid, _ in sizes), dtype=np.int64, count=len(sizes)))
        length_parts.append(_varint_sums([blob for _, blob in sizes]))
    ids = np.concatenate(id_parts) if id_parts else np.zeros(0, dtype=np.int64)
    per_row = np.concatenate(length_parts) if length_parts else np.zeros(0, dtype=np.int64)
    lengths = np.zeros(int(ids.max()) + 1 if len(ids) else 0)
    lengths[ids] = per_row
    return lengths, len(ids), int(per_row.sum())


def _mean(total: int, count: int) -> float:
    return total / count if count else 1.0


def store_row_lengths(db: sqlite3.Connection, tables: list[str]) -> None:
    """The tables' row lengths, worked out once when the index is built: reading them from the docsize
    table cost the first query of a process 0.35 s per table at 250,000 rows."""
    db.execute("CREATE TABLE fts_row_lengths (name TEXT PRIMARY KEY, lengths BLOB, row_count INTEGER, total INTEGER)")
    for table in tables:
        lengths, count, total = _length_parts(db, table)
        db.execute("INSERT INTO fts_row_lengths VALUES (?, ?, ?, ?)",
                   (table, lengths.astype("<f8").tobytes(), count, total))


def read_row_lengths(db: sqlite3.Connection, table: str) -> tuple[np.ndarray, int, float] | None:
    """What `store_row_lengths` stored for `table` (None for an index without them)."""
    try:
        got = db.execute("SELECT lengths, row_count, total FROM fts_row_lengths WHERE name = ?", (table,)).fetchone()
    except sqlite3.OperationalError:
        return None
    if got is None:
        return None
    blob, count, total = got
    return np.frombuffer(blob, dtype="<f8"), count, _mean(total, count)


def _exact_sums(weights: tuple[float, ...]) -> bool:
    """Whether sums of weight x count are exact in doubles (multiples of 1/64 below 2^20), so the
    arrays' sums equal bm25's one-instance-at-a-time sums."""
    return all(isinstance(w, (int, float)) and math.isfinite(w) and abs(w) < 2 ** 20 and (w * 64) == int(w * 64)
               for w in weights)


def _varint_sums(blobs: list[bytes]) -> np.ndarray:
    """The sum of the SQLite varints in each blob (FTS5's docsize record: one per column), for all
    blobs at once: a varint is 7 bits a byte, most significant first, ending at a byte below 0x80
    (a column of 2^56 tokens, the 9-byte form, never occurs)."""
    flat = np.frombuffer(b"".join(blobs), dtype=np.uint8).astype(np.int64)
    row = np.repeat(np.arange(len(blobs)), np.fromiter(map(len, blobs), dtype=np.int64, count=len(blobs)))
    ends = np.flatnonzero(flat < 0x80)                     # each varint's last byte
    end_of = ends[np.searchsorted(ends, np.arange(len(flat)))]
    values = (flat & 0x7F) << (7 * (end_of - np.arange(len(flat))))
    return np.bincount(row, weights=values, minlength=len(blobs)).astype(np.int64)
