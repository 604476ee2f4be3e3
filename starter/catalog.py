"""The catalog index, built once in `Agent(catalog_path)`.

For every product it replays the protocol's card derivation (the ordered
values the simulated shopper could reveal, each with its `classify` type), so
that the agent can predict, for any candidate, exactly what the shopper would
say.  Around that: coarse shelves, an exact clue index (value -> products), a
token index for fuzzy wording, an SQLite FTS5 BM25 index as the safety net,
and the popularity prior.
"""
from __future__ import annotations

import logging
import math
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grounding.clues import clue_postings
from grounding.words import tokens
from starter.catalog_rows import read_records
from starter.config import Tunables
from starter.fts_tables import FTS_COLUMNS, FTS_TOKENIZERS, FtsFiller, create_tables, unstorable
from starter.index_cache import IndexCache
from starter.postings import PostingScorer

log = logging.getLogger(__name__)
_SEP = "\x1f"


@dataclass(frozen=True, slots=True)
class Product:
    """What the agent keeps of a catalog row (compact on purpose)."""

    idx: int
    pid: str
    title: str
    shelf: str
    price: float | None
    rating_number: int
    average_rating: float
    constraints: tuple[str, ...]   # hard + soft, reveal order
    types: tuple[str, ...]         # classify() of each constraint
    audience: frozenset[str] = frozenset()   # who it is for (grounding.audience), empty if not said


class CatalogError(ValueError):
    """The catalog file is missing, unreadable or has no usable product."""


class _Released(dict):
    """`clue_words` after `release_clue_words`: any lookup says what happened."""

    def __missing__(self, key: str) -> tuple[str, ...]:
        raise LookupError("the card values' words were released once the agent's clue index was built "
                          "(CatalogIndex.release_clue_words); build a Gate on a fresh CatalogIndex")


def _joined(values: tuple[str, ...] | list[str]) -> str:
    """Values as one string for the cache.  Card values, words, types and audiences never hold the
    separator (card values are whitespace-collapsed, and U+001F is whitespace); checked anyway."""
    if any(_SEP in v for v in values):
        raise CatalogError(f"a catalog value holds the separator U+001F: {values!r}")
    return _SEP.join(values)


def _phrase(word: str) -> str:
    """A word as one quoted FTS5 phrase (its quotes doubled), so no text is read as query syntax."""
    return '"' + word.replace('"', '""') + '"'


def _split(text: str) -> tuple[str, ...]:
    return tuple(text.split(_SEP)) if text else ()


def _load(db: sqlite3.Connection) -> tuple[list[Product], dict[str, tuple[str, ...]], dict[str, int]]:
    """Products, clue words (released: the clue index reads its stored postings) and word document
    frequencies from a cached index.

    Streamed row by row; a card value, shelf, type list or audience set that many products share
    is one object (as a million-row catalog would not fit otherwise)."""
    value = {}.setdefault       # card value -> its one string object
    df = dict(db.execute("SELECT word, df FROM word_df"))
    shared: dict[str, object] = {}
    products: list[Product] = []
    append = products.append
    for idx, pid, title, shelf, price, rn, ar, cons, kinds, aud in db.execute(
            "SELECT idx, pid, title, shelf, price, rating_number, average_rating, constraints, types, audience "
            "FROM products ORDER BY idx"):
        if idx != len(products):
            raise sqlite3.DatabaseError("products table out of order")
        k = shared.get(kinds)
        if k is None:
            k = shared[kinds] = _split(kinds)
        a = shared.get("\x1e" + aud)
        if a is None:
            a = shared["\x1e" + aud] = frozenset(_split(aud))
        sh = shared.get("\x1d" + shelf)
        if sh is None:
            sh = shared["\x1d" + shelf] = shelf
        append(Product(idx, pid, title, sh, price, rn, ar, tuple(value(v, v) for v in _split(cons)), k, a))
    return products, _Released(), df     # the clue index reads the stored clue postings instead


def _store_clue_postings(db: sqlite3.Connection, postings: dict[str, list[int]], mass: list[float]) -> None:
    """The clue index's postings and masses, as arrays (int32 positions, float64 masses: the same floats)."""
    db.execute("CREATE TABLE clue_postings (word TEXT PRIMARY KEY, positions BLOB)")
    db.executemany("INSERT INTO clue_postings VALUES (?, ?)",
                   ((w, np.asarray(p, dtype="<i4").tobytes()) for w, p in postings.items()))
    db.execute("CREATE TABLE clue_mass (id INTEGER PRIMARY KEY, mass BLOB)")
    db.execute("INSERT INTO clue_mass VALUES (0, ?)", (np.asarray(mass, dtype="<f8").tobytes(),))


def _read_clue_postings(db: sqlite3.Connection) -> tuple[dict[str, list[int]], list[float]]:
    postings = {w: np.frombuffer(b, dtype="<i4").tolist()
                for w, b in db.execute("SELECT word, positions FROM clue_postings ORDER BY rowid")}
    (blob,) = db.execute("SELECT mass FROM clue_mass WHERE id = 0").fetchone()
    return postings, np.frombuffer(blob, dtype="<f8").tolist()

class CatalogIndex:
    """Products, shelves, clue index, token index, BM25 and priors.

    Implements `grounding.vocabulary.Vocabulary` (clues, clue_words, shelf_sizes, idf_of).  Built
    from the catalog file, or opened from `IndexCache` when a verified build of the same catalog,
    code and tunables is there (`cache_state` says which); both give the same index.
    """

    def __init__(self, catalog_path: str | Path, cfg: Tunables, cache: IndexCache | None = None) -> None:
        path = Path(catalog_path)
        if not path.is_file():
            raise CatalogError(f"catalog not found: {path} (set CATALOG_PATH or put catalog.jsonl in data/)")
        self.path = path
        self.cfg = cfg
        self._weights: dict[frozenset[str], float] = {}
        self._product_tokens: dict[int, tuple[str, ...]] = {}
        self._df_memo: dict[tuple[str, str], int] = {}
        key = cache.key(path, cfg) if cache is not None else None
        opened = cache.open(key) if cache is not None and key is not None else None
        if opened is not None:
            self.db, manifest = opened
            products, clue_words, df = _load(self.db)
            counts = dict(manifest.get("row_counts") or {})
            self.cache_state = "loaded"
            self._derive(products, clue_words, df)
            self._clue_postings: tuple[dict[str, list[int]], list[float]] | None = _read_clue_postings(self.db)
        else:
            target = cache.writable_path(key) if cache is not None and key is not None else None
            self.db = sqlite3.connect(str(target) if target else ":memory:", check_same_thread=False)
            products, clue_words, df, counts = self._build(path)
            self._derive(products, clue_words, df)
            self._clue_postings = clue_postings(sorted(self.clues), clue_words, self.idf_of)
            _store_clue_postings(self.db, *self._clue_postings)
            self.cache_state = "memory"
            if target is not None and cache is not None and key is not None:
                self.db.commit()
                stored = cache.publish(target, key, path, {"row_counts": counts, "products": len(products)})
                self.cache_state = "built" if stored else "memory"
        self.postings = PostingScorer(self.db, FTS_COLUMNS, FTS_TOKENIZERS, self._df, cfg.posting_cache_entries,
                                      cfg.df_cache_entries, cfg.posting_load_share, cfg.bm25_engine == "arrays")
        odd = [f"skipped {n} rows {what}" for what, n in counts.items() if n and not what.startswith("loaded")]
        odd += [f"{n} rows {what}" for what, n in counts.items()
                if n and what.startswith("loaded") and what != "loaded without a numeric price"]
        if odd:
            log.warning("catalog %s: %s", path, "; ".join(odd))

    def _build(self, path: Path) -> tuple[list[Product], dict[str, tuple[str, ...]], dict[str, int], dict[str, int]]:
        """Read the catalog file into products, clue words, word document frequencies and row counts,
        and into the SQLite tables (BM25, products, clue words, frequencies)."""
        cfg = self.cfg
        db = self.db
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        create_tables(db)
        products: list[Product] = []
        seen: set[str] = set()
        counts = {"without a usable parent_asin": 0, "with a duplicate parent_asin": 0,
                  "loaded without a title": 0, "loaded without categories": 0, "loaded without a numeric price": 0}
        filler = FtsFiller(db)      # fills the FTS5 tables in a second thread while rows are read
        records = read_records(path, cfg.max_field_chars, cfg.build_processes, cfg.build_parallel_min_bytes)
        try:
            for rec in records:
                if rec.pid is None:
                    counts["without a usable parent_asin"] += 1
                    continue
                if rec.pid in seen:
                    counts["with a duplicate parent_asin"] += 1
                    continue
                seen.add(rec.pid)
                for what, missing in zip(("loaded without a title", "loaded without categories",
                                          "loaded without a numeric price"), rec.missing):
                    counts[what] += missing
                p = Product(len(products), rec.pid, rec.title, rec.shelf, rec.price, rec.rating_number,
                            rec.average_rating, rec.constraints, rec.types, rec.audience)
                products.append(p)
                filler.add({"docs": (p.idx, *rec.docs), "full": (p.idx, *rec.full)})
            filler.close()
        except ValueError as exc:
            filler.abort()
            if isinstance(exc, UnicodeEncodeError):
                raise CatalogError(unstorable(path)) from None
            raise CatalogError(f"malformed catalog: {exc}") from None
        except BaseException:
            filler.abort()
            raise
        finally:
            records.close()
        if not products:
            raise CatalogError(f"{path}: no product with a parent_asin")
        clue_words: dict[str, tuple[str, ...]] = {}
        df: dict[str, int] = {}       # products whose card values hold the word, for rarity weighting
        for p in products:
            for v in dict.fromkeys(p.constraints):
                words = clue_words.get(v)
                if words is None:
                    words = clue_words[v] = tuple(sorted(set(tokens(v))))
                for tok in words:
                    df[tok] = df.get(tok, 0) + 1
        db.execute("CREATE TABLE products (idx INTEGER PRIMARY KEY, pid TEXT, title TEXT, shelf TEXT, price REAL, "
                   "rating_number INTEGER, average_rating REAL, constraints TEXT, types TEXT, audience TEXT)")
        try:
            db.executemany("INSERT INTO products VALUES (?,?,?,?,?,?,?,?,?,?)",
                           ((p.idx, p.pid, p.title, p.shelf, p.price, p.rating_number, p.average_rating,
                             _joined(p.constraints), _joined(p.types), _joined(sorted(p.audience)))
                            for p in products))
        except UnicodeEncodeError:
            raise CatalogError(unstorable(path)) from None
        db.execute("CREATE TABLE word_df (word TEXT PRIMARY KEY, df INTEGER)")
        db.executemany("INSERT INTO word_df VALUES (?, ?)", df.items())
        return products, clue_words, df, counts

    def _derive(self, products: list[Product], clue_words: dict[str, tuple[str, ...]], df: dict[str, int]) -> None:
        """Everything computed from the products (and the words' document frequencies `df`):
        lookups, shelves, clue postings, priors, rarity."""
        self.products = products
        self.by_pid: dict[str, int] = {p.pid: p.idx for p in products}
        keys = [(-p.rating_number, p.pid) for p in products]
        self.popular: list[int] = sorted(range(len(products)), key=keys.__getitem__)
        # Each product's place in `popular`: sorting by it is sorting by (-rating_number, parent_asin).
        self.popular_place: list[int] = [0] * len(products)
        for k, i in enumerate(self.popular):
            self.popular_place[i] = k
        # Shelves list their products most reviewed first (tie: parent_asin), as `popular` does;
        # the shelves themselves in order of their first product in the catalog.
        first: dict[str, int] = {}
        for p in products:
            first.setdefault(p.shelf, p.idx)
        self.shelves: dict[str, list[int]] = {s: [] for s in first}
        for i in self.popular:
            self.shelves[products[i].shelf].append(i)
        self.shelf_sizes: dict[str, int] = {k: len(v) for k, v in self.shelves.items()}
        self.clues: dict[str, list[int]] = {}
        for p in products:
            for v in dict.fromkeys(p.constraints):
                self.clues.setdefault(v, []).append(p.idx)
        self.clue_words: dict[str, tuple[str, ...]] = clue_words
        self.log_prior: list[float] = [self.cfg.prior_alpha * math.log1p(p.rating_number) for p in products]
        n = len(products)
        self.idf: dict[str, float] = {t: math.log(1.0 + n / (1.0 + c)) for t, c in df.items()}
        self.default_idf = math.log(1.0 + n)

    def release_clue_words(self) -> None:
        """Let the words of every card value and the clue postings go: only the clue index reads them,
        once, when it is built (17 million word strings at a million products).  Called by the agent
        after its gate."""
        self.clue_words = _Released()
        self._clue_postings = None

    def clue_postings(self) -> tuple[dict[str, list[int]], list[float]] | None:
        """What `grounding.clues.clue_postings` computes, stored with the index (None once released)."""
        return self._clue_postings

    # ---- lookups ---------------------------------------------------------------
    def idf_of(self, tok: str) -> float:
        return self.idf.get(tok, self.default_idf)

    def product_tokens(self, idx: int) -> tuple[str, ...]:
        """Every word of a product's title and card values, once each in order (cached per product).

        A tuple, not a frozenset: the garbage collector stops tracking a tuple of strings, while it
        walks every word of every set it holds on each full collection (with 40,000 products' sets
        memoised, a full collection took 90 ms more, in the middle of some turn)."""
        got = self._product_tokens.get(idx)
        if got is None:
            p = self.products[idx]
            got = tuple(dict.fromkeys(tokens(p.title + " " + " ".join(p.constraints))))
            if len(self._product_tokens) < self.cfg.product_tokens_cache_entries:
                self._product_tokens[idx] = got
        return got

    def holds_any(self, idx: int, words: frozenset[str] | set[str]) -> bool:
        """Whether one of `words` is in `product_tokens(idx)`.  Tokens are substrings of the lower-cased
        text, so a cold product none of whose text holds one of a few words is not tokenised."""
        if idx not in self._product_tokens and len(words) <= self.cfg.substring_scan_max_words:
            p = self.products[idx]
            low = (p.title + " " + " ".join(p.constraints)).lower()
            if not any(w in low for w in words):
                return False
        return not words.isdisjoint(self.product_tokens(idx))

    def weight(self, toks: frozenset[str]) -> float:
        """Sum of IDF over a token set (memoised: sets of card-value words repeat; the memo is emptied
        when full, so it holds the sets of recent turns and few enough for the garbage collector)."""
        w = self._weights.get(toks)
        if w is None:
            w = sum(self.idf.get(t, self.default_idf) for t in toks)
            if len(self._weights) >= self.cfg.weight_memo_entries:
                self._weights.clear()
            self._weights[toks] = w
        return w

    def bm25(self, words: list[str], limit: int, shelf: str | None = None) -> list[tuple[int, float]]:
        """(product idx, relevance) for an OR query of `words` over title, category path and card
        values, best first (tie: idx); with `shelf`, only that shelf's products.  The query is the
        first `bm25_max_words` distinct words, less the common ones (`_informative`)."""
        out = self._match("docs", self.cfg.bm25_weights, self._informative("docs", words, self.cfg.bm25_max_words),
                          limit * 4 if shelf else limit)
        if shelf is not None:
            out = [(i, s) for i, s in out if self.products[i].shelf == shelf]
        return out[:limit]

    def fulltext(self, words: list[str], limit: int) -> list[tuple[int, float]]:
        """(product idx, relevance) for an OR query of `words` over every field, porter-stemmed,
        best first (tie: idx).  The query is the first `people_max_words` distinct words, less the
        common ones (`_informative`)."""
        return self._match("full", self.cfg.people_field_weights,
                           self._informative("full", words, self.cfg.people_max_words), limit)

    def _informative(self, table: str, words: list[str], max_words: int) -> list[str]:
        """The first `max_words` distinct words, less those held by more than `common_word_share` of
        the products (unless all are): FTS5's BM25 floors their IDF at 1e-6, so they add almost
        nothing to a score, but each costs a visit to most rows ("shoes" is in every product's
        category path: a word salad naming it made the query score all 50,000)."""
        uniq = list(dict.fromkeys(w for w in words if w))[:max_words]
        cap = self.cfg.common_word_share * len(self.products)
        rare = [w for w in uniq if self._df(table, w) <= cap]
        return rare or uniq

    def _df(self, table: str, word: str) -> int:
        """Products whose text in `table` holds the word (as that table tokenises); memoised, bounded."""
        key = (table, word)
        got = self._df_memo.get(key)
        if got is None:
            try:
                got = int(self.db.execute(f"SELECT COUNT(*) FROM {table} WHERE {table} MATCH ?",
                                          (_phrase(word),)).fetchone()[0])
            except sqlite3.Error:
                got = 0
            if len(self._df_memo) < self.cfg.df_cache_entries:
                self._df_memo[key] = got
        return got

    def _match(self, table: str, weights: tuple[float, ...], words: list[str], limit: int) -> list[tuple[int, float]]:
        """One FTS5 OR query of `words`, ranked by weighted BM25 (tie: rowid): from the posting arrays
        (`starter.postings`, the same floats) when they can answer it exactly, else by SQL."""
        if not words:
            return []
        got = self.postings.match(table, weights, words, limit)
        if got is not None:
            return got
        query = " OR ".join(map(_phrase, words))
        marks = ", ".join("?" * len(weights))
        try:
            rows = self.db.execute(
                f"SELECT rowid, bm25({table}, {marks}) AS s FROM {table} WHERE {table} MATCH ? "
                "ORDER BY s, rowid LIMIT ?", (*weights, query, limit)).fetchall()
        except sqlite3.Error as exc:  # odd text must never break retrieval
            log.warning("%s query failed: %s", table, exc)
            return []
        return [(int(r), -float(s)) for r, s in rows]
