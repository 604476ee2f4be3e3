"""Where the catalog and session files come from, and how they are read.

Resolution order for the catalog (DEVELOPERS.md): an explicit path (flag),
`CATALOG_PATH`, `data/catalog.jsonl`, `../shared/techjam/catalog_proxy.jsonl`.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterator

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = PROJECT_ROOT.parent / "shared" / "techjam"


def _first_existing(candidates: list[Path]) -> Path | None:
    for c in candidates:
        if c.is_file():
            return c
    return None


def resolve_catalog(explicit: str | None = None) -> Path:
    """The catalog to use; raises FileNotFoundError naming every place looked at."""
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            raise FileNotFoundError(f"catalog not found: {p}")
        return p
    candidates = []
    env = os.environ.get("CATALOG_PATH")
    if env:
        candidates.append(Path(env))
    candidates += [PROJECT_ROOT / "data" / "catalog.jsonl", SHARED_DIR / "catalog_proxy.jsonl"]
    found = _first_existing(candidates)
    if found is None:
        raise FileNotFoundError("no catalog found; looked at: " + ", ".join(str(c) for c in candidates))
    return found


def resolve_dataset(explicit: str | None = None) -> Path:
    """The session file: the flag, `data/public_set.jsonl`, then the shared public set."""
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            raise FileNotFoundError(f"dataset not found: {p}")
        return p
    candidates = [PROJECT_ROOT / "data" / "public_set.jsonl", SHARED_DIR / "public_set.jsonl"]
    found = _first_existing(candidates)
    if found is None:
        raise FileNotFoundError("no dataset found; looked at: " + ", ".join(str(c) for c in candidates))
    return found


def iter_jsonl(path: Path | str) -> Iterator[dict]:
    """Every non-blank line of a JSON-lines file, parsed, streamed; errors name the line."""
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{lineno}: expected a JSON object")
            yield row


def read_jsonl(path: Path | str) -> list[dict]:
    """Every non-blank line of a JSON-lines file, parsed; errors name the line."""
    return list(iter_jsonl(path))


def field_text(value: object) -> str:
    """A product field as plain text: a dict as "key value" pairs, a list as its items."""
    if isinstance(value, dict):
        return " ".join(f"{k} {v}" for k, v in value.items())
    if isinstance(value, list):
        return " ".join(str(x) for x in value)
    return "" if value is None else str(value)


def load_catalog(path: Path | str) -> dict[str, dict]:
    """parent_asin -> product row, in file order."""
    products: dict[str, dict] = {}
    for row in read_jsonl(path):
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
    """All ids of the catalog plus the rows of `wanted` (e.g. the session targets)."""
    ids: set[str] = set()
    rows: dict[str, dict] = {}
    for row in read_jsonl(path):
        pid = row.get("parent_asin")
        if isinstance(pid, str) and pid:
            ids.add(pid)
            if pid in wanted and pid not in rows:
                rows[pid] = row
    return CatalogView(ids, rows)
