"""Reading the contest's JSON-lines files (catalog, sessions, persona cards)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator


def iter_jsonl(path: Path | str) -> Iterator[dict]:
    """Every non-blank line of a JSON-lines file, parsed, streamed; errors (bad UTF-8, bad JSON,
    not an object) raise ValueError naming the file and line."""
    with open(path, "rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            row = parse_line(raw, path, lineno)
            if row is not None:
                yield row


def parse_line(raw: bytes, path: Path | str, lineno: int) -> dict | None:
    """One line of a JSON-lines file as an object (None when blank); errors name the file and line."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}:{lineno}: not valid UTF-8 (byte {exc.start + 1} of the line)") from None
    if not line.strip():
        return None
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{lineno}: invalid JSON ({exc.msg})") from None
    if not isinstance(row, dict):
        raise ValueError(f"{path}:{lineno}: expected a JSON object")
    return row


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
