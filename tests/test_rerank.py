"""The optional rerank: bounded, negation-safe, and a no-op on failure."""
from __future__ import annotations

from pathlib import Path

import pytest

from starter.index.catalog import CatalogIndex
from starter.settings import SETTINGS
from starter.model import EmbedReply, ErrorKind, LLMReply
from starter.template.posterior import Ranked
from starter.template.rerank import Reranker


class FakeClient:
    def __init__(self, vectors=None, scores=None, error=None):
        self.vectors, self.scores, self.error = vectors, scores, error

    def embed(self, texts):
        if self.error:
            return EmbedReply(None, {"prompt_tokens": 3, "completion_tokens": 0}, self.error, ErrorKind.TIMEOUT)
        return EmbedReply(self.vectors[: len(texts)], {"prompt_tokens": 7, "completion_tokens": 0})

    def rerank(self, needs, texts):
        if self.error:
            return LLMReply(data=None, error=self.error)
        return LLMReply(data={"scores": [{"index": i + 1, "score": s} for i, s in enumerate(self.scores)]},
                        usage={"prompt_tokens": 50, "completion_tokens": 9})


@pytest.fixture()
def index(small_catalog: Path) -> CatalogIndex:
    return CatalogIndex(small_catalog, SETTINGS.index)


def ranking(index: CatalogIndex, pids_and_weights: list[tuple[str, float]]) -> list[Ranked]:
    return [Ranked(index.by_pid[p], 1.0 / len(pids_and_weights), w, True, 0.0, 0.0) for p, w in pids_and_weights]


def test_llm_rerank_reorders_near_equal_candidates_only(index: CatalogIndex) -> None:
    ranked = ranking(index, [("B1", 0.0), ("B2", -0.1), ("B3", -5.0)])
    rr = Reranker(index, FakeClient(scores=[0, 4]), "llm", top_n=8, weight=0.5, window=SETTINGS.rerank.rerank_window)
    out, info = rr.rerank(ranked, "suede boots", set())
    assert [index.products[r.idx].pid for r in out] == ["B2", "B1", "B3"]   # B3 is outside the window
    assert info["applied"] and info["usage"]["prompt_tokens"] == 50
    assert abs(sum(r.prob for r in out) - 1.0) < 1e-9


def test_rerank_never_lifts_a_product_that_contradicts_a_negation(index: CatalogIndex) -> None:
    ranked = ranking(index, [("B2", 0.0), ("B1", -0.1)])
    rr = Reranker(index, FakeClient(scores=[0, 4]), "llm", top_n=8, weight=1.0, window=SETTINGS.rerank.rerank_window)
    out, _ = rr.rerank(ranked, "boots, no leather", {"leather"})
    assert index.products[out[0].idx].pid == "B2"


def test_embedding_rerank_and_failures(index: CatalogIndex) -> None:
    ranked = ranking(index, [("T1", 0.0), ("T2", -0.2)])
    vectors = [[1.0, 0.0], [0.0, 1.0], [1.0, 0.1]]          # query, T1, T2: T2 is closer
    out, info = Reranker(index, FakeClient(vectors=vectors), "embedding", 8, 0.5, SETTINGS.rerank.rerank_window).rerank(ranked, "white tee", set())
    assert [index.products[r.idx].pid for r in out] == ["T2", "T1"]
    failed, info = Reranker(index, FakeClient(error="timeout"), "embedding", 8, 0.5, SETTINGS.rerank.rerank_window).rerank(ranked, "white tee", set())
    assert failed == ranked and info["error"] == "timeout" and not info["applied"]
    none, info = Reranker(index, FakeClient(), "none", 8, 0.5, SETTINGS.rerank.rerank_window).rerank(ranked, "white tee", set())
    assert none == ranked and not info["applied"]
