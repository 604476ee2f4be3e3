"""The track table: a dict of tracks' semantics over columns (row order, update, lookups)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from starter.template.tracks import Track, TrackTable


def _rows(rng: random.Random, ids: list[int], depth: int) -> dict[int, Track]:
    return {i: Track(rng.choice(["buying", "browsing", "intent_override"]), rng.randrange(16), rng.random() < 0.5,
                     -rng.random(), -rng.random(), -rng.random(), tuple(rng.random() for _ in range(depth)))
            for i in ids}


def _table(rows: dict[int, Track]) -> TrackTable:
    return TrackTable.of_rows(rows.keys(), rows.values())


def _as_dict(table: TrackTable) -> dict[int, Track]:
    return {i: table.track(i) for i in table.ids.tolist()}


def test_merging_is_a_dict_update_in_order() -> None:
    rng = random.Random(2)
    for _ in range(50):
        mine = _rows(rng, rng.sample(range(60), rng.randint(0, 20)), 2)
        theirs = _rows(rng, rng.sample(range(60), rng.randint(0, 20)), 2)
        want = dict(mine)
        want.update(theirs)
        got = _table(mine).merged(_table(theirs))
        assert list(got.ids.tolist()) == list(want) and _as_dict(got) == want


def test_a_whole_turn_replaces_every_track_and_may_read_one_more_message() -> None:
    rng = random.Random(4)
    old = _table(_rows(rng, [5, 3, 9], 1))
    new = _table(_rows(rng, [5, 3, 9, 1], 2))
    assert old.merged(new) is new
    with pytest.raises(ValueError, match="evidence lengths"):
        old.merged(_table(_rows(rng, [3, 7], 2)))     # a partial update must read the same messages


def test_lookups_and_summaries() -> None:
    table = _table({7: Track("buying", 1, True, evidence=(0.5,)), 2: Track("browsing", 0, False, evidence=(0.9,)),
                    4: Track("intent_override", 3, False, evidence=(0.1,))})
    assert table.rows_of(np.asarray([2, 8, 7, 4])).tolist() == [1, -1, 0, 2]
    assert 7 in table and 8 not in table and "7" not in table and len(table) == 3 and table
    assert table.scenarios_of([4, 7]) == ["intent_override", "buying"]
    assert table.last_evidence_max() == 0.9
    assert table.last_evidence_max(without="browsing") == 0.5 and table.last_evidence_max(without="buying") == 0.9
    only_browsing = _table({2: Track("browsing", 0, False, evidence=(1.0,))})
    assert only_browsing.last_evidence_max(without="browsing") == 0.0
    assert table.any_exact(set()) and not table.any_exact({7})
    with pytest.raises(KeyError):
        table.track(8)
    empty = TrackTable.empty()
    assert not empty and empty.last_evidence_max() == 0.0 and not empty.any_exact(set())
    assert empty.merged(table) is table and table.merged(empty) is table
    with pytest.raises(ValueError, match="evidence lengths"):
        TrackTable.of_rows([1, 2], [Track("buying", 0, evidence=(1.0,)), Track("buying", 0)])
