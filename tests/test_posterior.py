"""The posterior over arrays is the per-candidate computation, float for float, read lazily."""
from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from starter.index.catalog import CatalogIndex
from starter.settings import SETTINGS
from starter.template.posterior import Ranked, RankedList, count_exact, most_probable, posterior, ranked_by_weight
from starter.template.tracks import Track, TrackTable


@pytest.fixture()
def index(small_catalog: Path) -> CatalogIndex:
    return CatalogIndex(small_catalog, SETTINGS.index)


def _reference_rows(index: CatalogIndex, rows: list[tuple[int, float, bool, float, float]]) -> list[Ranked]:
    """The per-candidate softmax the arrays replaced, as it was: `math.exp` each, `sum` in row order, a
    sort by (-log weight, popularity place)."""
    top = max(r[1] for r in rows)
    exps = [math.exp(r[1] - top) for r in rows]
    total = sum(exps)
    order = sorted(range(len(rows)), key=lambda k: (-rows[k][1], index.popular_place[rows[k][0]]))
    return [Ranked(rows[k][0], exps[k] / total, rows[k][1], rows[k][2], rows[k][3], rows[k][4]) for k in order]


def _reference(index: CatalogIndex, tracks: dict[int, Track], excluded: set[int], doubtful: set[int]) -> list[Ranked]:
    """The per-candidate posterior the arrays replaced: log weights one by one, then the softmax."""
    live = [(i, t) for i, t in tracks.items() if i not in excluded]
    any_exact = any(t.exact for _, t in live)
    rows = []
    for i, t in live:
        lw = index.log_prior[i] + t.category_ll + t.loglik + t.text_ll
        if any_exact and not t.exact:
            lw -= SETTINGS.posterior.inexact_penalty
        if i in doubtful:
            lw -= SETTINGS.posterior.doubtful_penalty
        rows.append((i, lw, t.exact, index.log_prior[i], t.loglik + t.category_ll + t.text_ll))
    return _reference_rows(index, rows)


def _random_tracks(index: CatalogIndex, seed: int, exact_share: float) -> dict[int, Track]:
    rng = random.Random(seed)
    ids = list(range(len(index.products)))
    rng.shuffle(ids)
    return {i: Track("buying", 0, rng.random() < exact_share, -9.0 * rng.random(),
                     rng.choice([0.0, -5.0 * rng.random()]), rng.choice([0.0, -4.0 * rng.random()]))
            for i in ids}


def _table(tracks: dict[int, Track]) -> TrackTable:
    return TrackTable.of_rows(tracks.keys(), tracks.values())


@pytest.mark.parametrize("seed,exact_share", [(1, 0.0), (2, 0.3), (3, 1.0)])
def test_posterior_is_the_per_candidate_computation_float_for_float(index: CatalogIndex, seed: int,
                                                                    exact_share: float) -> None:
    rows = _random_tracks(index, seed, exact_share)
    tracks = _table(rows)
    ids = list(rows)
    for excluded, doubtful in [(set(), set()), ({ids[0], ids[3]}, set()), (set(), {ids[1], ids[2]}),
                               ({ids[4]}, {ids[4], ids[5]})]:
        got = posterior(index, tracks, excluded, SETTINGS.posterior, doubtful)
        want = _reference(index, rows, excluded, doubtful)
        assert list(got) == want
        assert all(type(r.idx) is int and type(r.prob) is float and type(r.exact) is bool for r in got)
        assert count_exact(got) == count_exact(want) == sum(r.exact for r in want)
        assert most_probable(index, tracks, SETTINGS.posterior) == _reference(index, rows, set(), set())[0].idx
        weights = [(r.idx, r.log_weight, r.exact, r.log_prior, r.loglik) for r in reversed(want)]
        assert list(ranked_by_weight(index, weights)) == _reference_rows(index, weights)


def test_the_ranked_list_reads_like_a_list_across_blocks(index: CatalogIndex,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(RankedList, "BLOCK", 2)
    rows = _random_tracks(index, 4, 0.5)
    got = posterior(index, _table(rows), set(), SETTINGS.posterior)
    want = _reference(index, rows, set(), set())
    assert len(got) == len(want) and got[0] == want[0] and got[-1] == want[-1] and got[3] == want[3]
    assert got[1:4] == want[1:4] and got[:100] == want and got[::-2] == want[::-2]
    with pytest.raises(IndexError):
        got[len(want)]
    empty = posterior(index, TrackTable.empty(), set(), SETTINGS.posterior)
    assert len(empty) == 0 and list(empty) == [] and count_exact(empty) == 0 and not empty
