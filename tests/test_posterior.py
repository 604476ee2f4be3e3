"""The posterior: a softmax of prior and evidence with the settings' penalties, best first in a total order,
read lazily as a list."""
from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from starter.index.catalog import CatalogIndex
from starter.settings import SETTINGS
from starter.template.posterior import RankedList, count_exact, most_probable, posterior, ranked_by_weight
from starter.template.tracks import Track, TrackTable


@pytest.fixture()
def index(small_catalog: Path) -> CatalogIndex:
    return CatalogIndex(small_catalog, SETTINGS.index)


def _random_tracks(index: CatalogIndex, seed: int, exact_share: float) -> dict[int, Track]:
    rng = random.Random(seed)
    ids = list(range(len(index.products)))
    rng.shuffle(ids)
    return {i: Track("buying", 0, rng.random() < exact_share, -9.0 * rng.random(),
                     rng.choice([0.0, -5.0 * rng.random()]), rng.choice([0.0, -4.0 * rng.random()]))
            for i in ids}


def _table(tracks: dict[int, Track]) -> TrackTable:
    return TrackTable.of_rows(tracks.keys(), tracks.values())


def _weights(ranked) -> dict[int, float]:
    return {r.idx: r.log_weight for r in ranked}


@pytest.mark.parametrize("seed,exact_share", [(1, 0.0), (2, 0.3), (3, 1.0)])
def test_the_posterior_is_a_softmax_of_prior_and_evidence_in_a_total_order(index: CatalogIndex, seed: int,
                                                                           exact_share: float) -> None:
    rows = _random_tracks(index, seed, exact_share)
    tracks = _table(rows)
    ranked = list(posterior(index, tracks, set(), SETTINGS.posterior))
    assert sorted(r.idx for r in ranked) == sorted(rows)
    assert sum(r.prob for r in ranked) == pytest.approx(1.0, abs=1e-12)
    best = ranked[0]
    for r in ranked:
        assert r.prob == pytest.approx(math.exp(r.log_weight - best.log_weight) * best.prob, rel=1e-9)
        t = rows[r.idx]
        assert r.log_prior == index.log_prior[r.idx]
        assert r.loglik == pytest.approx(t.loglik + t.category_ll + t.text_ll, abs=1e-12)
    # best first; equal weights by popularity place
    keys = [(-r.log_weight, index.popular_place[r.idx]) for r in ranked]
    assert keys == sorted(keys)
    assert all(type(r.idx) is int and type(r.prob) is float and type(r.exact) is bool for r in ranked)
    assert count_exact(ranked) == sum(t.exact for t in rows.values())
    assert most_probable(index, tracks, SETTINGS.posterior) == best.idx


def test_exclusions_doubts_and_inexact_candidates_cost_what_the_settings_say(index: CatalogIndex) -> None:
    rows = _random_tracks(index, 2, 0.3)
    tracks = _table(rows)
    ids = list(rows)
    plain = _weights(posterior(index, tracks, set(), SETTINGS.posterior))
    excluded = posterior(index, tracks, {ids[0], ids[3]}, SETTINGS.posterior)
    assert {ids[0], ids[3]}.isdisjoint(_weights(excluded)) and len(excluded) == len(ids) - 2
    doubted = _weights(posterior(index, tracks, set(), SETTINGS.posterior, {ids[1]}))
    assert doubted[ids[1]] == pytest.approx(plain[ids[1]] - SETTINGS.posterior.doubtful_penalty, abs=1e-12)
    assert doubted[ids[2]] == plain[ids[2]]
    # The inexact penalty is paid only while some candidate explains everything exactly.
    none_exact = {i: t._replace(exact=False) for i, t in rows.items()}
    flat = _weights(posterior(index, _table(none_exact), set(), SETTINGS.posterior))
    for i, t in rows.items():
        want = flat[i] - (0.0 if t.exact else SETTINGS.posterior.inexact_penalty)
        assert plain[i] == pytest.approx(want, abs=1e-12)


def test_ranked_by_weight_orders_and_normalises_any_candidates(index: CatalogIndex) -> None:
    rng = random.Random(5)
    ids = list(range(len(index.products)))
    rng.shuffle(ids)
    lw = [rng.choice([-1.0, -2.0, -2.0, -7.5]) for _ in ids]
    prior = [rng.choice([0.0, 0.5]) for _ in ids]
    ranked = list(ranked_by_weight(index, np.array(ids), np.array(lw), np.array(prior)))
    assert sorted(r.idx for r in ranked) == sorted(ids)
    assert [(-r.log_weight, index.popular_place[r.idx]) for r in ranked] == \
        sorted((-r.log_weight, index.popular_place[r.idx]) for r in ranked)
    assert sum(r.prob for r in ranked) == pytest.approx(1.0, abs=1e-12)
    assert all(r.log_prior + r.loglik == r.log_weight and not r.exact for r in ranked)
    assert len(ranked_by_weight(index, np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0))) == 0


def test_the_ranked_list_reads_like_a_list_across_blocks(index: CatalogIndex,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(RankedList, "BLOCK", 2)
    rows = _random_tracks(index, 4, 0.5)
    got = posterior(index, _table(rows), set(), SETTINGS.posterior)
    want = list(got)
    assert len(got) == len(want) and got[0] == want[0] and got[-1] == want[-1] and got[3] == want[3]
    assert got[1:4] == want[1:4] and got[:100] == want and got[::-2] == want[::-2]
    with pytest.raises(IndexError):
        got[len(want)]
    empty = posterior(index, TrackTable.empty(), set(), SETTINGS.posterior)
    assert len(empty) == 0 and list(empty) == [] and count_exact(empty) == 0 and not empty
