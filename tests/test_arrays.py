"""The grouping helpers return what np.unique returns."""
from __future__ import annotations

import numpy as np
import pytest

from starter.arrays import distinct, groups, groups_in_order


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
