"""When to try a model server that did not answer: after a pause that grows while it stays down.

A server that is down costs a connection attempt per turn (tens of ms in the
evaluator, hundreds in the chat) and a warning each time, while the agent
answers from its deterministic parser anyway.  After a failed connection the
client skips calls for `first` seconds, doubling up to `most` while the server
stays down; one warning when an outage starts, one note when it ends.  Both
pauses are hand-set: long enough that a down server costs nothing per turn,
short enough that a restarted one is used again within a minute.
"""
from __future__ import annotations

import time
from typing import Callable


class Backoff:
    """The pause after failures of one server (not thread-safe: a client is used by one agent)."""

    def __init__(self, first: float = 1.0, most: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.first = first
        self.most = most
        self.clock = clock
        self.failures = 0
        self.until = 0.0

    def waiting(self) -> float:
        """Seconds left of the current pause (0.0: a call may go)."""
        return max(0.0, self.until - self.clock()) if self.failures else 0.0

    def failed(self) -> bool:
        """Record a failed connection; True when it starts an outage (the one to warn about)."""
        self.failures += 1
        self.until = self.clock() + min(self.most, self.first * 2 ** (self.failures - 1))
        return self.failures == 1

    def succeeded(self) -> bool:
        """Record an answer; True when it ends an outage."""
        ended = self.failures > 0
        self.failures = 0
        self.until = 0.0
        return ended
