"""The grouping helpers return what np.unique returns, and `member` what np.isin returns."""
from __future__ import annotations

import numpy as np
import pytest

from starter.index import arrays as A
from starter.index.arrays import distinct, groups, groups_in_order


@pytest.mark.parametrize("n", [0, 1, 2, 7, 300, 5000])
def test_grouping_is_np_unique(n: int) -> None:
    rng = np.random.default_rng(n)
    for values in (rng.integers(0, n // 3 + 1, n).astype(np.int64), rng.random(n).round(1),
                   rng.integers(-5, 5, n).astype(np.int64) * 10**15):
        unique, first, inverse = np.unique(values, return_index=True, return_inverse=True)
        assert np.array_equal(distinct(values), unique)
        got_unique, got_inverse = groups(values)
        assert np.array_equal(got_unique, unique) and np.array_equal(got_inverse, inverse.reshape(-1))
        for got, want in zip(groups_in_order(values), (unique, first, inverse.reshape(-1))):
            assert np.array_equal(got, want)


@pytest.mark.parametrize("wanted", [0, 1, 3, A.FEW_WANTED, A.FEW_WANTED + 1, 40])
def test_member_is_np_isin(wanted: int) -> None:
    rng = np.random.default_rng(wanted)
    for n in (0, 1, 7, 500):
        values = rng.integers(0, 60, n).astype(np.int64)
        pick = rng.integers(-5, 65, wanted).astype(np.int64)
        for given in (pick, pick.tolist()):
            got = A.member(values, given)
            assert got.dtype == bool and np.array_equal(got, np.isin(values, pick))
