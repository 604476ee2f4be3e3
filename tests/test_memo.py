"""The two-generation memo: bounded, and it keeps what was used recently."""
from __future__ import annotations

import pytest

from starter.template import similarity as SIM
from starter.index.memo import RecentMemo


def test_recent_entries_stay_and_at_most_twice_the_bound_is_held() -> None:
    memo: RecentMemo[str, int] = RecentMemo(3)
    for k in range(10):
        memo.put(f"k{k}", k)
        assert len(memo) <= 6
    assert [memo.get(f"k{k}") for k in range(7, 10)] == [7, 8, 9]     # the latest always stay
    assert memo.get("k0") is None and "k0" not in memo
    with pytest.raises(KeyError):
        memo["k0"]
    memo.clear()
    assert len(memo) == 0 and memo.get("k9") is None


def test_an_entry_used_again_moves_back_to_the_young_generation() -> None:
    memo: RecentMemo[str, int] = RecentMemo(2)
    memo.put("a", 1)
    memo.put("b", 2)
    memo.put("c", 3)          # young {c}, old {a, b}
    assert memo.get("a") == 1  # found in the old generation: back in the young one
    memo.put("d", 4)          # young full {c, a}: it becomes the old one, b is dropped
    assert memo["a"] == 1 and memo["c"] == 3 and memo["d"] == 4 and "b" not in memo


def test_the_card_value_word_memo_keeps_adding_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    """A memo that stopped adding when full missed on every later card value for good."""
    monkeypatch.setattr(SIM, "_TOKSET_CACHE", RecentMemo(4))
    texts = [f"Fabric {k} cotton blend" for k in range(20)]
    for t in texts:
        assert SIM._tok_words(t) == ("fabric", str(texts.index(t)), "cotton", "blend")
    assert all(t in SIM._TOKSET_CACHE for t in texts[-4:]) and len(SIM._TOKSET_CACHE) <= 8
