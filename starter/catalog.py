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

from contest.card import CARD_SIZE, card_title, card_values, classify, coarse_category, split_card
from contest.jsonl import field_text, iter_jsonl
from grounding.audience import product_audiences
from grounding.words import tokens
from starter.config import Tunables

log = logging.getLogger(__name__)


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


def capped(row: dict, limit: int) -> dict:
    """The row with every text cut to `limit` characters and every list to `limit // 100` items: a
    catalog line can be arbitrarily large, what is read and indexed of it is not."""
    items = max(1, limit // 100)

    def cut(v: object, depth: int = 0) -> object:
        if isinstance(v, str):
            return v[:limit]
        if isinstance(v, list) and depth < 2:
            return [cut(x, depth + 1) for x in v[:items]]
        if isinstance(v, dict) and depth < 2:
            return {str(k)[:limit]: cut(x, depth + 1) for k, x in list(v.items())[:items]}
        return v

    return {k: cut(v) for k, v in row.items()}


def _num(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


class CatalogIndex:
    """Products, shelves, clue index, token index, BM25 and priors.

    Implements `grounding.vocabulary.Vocabulary` (clues, shelf_sizes, idf_of).
    """

    def __init__(self, catalog_path: str | Path, cfg: Tunables) -> None:
        path = Path(catalog_path)
        if not path.is_file():
            raise CatalogError(f"catalog not found: {path} (set CATALOG_PATH or put catalog.jsonl in data/)")
        self.path = path
        self.cfg = cfg
        self.products: list[Product] = []
        self.by_pid: dict[str, int] = {}
        self.shelves: dict[str, list[int]] = {}
        self.clues: dict[str, list[int]] = {}
        self._types: dict[str, str] = {}
        self._weights: dict[frozenset[str], float] = {}
        self._product_tokens: dict[int, frozenset[str]] = {}
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(title, categories, body, content='', "
            "tokenize='unicode61 remove_diacritics 2')"
        )
        # Every field of the product, porter-stemmed: what people describe ("sneakers", "pajamas").
        self.db.execute(
            "CREATE VIRTUAL TABLE full USING fts5(title, categories, features, details, store, description, "
            "content='', tokenize='porter unicode61 remove_diacritics 2')"
        )
        full: list[tuple] = []
        counts = {"without a usable parent_asin": 0, "with a duplicate parent_asin": 0,
                  "loaded without a title": 0, "loaded without categories": 0, "loaded without a numeric price": 0}
        batch: list[tuple] = []
        try:
            for row in iter_jsonl(path):
                pid = row.get("parent_asin")
                if not isinstance(pid, str) or not pid.strip():
                    counts["without a usable parent_asin"] += 1
                    continue
                if pid in self.by_pid:
                    counts["with a duplicate parent_asin"] += 1
                    continue
                row = capped(row, cfg.max_field_chars)
                counts["loaded without a title"] += not (isinstance(row.get("title"), str) and row["title"].strip())
                counts["loaded without categories"] += not (isinstance(row.get("categories"), list)
                                                            and row["categories"])
                counts["loaded without a numeric price"] += _num(row.get("price")) is None
                self._add(row, pid)
                p = self.products[-1]
                # BM25 sees what a shopper names: the title, the category path,
                # the card values and the store (not the long marketing text).
                batch.append((p.idx, p.title, field_text(row.get("categories")),
                              " ".join(p.constraints) + " " + str(row.get("store") or "")))
                full.append((p.idx, p.title, field_text(row.get("categories")), field_text(row.get("features")),
                             field_text(row.get("details")), field_text(row.get("store")),
                             field_text(row.get("description"))))
                if len(batch) >= 5000:
                    self._flush(batch, full)
        except ValueError as exc:
            raise CatalogError(f"malformed catalog: {exc}") from None
        if batch:
            self._flush(batch, full)
        if not self.products:
            raise CatalogError(f"{path}: no product with a parent_asin")
        odd = [f"skipped {n} rows {what}" for what, n in counts.items() if n and not what.startswith("loaded")]
        odd += [f"{n} rows {what}" for what, n in counts.items()
                if n and what.startswith("loaded") and what != "loaded without a numeric price"]
        if odd:
            log.warning("catalog %s: %s", path, "; ".join(odd))
        for ids in self.shelves.values():
            ids.sort(key=lambda i: (-self.products[i].rating_number, self.products[i].pid))
        self.shelf_sizes: dict[str, int] = {k: len(v) for k, v in self.shelves.items()}
        prior_alpha = cfg.prior_alpha
        self.popular: list[int] = sorted(range(len(self.products)),
                                         key=lambda i: (-self.products[i].rating_number, self.products[i].pid))
        self.log_prior: list[float] = [prior_alpha * math.log1p(p.rating_number) for p in self.products]
        # Document frequency of value tokens, for rarity weighting of soft evidence.
        df: dict[str, int] = {}
        for value, ids in self.clues.items():
            for tok in set(tokens(value)):
                df[tok] = df.get(tok, 0) + len(ids)
        n = len(self.products)
        self.idf: dict[str, float] = {t: math.log(1.0 + n / (1.0 + c)) for t, c in df.items()}
        self.default_idf = math.log(1.0 + n)

    def _flush(self, batch: list[tuple], full: list[tuple]) -> None:
        self.db.executemany("INSERT INTO docs(rowid, title, categories, body) VALUES (?,?,?,?)", batch)
        self.db.executemany("INSERT INTO full(rowid, title, categories, features, details, store, description) "
                            "VALUES (?,?,?,?,?,?,?)", full)
        batch.clear()
        full.clear()

    def _classify(self, value: str) -> str:
        """classify() with a cache: card values repeat a lot across products."""
        t = self._types.get(value)
        if t is None:
            t = self._types[value] = classify(value)
        return t

    def _add(self, row: dict, pid: str) -> None:
        hard, soft = split_card(card_values(row, limit=CARD_SIZE) or [card_title(row)])
        constraints = tuple(hard + soft)
        rn = row.get("rating_number")
        cats = row.get("categories") if isinstance(row.get("categories"), list) else []
        p = Product(
            idx=len(self.products), pid=pid, title=str(row.get("title") or ""),
            shelf=coarse_category(row.get("categories") if isinstance(row.get("categories"), list) else None),
            price=_num(row.get("price")),
            rating_number=rn if isinstance(rn, int) and not isinstance(rn, bool) and rn > 0 else 0,
            average_rating=_num(row.get("average_rating")) or 0.0,
            constraints=constraints, types=tuple(self._classify(v) for v in constraints),
            audience=product_audiences(str(row.get("title") or ""), cats),
        )
        self.products.append(p)
        self.by_pid[pid] = p.idx
        self.shelves.setdefault(p.shelf, []).append(p.idx)
        for v in dict.fromkeys(constraints):
            self.clues.setdefault(v, []).append(p.idx)

    # ---- lookups ---------------------------------------------------------------
    def idf_of(self, tok: str) -> float:
        return self.idf.get(tok, self.default_idf)

    def product_tokens(self, idx: int) -> frozenset[str]:
        """Every word of a product's title and card values (cached per product)."""
        got = self._product_tokens.get(idx)
        if got is None:
            p = self.products[idx]
            got = frozenset(tokens(p.title + " " + " ".join(p.constraints)))
            self._product_tokens[idx] = got
        return got

    def weight(self, toks: frozenset[str]) -> float:
        """Sum of IDF over a token set (cached; sets of card-value words repeat)."""
        w = self._weights.get(toks)
        if w is None:
            w = sum(self.idf.get(t, self.default_idf) for t in toks)
            if len(self._weights) < self.cfg.weight_cache_entries:
                self._weights[toks] = w
        return w

    def bm25(self, words: list[str], limit: int, shelf: str | None = None) -> list[tuple[int, float]]:
        """(product idx, relevance) for an OR query of `words` over title, category path and card
        values, best first (tie: idx); with `shelf`, only that shelf's products."""
        out = self._match("docs", self.cfg.bm25_weights, words, self.cfg.bm25_max_words,
                          limit * 4 if shelf else limit)
        if shelf is not None:
            out = [(i, s) for i, s in out if self.products[i].shelf == shelf]
        return out[:limit]

    def fulltext(self, words: list[str], limit: int) -> list[tuple[int, float]]:
        """(product idx, relevance) for an OR query of `words` over every field, porter-stemmed,
        best first (tie: idx)."""
        return self._match("full", self.cfg.people_field_weights, words, self.cfg.people_max_words, limit)

    def _match(self, table: str, weights: tuple[float, ...], words: list[str], max_words: int,
               limit: int) -> list[tuple[int, float]]:
        """One FTS5 OR query of the first `max_words` distinct words, ranked by weighted BM25."""
        uniq = list(dict.fromkeys(w for w in words if w))[:max_words]
        if not uniq:
            return []
        query = " OR ".join('"' + w.replace('"', '""') + '"' for w in uniq)
        marks = ", ".join("?" * len(weights))
        try:
            rows = self.db.execute(
                f"SELECT rowid, bm25({table}, {marks}) AS s FROM {table} WHERE {table} MATCH ? "
                "ORDER BY s, rowid LIMIT ?", (*weights, query, limit)).fetchall()
        except sqlite3.Error as exc:  # odd text must never break retrieval
            log.warning("%s query failed: %s", table, exc)
            return []
        return [(int(r), -float(s)) for r, s in rows]
