"""Where sessions live: a journal of each session's profile and inputs, behind one interface.

`open_store(url)` picks the journal from `AGENT_SESSION_STORE`:

- `memory` (the default): SQLite in memory, one process;
- `sqlite:///PATH`: one file in WAL mode with a busy timeout, for several
  processes on one machine (SQLAlchemy's form: `sqlite:////abs/path`,
  `sqlite:///relative/path`);
- `postgresql://...`: a PostgreSQL server, for several machines.

Every input carries the session's sequence number `n` (0, 1, ...) under a
unique constraint on (session, n), and every reset raises the session's
`generation`.  A worker appends input `n` only for the generation it read:
two workers that answer turn `n` of one session at once cannot both store
it; the second gets `SequenceConflict` and re-reads (never a silent fork).
A server that cannot be reached, or fails mid-write, gives `StoreUnavailable`:
the write is one transaction, so nothing is half written and the turn can
be retried.
"""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

ENV_VAR = "AGENT_SESSION_STORE"


class StoreError(Exception):
    """A journal operation did not happen (nothing of it was written)."""


class StoreUnavailable(StoreError):
    """The store cannot be reached or failed; the same call may be retried."""


class SequenceConflict(StoreError):
    """Another worker stored this session's input first, or reset the session meanwhile."""


@dataclass(frozen=True)
class Entry:
    """One input as received (JSON-plain), plus the model's recorded replies when the model ran."""

    message: Any
    turn: Any
    top_k: Any
    tape: list | None = None

    def columns(self) -> tuple[str, str, str, str | None]:
        """The stored text of each field (ASCII JSON: no NUL, no lone surrogate reaches a server)."""
        return (json.dumps(self.message), json.dumps(self.turn), json.dumps(self.top_k),
                None if self.tape is None else json.dumps(self.tape))

    @classmethod
    def from_columns(cls, message: str, turn: str, top_k: str, tape: str | None) -> Entry:
        return cls(json.loads(message), json.loads(turn), json.loads(top_k),
                   None if tape is None else json.loads(tape))


@dataclass(frozen=True)
class Snapshot:
    """A session as stored, read in one statement: its generation, profile and inputs from `start`."""

    generation: int
    profile: dict
    start: int
    entries: tuple[Entry, ...]

    @property
    def length(self) -> int:
        """Inputs stored for this generation (as far as this read saw)."""
        return self.start + len(self.entries)


# One statement gives the generation, the profile and the inputs from a position: a consistent read.
READ_SQL = ("SELECT s.generation, s.profile, i.n, i.message, i.turn, i.top_k, i.tape FROM sessions s "
            "LEFT JOIN inputs i ON i.id = s.id AND i.n >= {p} WHERE s.id = {p} ORDER BY i.n")


def snapshot_of(rows: list[tuple], start: int) -> Snapshot | None:
    """The snapshot that READ_SQL's rows describe (None: no such session)."""
    if not rows:
        return None
    entries = tuple(Entry.from_columns(*row[3:7]) for row in rows if row[2] is not None)
    return Snapshot(int(rows[0][0]), json.loads(rows[0][1]), start, entries)


class Journal(ABC):
    """Sessions' profiles and inputs; safe to share between threads of one process."""

    url: str

    @abstractmethod
    def reset(self, session_id: str, profile: dict) -> int:
        """Start the session afresh (its inputs dropped); returns its new generation."""

    @abstractmethod
    def open_session(self, session_id: str, profile: dict) -> int:
        """The session's generation: a new session when the journal does not know it, else the stored
        one untouched (two workers opening one new session at once open it once, and neither drops
        what the other has stored since)."""

    @abstractmethod
    def read(self, session_id: str, start: int = 0) -> Snapshot | None:
        """The session from input `start` on (None: unknown session)."""

    @abstractmethod
    def append(self, session_id: str, generation: int, n: int, entry: Entry) -> None:
        """Store input `n` of the session's `generation`; SequenceConflict if taken or reset."""

    @abstractmethod
    def forget(self, session_id: str) -> None:
        """Drop the session and its inputs."""

    @abstractmethod
    def stats(self) -> tuple[int, int]:
        """(inputs stored, characters of stored messages): for benchmarks."""

    @abstractmethod
    def close(self) -> None:
        """Release the connection (the journal is not used afterwards)."""


def profile_text(profile: dict) -> str:
    return json.dumps(profile, sort_keys=True, default=str)


def open_store(url: str | None) -> Journal:
    """The journal that `url` names (see the module docstring); ValueError for an unknown scheme."""
    url = (url or "memory").strip()
    if url in ("memory", ":memory:"):
        from starter.session_store.sqlite import SQLiteJournal
        return SQLiteJournal(":memory:")
    if url.startswith("sqlite:///"):
        from starter.session_store.sqlite import SQLiteJournal
        return SQLiteJournal(url[len("sqlite:///"):])
    if url.startswith(("postgresql://", "postgres://")):
        from starter.session_store.postgres import PostgresJournal
        return PostgresJournal(url)
    raise ValueError(f"{ENV_VAR}={url!r}: expected memory, sqlite:///PATH or postgresql://...")
