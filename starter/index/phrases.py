"""Which products hold a phrase: words said one right after the other, at consecutive positions of a field.

BM25 scores words one by one, so "tank top" matches a top whose bullets mention a tank as well as it
matches a tank top.  FTS5 answers a phrase query from its position lists (about a millisecond; a few for
a phrase in a fifth of the catalog), porter-stemmed as the people path's table is, so "tank tops" finds
"Tank Top".  Answers are memoised (least recently used dropped past a number of rowids held): a
conversation re-asks last turn's phrases on every turn.
"""
from __future__ import annotations

import logging
import sqlite3
from collections import OrderedDict

import numpy as np

from starter.index.fts_tables import fts_phrase

log = logging.getLogger(__name__)


class PhraseRows:
    """Products (rowids, which are product indexes) holding a phrase in some field of the people path's table."""

    def __init__(self, db: sqlite3.Connection, memo_rows: int, table: str = "full") -> None:
        self.db = db
        self.table = table
        self.memo_rows = memo_rows
        self.held = 0                           # rowids the memo holds
        self._memo: OrderedDict[tuple[str, ...], np.ndarray] = OrderedDict()

    def rows(self, words: tuple[str, ...]) -> np.ndarray:
        """Sorted rowids (int64) of the products that hold `words` as a phrase in one field."""
        got = self._memo.get(words)
        if got is not None:
            self._memo.move_to_end(words)
            return got
        query = fts_phrase(" ".join(words))
        try:
            found = [r for r, in self.db.execute(f"SELECT rowid FROM {self.table} WHERE {self.table} MATCH ? "
                                                  "ORDER BY rowid", (query,))]
        except sqlite3.Error as exc:           # odd text never breaks a turn: no product holds it
            log.warning("phrase query %r failed: %s", query, exc)
            found = []
        got = np.asarray(found, dtype=np.int64)
        self._memo[words] = got
        self.held += len(got)
        while self.held > self.memo_rows and len(self._memo) > 1:      # least recently used first
            self.held -= len(self._memo.popitem(last=False)[1])
        return got
