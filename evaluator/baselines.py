"""Comparison agents that anchor every results table.

- `WeakBaselineAgent`: the organizer's weak starter agent, reproduced exactly
  (stateless SQLite FTS5 BM25 over the message's words).
- `PopularityFloorAgent`: the opening's shelf by review count, ten new items a
  turn, never a question.
- `CumulativeBM25Agent`: the free-text reference: one cumulative porter-stemmed
  BM25 query over all product fields, ten new items a turn, never a question.
"""
from __future__ import annotations

import json
import re
import sqlite3


from contest.jsonl import field_text, iter_jsonl
from contest import coarse_category

STOPWORDS = frozenset(
    "a an and are as at be but by for from i in is it me my of on or please some that the this to "
    "want with would you looking".split()
)
_TOKEN_RE = re.compile(r"[a-z0-9]+")
_OPENING_RE = re.compile(r"^I'm looking for (.+?)(?:\. |, but I'm still exploring\.)")
WEAK_MESSAGE = "Here are the closest matches I found."


def weak_query(message: str) -> str:
    """Distinct lower-cased tokens (len > 1, not stopwords), first 40, quoted and OR-ed."""
    tokens: list[str] = []
    for tok in _TOKEN_RE.findall(message.lower()):
        if len(tok) > 1 and tok not in STOPWORDS and tok not in tokens:
            tokens.append(tok)
    return " OR ".join(f'"{t}"' for t in tokens[:40])


class WeakBaselineAgent:
    """The organizer's stateless BM25 starter agent."""

    def __init__(self, catalog_path: str) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute(
            "CREATE VIRTUAL TABLE products USING fts5(parent_asin UNINDEXED, title, categories, features, "
            "details, store, description, tokenize='unicode61 remove_diacritics 2')"
        )
        with open(catalog_path, encoding="utf-8") as fh:
            rows = []
            for line in fh:
                if not line.strip():
                    continue
                p = json.loads(line)
                rows.append((p.get("parent_asin"), field_text(p.get("title")), field_text(p.get("categories")),
                             field_text(p.get("features")), field_text(p.get("details")),
                             p.get("store"), field_text(p.get("description"))))
        self.db.executemany("INSERT INTO products VALUES (?, ?, ?, ?, ?, ?, ?)", rows)

    def reset(self, session_id: str, user_profile: dict) -> None:
        return None

    def respond(self, session_id: str, user_message: str, turn: int, top_k: int = 10) -> dict:
        query = weak_query(user_message or "")
        recs: list[dict] = []
        if query:
            cur = self.db.execute(
                "SELECT parent_asin, bm25(products, 0.0, 6.0, 4.0, 2.5, 2.5, 1.5, 1.0) AS s FROM products "
                "WHERE products MATCH ? ORDER BY s LIMIT ?",
                (query, top_k),
            )
            recs = [{"parent_asin": pid, "score": -float(s)} for pid, s in cur.fetchall()]
        return {"message": WEAK_MESSAGE, "ask_attribute": None, "recommendations": recs,
                "usage": {"prompt_tokens": 0, "completion_tokens": 0}}


class PopularityFloorAgent:
    """Exact coarse shelf by rating_number (tie: parent_asin), page t at turn t, no question."""

    def __init__(self, catalog_path: str) -> None:
        self.shelves: dict[str, list[tuple[int, str]]] = {}
        with open(catalog_path, encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                p = json.loads(line)
                n = p.get("rating_number")
                n = n if isinstance(n, int) else 0
                self.shelves.setdefault(coarse_category(p.get("categories")), []).append((n, p["parent_asin"]))
        for items in self.shelves.values():
            items.sort(key=lambda x: (-x[0], x[1]))
        self.sessions: dict[str, str] = {}

    def reset(self, session_id: str, user_profile: dict) -> None:
        self.sessions.pop(session_id, None)

    def respond(self, session_id: str, user_message: str, turn: int, top_k: int = 10) -> dict:
        if session_id not in self.sessions:
            m = _OPENING_RE.match(user_message or "")
            self.sessions[session_id] = m.group(1) if m else ""
        shelf = self.shelves.get(self.sessions[session_id], [])
        page = shelf[(turn - 1) * top_k: turn * top_k]
        return {"message": "Here are popular picks from that shelf.", "ask_attribute": None,
                "recommendations": [{"parent_asin": pid} for _, pid in page]}


class CumulativeBM25Agent:
    """The reference for free text: one cumulative BM25 query over everything said so far.

    Porter stemming over every product field; ten products a turn, never one
    shown before, and never a question.  It anchors the persona results: an
    agent that reads people must beat it.
    """

    MAX_QUERY_WORDS = 100

    def __init__(self, catalog_path: str) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute(
            "CREATE VIRTUAL TABLE products USING fts5(parent_asin UNINDEXED, title, categories, features, "
            "details, store, description, tokenize='porter unicode61 remove_diacritics 2')"
        )
        rows = []
        for p in iter_jsonl(catalog_path):
            rows.append((p.get("parent_asin"), field_text(p.get("title")), field_text(p.get("categories")),
                         field_text(p.get("features")), field_text(p.get("details")), field_text(p.get("store")),
                         field_text(p.get("description"))))
        self.db.executemany("INSERT INTO products VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        self.sessions: dict[str, tuple[list[str], set[str]]] = {}

    def reset(self, session_id: str, user_profile: dict) -> None:
        self.sessions[session_id] = ([], set())

    def respond(self, session_id: str, user_message: str, turn: int, top_k: int = 10) -> dict:
        words, shown = self.sessions.setdefault(session_id, ([], set()))
        for tok in _TOKEN_RE.findall(str(user_message or "").lower()):
            if len(tok) > 1 and tok not in STOPWORDS and tok not in words:
                words.append(tok)
        recs: list[dict] = []
        if words:
            query = " OR ".join(f'"{t}"' for t in words[: self.MAX_QUERY_WORDS])
            cur = self.db.execute(
                "SELECT parent_asin, bm25(products, 0.0, 6.0, 4.0, 2.5, 2.5, 1.5, 1.0) AS s FROM products "
                "WHERE products MATCH ? ORDER BY s, parent_asin LIMIT ?", (query, top_k + len(shown)))
            for pid, s in cur.fetchall():
                if pid not in shown and len(recs) < top_k:
                    recs.append({"parent_asin": pid, "score": -float(s)})
        shown.update(r["parent_asin"] for r in recs)
        return {"message": WEAK_MESSAGE, "ask_attribute": None, "recommendations": recs,
                "usage": {"prompt_tokens": 0, "completion_tokens": 0}}
