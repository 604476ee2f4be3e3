"""Optional rerank of near-equal candidates (`RERANK_METHOD` = none | llm | embedding).

Only candidates whose evidence is within `window` nats of the best are
touched, and the bonus is bounded by that window, so a rerank can reorder
near-equal evidence but never overturn it; a product that contradicts a
grounded negation gets no bonus.  Off by default: enabled only where it wins
on the held-out and perturbed panels (see evaluation_results/).
"""
from __future__ import annotations

import logging
import math
from typing import Any, Sequence

from grounding.words import tokens
from starter.index.catalog import CatalogIndex
from starter.model.prompting import rerank_scores
from starter.template.posterior import Ranked

log = logging.getLogger(__name__)


def product_text(index: CatalogIndex, idx: int) -> str:
    p = index.products[idx]
    return f"{p.title}. {p.shelf}. " + "; ".join(dict.fromkeys(p.constraints))


def _cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    na = math.sqrt(sum(x * x for x in a)) or 1.0
    nb = math.sqrt(sum(y * y for y in b)) or 1.0
    return dot / (na * nb)


class Reranker:
    """Scores the near-equal head of the ranking with a model and blends the score in."""

    def __init__(self, index: CatalogIndex, client: Any, method: str, top_n: int, weight: float,
                 window: float) -> None:
        self.index = index
        self.client = client
        self.method = method
        self.top_n = top_n
        self.weight = weight
        self.window = window

    def rerank(self, ranked: Sequence[Ranked], needs: str, negated: set[str]) -> tuple[Sequence[Ranked], dict]:
        """(new ranking, record for the snapshot); the ranking is unchanged on any failure."""
        info: dict[str, Any] = {"method": self.method, "applied": False}
        if not ranked or self.method == "none" or not needs.strip():
            return ranked, info
        best = ranked[0].log_weight
        head = [r for r in ranked[: self.top_n] if r.log_weight >= best - self.window]
        if len(head) < 2:
            info["reason"] = "no near-equal candidates"
            return ranked, info
        texts = [product_text(self.index, r.idx) for r in head]
        scores = self._scores(needs, texts, info)
        if scores is None:
            return ranked, info
        bonus: dict[int, float] = {}
        for r, s, text in zip(head, scores, texts):
            b = self.weight * self.window * s
            if negated and set(tokens(text)) & negated:
                b = 0.0
            bonus[r.idx] = b
        rows = [r._replace(log_weight=r.log_weight + bonus.get(r.idx, 0.0)) for r in ranked]
        top = max(r.log_weight for r in rows)
        total = sum(math.exp(r.log_weight - top) for r in rows)
        rows = [r._replace(prob=math.exp(r.log_weight - top) / total) for r in rows]
        products = self.index.products
        rows.sort(key=lambda r: (-r.log_weight, -products[r.idx].rating_number, products[r.idx].pid))
        info.update(applied=True, scored=len(head), bonus={products[i].pid: round(b, 4) for i, b in bonus.items()})
        return rows, info

    def _scores(self, needs: str, texts: list[str], info: dict) -> list[float] | None:
        """Scores in [0, 1] per text, or None (recorded) when the model fails."""
        if self.method == "embedding":
            got = self.client.embed([needs] + texts)
            info["usage"] = got.usage
            if got.vectors is None:
                info["error"] = got.error
                return None
            sims = [_cosine(got.vectors[0], v) for v in got.vectors[1:]]
            lo, hi = min(sims), max(sims)
            return [(s - lo) / (hi - lo) if hi > lo else 0.0 for s in sims]
        if self.method == "llm":
            reply = self.client.rerank(needs, texts)
            info["usage"] = reply.usage
            if reply.data is None:
                info["error"] = reply.error
                return None
            raw = rerank_scores(reply, len(texts))
            return [(s or 0) / 4.0 for s in raw]
        info["error"] = f"unknown method {self.method!r}"
        return None
