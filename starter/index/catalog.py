"""The catalog index, built once in `Agent(catalog_path)`.

For every product it replays the protocol's card derivation (the ordered
values the simulated shopper could reveal, each with its `classify` type), so
that the agent can predict, for any candidate, exactly what the shopper would
say.  Around that: coarse shelves, an exact clue index (value -> products), a
token index for fuzzy wording, an SQLite FTS5 BM25 index as the safety net,
each product's meaning vector (`meanings`), and the popularity prior.
"""
from __future__ import annotations

import logging
import math
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from grounding.clues import clue_postings
from grounding.words import tokens
from starter.index.catalog_rows import can_fork, read_records
from starter.settings import IndexSettings
from starter.index.fts_tables import (FTS_COLUMNS, FTS_TOKENIZERS, Filler, FtsFiller, ProcessFiller, create_tables,
                                fast_writes, fts_phrase, unstorable)
from starter.index.cache import CacheKey, IndexCache, OpenedIndex, file_sha256
from starter.index.field_scores import FieldScorer
from starter.index.phrases import PhraseRows
from starter.index.postings import PostingScorer
from starter.index.card_arrays import CardArrays, ValueWords, load_value_words, store_value_words, value_words_of
from starter.index.product_table import (ClueLists, ClueWordCounter, Product, ProductColumns, ReleasedClueWords,
                                         collection_paused, columns_of, places, read_clue_postings, shelf_lists,
                                         store_clue_postings)
from starter.index.product_table import load as load_products, store as store_products
from starter.index.meanings import MeaningEncoder, Meanings, built_meanings, load_meanings

log = logging.getLogger(__name__)
__all__ = ["CatalogError", "CatalogIndex", "Product"]


class CatalogError(ValueError):
    """The catalog file is missing, unreadable or has no usable product."""


class CatalogIndex:
    """Products, shelves, clue index, token index, BM25 and priors.

    Implements `grounding.vocabulary.Vocabulary` (clues, clue_words, shelf_sizes, idf_of).  Built
    from the catalog file, or opened from `IndexCache` when a verified build of the same catalog,
    code and tunables is there (`cache_state` says which); both give the same index.
    """

    def __init__(self, catalog_path: str | Path, cfg: IndexSettings, cache: IndexCache | None = None,
                 key: CacheKey | None = None) -> None:
        """`key`: the cache's key for this catalog when the caller has already computed it (it hashes the
        whole file: seconds for a million rows)."""
        with collection_paused():
            self._construct(Path(catalog_path), cfg, cache, key)

    def _construct(self, path: Path, cfg: IndexSettings, cache: IndexCache | None, key: CacheKey | None) -> None:
        if not path.is_file():
            raise CatalogError(f"catalog not found: {path} (set CATALOG_PATH or put catalog.jsonl in data/)")
        self.path = path
        self.cfg = cfg
        self._weights: dict[frozenset[str], float] = {}
        self._product_tokens: dict[int, tuple[str, ...]] = {}
        self._df_memo: dict[tuple[str, str], int] = {}
        counts = None
        if cache is not None:
            guessed = cache.guess(path, cfg) if key is None else None
            if guessed is not None:
                key, counts = self._open_guessed(path, cfg, cache, guessed)
            else:
                key = key or cache.key(path, cfg)
                opened = cache.open(key)
                counts = self._open_cached(opened) if opened is not None else None
                if counts is not None:
                    cache.restamp(key, path)
        if counts is None:
            target = cache.writable_path(key) if cache is not None and key is not None else None
            products, counts = self._build(path, target)
            self.cache_state = "memory"
            if target is not None and cache is not None and key is not None:
                self.db.commit()
                stored = cache.publish(target, key, path, {"row_counts": counts, "products": len(products)})
                self.cache_state = "built" if stored else "memory"
        self.postings = PostingScorer(self.db, FTS_COLUMNS, FTS_TOKENIZERS, self._df, cfg.posting_cache_entries,
                                      cfg.df_cache_entries, cfg.posting_load_share, cfg.bm25_engine == "arrays")
        self.fields = FieldScorer(self.postings, cfg.score_memo_entries)
        self.phrases = PhraseRows(self.db, cfg.phrase_memo_rows)
        odd = [f"skipped {n} rows {what}" for what, n in counts.items() if n and not what.startswith("loaded")]
        odd += [f"{n} rows {what}" for what, n in counts.items()
                if n and what.startswith("loaded") and what != "loaded without a numeric price"]
        if odd:
            log.warning("catalog %s: %s", path, "; ".join(odd))

    def _open_guessed(self, path: Path, cfg: IndexSettings, cache: IndexCache,
                      guessed: CacheKey) -> tuple[CacheKey, dict[str, int] | None]:
        """Load the index `IndexCache.guess` found while the catalog is hashed in a second thread: the
        catalog's key, and the row counts when what was loaded is that key's index (None: build)."""
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="catalog-hash") as pool:
            digest = pool.submit(file_sha256, path)
            opened = cache.open(guessed)
            counts = self._open_cached(opened) if opened is not None else None
            key = cache.key(path, cfg, digest.result())
        if key == guessed:
            return key, counts
        if counts is not None:
            log.warning("catalog %s changed though its size and modification time did not; its index is not used",
                        path)
            self.db.close()
        opened = cache.open(key)       # another stored index may be of this content
        return key, (self._open_cached(opened) if opened is not None else None)

    def _open_cached(self, opened: OpenedIndex) -> dict[str, int] | None:
        """Load the index from a cached file while its checksum is verified; its row counts, or None
        when the checksum does not match (the file is dropped, the caller rebuilds)."""
        failure: Exception | None = None
        try:
            products, cols = load_products(opened.db)
            df = dict(opened.db.execute("SELECT word, df FROM word_df"))
            *postings, order = read_clue_postings(opened.db)
            words = load_value_words(opened.db)
            vectors = load_meanings(opened.db)
        except Exception as exc:   # a damaged file may fail anywhere: the checksum says whether it is damage
            failure = exc
        if not opened.verified():
            return None
        if failure is not None:
            raise failure
        self.db = opened.db
        self.cache_state = "loaded"
        self._derive(products, cols, ReleasedClueWords(), df, words)
        self.meanings = Meanings(vectors, MeaningEncoder())
        self._clue_postings = (postings[0], postings[1])
        self._clue_list = list(map(cols.values.__getitem__, order))
        return dict(opened.manifest.get("row_counts") or {})

    def _build(self, path: Path, target: Path | None) -> tuple[list[Product], dict[str, int]]:
        """Read the catalog file into products and row counts, derive the index from them, and write
        the SQLite tables (BM25, products, frequencies, clue postings) into `target` (a file, or
        memory when None) as `self.db`.  The FTS5 tables are filled beside the read (`fts_tables`)."""
        cfg = self.cfg
        by_process = target is not None and can_fork() and path.stat().st_size >= cfg.build_parallel_min_bytes
        if by_process:
            # forked before this process opens the file
            filler: Filler = ProcessFiller(target, hash_bytes=cfg.fts_hash_bytes)
            self.db = db = sqlite3.connect(str(target), check_same_thread=False)
        else:
            self.db = db = sqlite3.connect(str(target) if target else ":memory:", check_same_thread=False)
            fast_writes(db)
            create_tables(db, cfg.fts_hash_bytes)
            filler = FtsFiller(db)                     # a second thread
        products, counts, clue_words, df, cols = self._read_products(path, filler)
        if by_process:
            fast_writes(db)          # (the file was the filling process's until now)
        try:
            store_products(db, products, cols)
        except UnicodeEncodeError:
            raise CatalogError(unstorable(path)) from None
        except ValueError as exc:
            raise CatalogError(str(exc)) from None
        db.execute("CREATE TABLE word_df (word TEXT PRIMARY KEY, df INTEGER)")
        db.executemany("INSERT INTO word_df VALUES (?, ?)", df.items())
        words = value_words_of(cols.values, clue_words, df)
        store_value_words(db, words)
        # After the products are stored, so the stored columns' buffers are gone before the postings are made
        # (at a million products, 3,717 -> 3,407 MB at the peak).
        self._derive(products, cols, clue_words, df, words)
        order = sorted(range(len(cols.values)), key=cols.values.__getitem__)
        self._clue_list = [cols.values[k] for k in order]
        self._clue_postings = clue_postings(self._clue_list, clue_words, self.idf_of)
        store_clue_postings(db, *self._clue_postings, order)
        self.meanings = built_meanings(db, products)     # last: what the steps above held is freed by now
        return products, counts

    def _read_products(self, path: Path, filler: Filler) -> tuple[list[Product], dict[str, int],
                                                                 dict[str, tuple[str, ...]], dict[str, int],
                                                                 ProductColumns]:
        """The catalog's products (the first row of each parent_asin), the counts of odd rows, and the card
        values' words and frequencies, while `filler` fills the FTS5 tables; any fault aborts the filler."""
        cfg = self.cfg
        products: list[Product] = []
        counter = ClueWordCounter()
        seen: set[str] = set()
        counts = {"without a usable parent_asin": 0, "with a duplicate parent_asin": 0,
                  "loaded without a title": 0, "loaded without categories": 0, "loaded without a numeric price": 0}
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
                            rec.average_rating, rec.constraints, rec.types, rec.audience, rec.store)
                products.append(p)
                counter.add(p.constraints)
                filler.add({"docs": (p.idx, *rec.docs), "full": (p.idx, *rec.full)})
            records.close()
            if not products:
                raise CatalogError(f"{path}: no product with a parent_asin")
            del seen
            # While the FTS5 tables are still being filled (their last batches take about as long).
            clue_words, df = counter.finish()
            cols = columns_of(products)
            filler.close()
        except ValueError as exc:
            filler.abort()
            if isinstance(exc, CatalogError):
                raise
            if isinstance(exc, UnicodeEncodeError):
                raise CatalogError(unstorable(path)) from None
            raise CatalogError(f"malformed catalog: {exc}") from None
        except BaseException:
            filler.abort()
            raise
        finally:
            records.close()
        return products, counts, clue_words, df, cols

    def _derive(self, products: list[Product], cols: ProductColumns, clue_words: dict[str, tuple[str, ...]],
                df: dict[str, int], words: ValueWords) -> None:
        """Everything computed from the products, their columns and the words' document frequencies
        `df`: lookups, shelves, clue lists, priors, rarity."""
        self.products = products
        self.by_pid: dict[str, int] = dict(zip([p.pid for p in products], range(len(products))))
        self.popular: list[int] = cols.popular
        # Each product's place in `popular`: sorting by it is sorting by (-rating_number, parent_asin).
        self.popular_place: list[int] = places(cols.popular)
        self.popular_place_array = np.asarray(self.popular_place, dtype=np.int64)   # for array sorts
        self.shelves: dict[str, list[int]] = shelf_lists(cols)
        self.shelf_sizes: dict[str, int] = {k: len(v) for k, v in self.shelves.items()}
        self.clues: ClueLists = ClueLists(cols)
        self.clue_words: dict[str, tuple[str, ...]] = clue_words
        prior: dict[int, float] = {}       # per rating count (a million products share 25,000 of them)
        for p in products:
            if p.rating_number not in prior:
                prior[p.rating_number] = self.cfg.prior_alpha * math.log1p(p.rating_number)
        self.log_prior: list[float] = [prior[p.rating_number] for p in products]
        self.log_prior_array = np.asarray(self.log_prior, dtype=np.float64)     # the same floats
        n = len(products)
        self.idf: dict[str, float] = {t: math.log(1.0 + n / (1.0 + c)) for t, c in df.items()}
        self.word_df = df              # products whose card values hold the word (brand names are checked against it)
        self.default_idf = math.log(1.0 + n)
        self.cards = CardArrays(cols, words, self.idf_of)

    def release_clue_words(self) -> None:
        """Let the words of every card value and the clue postings go: only the clue index reads them,
        once, when it is built (17 million word strings at a million products).  Called by the agent
        after its gate."""
        self.clue_words = ReleasedClueWords()
        self._clue_postings = None
        self._clue_list = None

    def clue_list(self) -> list[str] | None:
        """The card values sorted (the clue index's order), stored with the index (None once released)."""
        return self._clue_list

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
            got = tuple(dict.fromkeys(tokens(self.products[idx].text)))
            if len(self._product_tokens) < self.cfg.product_tokens_cache_entries:
                self._product_tokens[idx] = got
        return got

    def holds_any(self, idx: int, words: frozenset[str] | set[str]) -> bool:
        """Whether one of `words` is in `product_tokens(idx)`.  Tokens are substrings of the lower-cased
        text, so a cold product none of whose text holds one of a few words is not tokenised."""
        if idx not in self._product_tokens and len(words) <= self.cfg.substring_scan_max_words:
            low = self.products[idx].text.lower()
            if not any(w in low for w in words):
                return False
        return not words.isdisjoint(self.product_tokens(idx))

    def weight(self, toks: frozenset[str]) -> float:
        """Sum of IDF over a token set, in sorted word order: a set's own order follows the words' hashes,
        which change with PYTHONHASHSEED, and so would the sum's last bits (`similarity.pair_similarities`
        adds in the same order).  Memoised: sets of card-value words repeat; the memo is emptied when
        full, so it holds the sets of recent turns and few enough for the garbage collector."""
        w = self._weights.get(toks)
        if w is None:
            w = sum(self.idf.get(t, self.default_idf) for t in sorted(toks))
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

    def fulltext_scores(self, words: list[str], weight_sets: list[tuple[float, ...]]) -> list[np.ndarray]:
        """Every product's porter-stemmed BM25 for an OR query of `words` under each of `weight_sets`
        (per field: title, categories, features, details, store, description); 0 where nothing matches.
        The people model reads one such score per field group."""
        query = self._informative("full", words, self.cfg.people_max_words)
        got = self.fields.scores("full", weight_sets, query) if query else None
        return got if got is not None else [self._sql_scores(w, query) for w in weight_sets]

    def fulltext_coverage(self, words: list[str], weight_sets: list[tuple[float, ...]]) -> list[np.ndarray]:
        """Every product's share of the query's words (`fulltext_scores`' query) that it holds in the
        fields each of `weight_sets` weighs: an AND-ness that BM25's sum, led by rare words, does not see."""
        query = self._informative("full", words, self.cfg.people_max_words)
        got = self.fields.coverage("full", weight_sets, query) if query else None
        if got is None:                                      # only SQL can answer: word by word
            got = [sum((self._sql_scores(w, [word]) > 0 for word in query), np.zeros(len(self.products)))
                   for w in weight_sets]
        return [held / max(1, len(query)) for held in got]

    def _sql_scores(self, weights: tuple[float, ...], query: list[str]) -> np.ndarray:
        """Every product's BM25 from the SQL query (0 where nothing matches; all 0 for no query)."""
        scores = np.zeros(len(self.products), dtype=np.float64)
        hits = self._match("full", weights, query, len(self.products)) if query else []
        scores[[i for i, _ in hits]] = [s for _, s in hits]
        return scores

    def _informative(self, table: str, words: list[str], max_words: int) -> list[str]:
        """The first `max_words` distinct words, less those held by more than `common_word_share` of
        the products (unless all are): FTS5's BM25 floors their IDF at 1e-6, so they add almost
        nothing to a score, but each costs a visit to most rows ("shoes" is in every product's
        category path: a word salad naming it made the query score all 50,000)."""
        uniq = list(dict.fromkeys(w for w in words if w))[:max_words]
        cap = self.cfg.common_word_share * len(self.products)
        rare = [w for w in uniq if self._df(table, w) <= cap]
        return rare or uniq

    def text_df(self, word: str) -> int:
        """Products whose text (any field, porter-stemmed) holds the word: 0 for a word no product uses."""
        return self._df("full", word)

    def listing_df(self, words: str) -> int:
        """Products whose title, category path or card values hold a word or words in a row ("t shirt"), unstemmed."""
        return self._df("docs", words)

    def _df(self, table: str, word: str) -> int:
        """Products whose text in `table` holds the word (as that table tokenises); memoised, bounded."""
        key = (table, word)
        got = self._df_memo.get(key)
        if got is None:
            try:
                got = int(self.db.execute(f"SELECT COUNT(*) FROM {table} WHERE {table} MATCH ?",
                                          (fts_phrase(word),)).fetchone()[0])
            except sqlite3.Error:
                got = 0
            if len(self._df_memo) < self.cfg.df_cache_entries:
                self._df_memo[key] = got
        return got

    def _match(self, table: str, weights: tuple[float, ...], words: list[str], limit: int) -> list[tuple[int, float]]:
        """One FTS5 OR query of `words`, ranked by weighted BM25 (tie: rowid): from the posting arrays
        (`starter.index.postings`, the same floats) when they can answer it exactly, else by SQL."""
        if not words:
            return []
        got = self.postings.match(table, weights, words, limit)
        if got is not None:
            return got
        query = " OR ".join(map(fts_phrase, words))
        marks = ", ".join("?" * len(weights))
        try:
            rows = self.db.execute(
                f"SELECT rowid, bm25({table}, {marks}) AS s FROM {table} WHERE {table} MATCH ? "
                "ORDER BY s, rowid LIMIT ?", (*weights, query, limit)).fetchall()
        except sqlite3.Error as exc:  # odd text must never break retrieval
            log.warning("%s query failed: %s", table, exc)
            return []
        return [(int(r), -float(s)) for r, s in rows]
