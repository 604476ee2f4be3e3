"""The evaluator's view of the contest files: every catalog id, and full rows only for targets.

Where the files are looked up is `contest.paths` (shared with the agent).
"""
from __future__ import annotations

from pathlib import Path

from contest.jsonl import iter_jsonl, read_jsonl
from contest.paths import PROJECT_ROOT, SHARED_DIR, resolve_catalog, resolve_dataset

__all__ = ["PROJECT_ROOT", "SHARED_DIR", "CatalogView", "load_catalog", "load_catalog_view", "resolve_catalog",
           "resolve_dataset"]


def load_catalog(path: Path | str) -> dict[str, dict]:
    """parent_asin -> product row, in file order."""
    products: dict[str, dict] = {}
    for row in iter_jsonl(path):
        pid = row.get("parent_asin")
        if isinstance(pid, str) and pid:
            products.setdefault(pid, row)
    return products


class CatalogView(dict):
    """The evaluator's view of a catalog: every id, and full rows only for targets.

    Membership (`pid in view`) answers for every catalog id; item access gives
    the full row of a requested target.  Keeps the evaluator's memory small so
    that the agent's own footprint is what a benchmark measures.
    """

    def __init__(self, ids: set[str], rows: dict[str, dict]) -> None:
        super().__init__(rows)
        self.ids = ids

    def __contains__(self, pid: object) -> bool:
        return pid in self.ids

    def __len__(self) -> int:
        return len(self.ids)


def load_catalog_view(path: Path | str, wanted: set[str]) -> CatalogView:
    """All ids of the catalog plus the rows of `wanted` (e.g. the session targets); the file is
    streamed, so a million-row catalog is never held whole."""
    ids: set[str] = set()
    rows: dict[str, dict] = {}
    for row in iter_jsonl(path):
        pid = row.get("parent_asin")
        if isinstance(pid, str) and pid:
            ids.add(pid)
            if pid in wanted and pid not in rows:
                rows[pid] = row
    return CatalogView(ids, rows)
