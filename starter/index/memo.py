"""A bounded memo that keeps what was used recently.

A memo that stops adding when full serves only what came first: after a few
hundred sessions of a long-running server, or within one session of a
million-product catalog (944,000 distinct card values against a bound of
50,000), every new card value missed it and was tokenised again on every use
(half of a million-row template turn).  One that is emptied when full forgets
the current turn's entries too.  Two generations keep both bounds and recency:
entries go to the young one; when it is full it becomes the old one (the
previous old one is dropped); an entry found in the old one moves back to the
young one.  At most twice the bound is held.
"""
from __future__ import annotations

from typing import Generic, Hashable, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class RecentMemo(Generic[K, V]):
    """Two generations of at most `bound` entries each (values must not be None)."""

    __slots__ = ("bound", "_young", "_old")

    def __init__(self, bound: int) -> None:
        self.bound = max(1, int(bound))
        self._young: dict[K, V] = {}
        self._old: dict[K, V] = {}

    def get(self, key: K) -> V | None:
        got = self._young.get(key)
        if got is None:
            got = self._old.get(key)
            if got is not None:
                self.put(key, got)
        return got

    def put(self, key: K, value: V) -> None:
        if len(self._young) >= self.bound:
            self._old = self._young
            self._young = {}
        self._young[key] = value

    def __contains__(self, key: object) -> bool:
        return key in self._young or key in self._old

    def __getitem__(self, key: K) -> V:
        got = self.get(key)
        if got is None:
            raise KeyError(key)
        return got

    def __len__(self) -> int:
        """Entries held (an entry moved back from the old generation counts in both until it goes)."""
        return len(self._young) + len(self._old)

    def clear(self) -> None:
        self._young.clear()
        self._old.clear()
