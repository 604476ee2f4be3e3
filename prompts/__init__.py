"""Prompt texts and JSON schemas for the optional model layer (``LLM_ENABLED=1``).

Files live beside this module:

- ``<name>_system.md``   system prompts, loaded with :func:`load_prompt`
- ``<name>.schema.json`` JSON schemas, loaded with :func:`load_schema`

Every schema is read and checked against the JSON Schema 2020-12 meta-schema
the first time any schema is asked for, so a broken schema fails at once with
a message naming the file, not later as a confusing model or validation error.
Callers get deep copies, so they may narrow a schema (e.g. set ``maxItems``)
without touching the cached original.
"""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

__all__ = ["PROMPT_DIR", "PromptError", "load_prompt", "load_schema", "schema_names", "prompt_names"]

PROMPT_DIR = Path(__file__).resolve().parent
_SCHEMA_SUFFIX = ".schema.json"

_lock = threading.Lock()
_schemas: dict[str, dict] | None = None
_prompts: dict[str, str] = {}


class PromptError(RuntimeError):
    """A prompt or schema file is missing, unreadable or invalid."""


def _schema_key(name: str) -> str:
    name = Path(name).name
    if name.endswith(_SCHEMA_SUFFIX):
        name = name[: -len(_SCHEMA_SUFFIX)]
    elif name.endswith(".json"):
        name = name[: -len(".json")]
    return name


def _load_all_schemas() -> dict[str, dict]:
    schemas: dict[str, dict] = {}
    for path in sorted(PROMPT_DIR.glob("*" + _SCHEMA_SUFFIX)):
        key = path.name[: -len(_SCHEMA_SUFFIX)]
        try:
            schema = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise PromptError(f"prompts/{path.name}: cannot read JSON schema: {exc}") from exc
        if not isinstance(schema, dict):
            raise PromptError(f"prompts/{path.name}: a JSON schema must be an object, got {type(schema).__name__}")
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            where = "/".join(str(p) for p in exc.path) or "(root)"
            raise PromptError(f"prompts/{path.name}: invalid JSON schema at {where}: {exc.message}") from exc
        schemas[key] = schema
    return schemas


def _all_schemas() -> dict[str, dict]:
    global _schemas
    if _schemas is None:
        with _lock:
            if _schemas is None:
                _schemas = _load_all_schemas()
    return _schemas


def schema_names() -> list[str]:
    """Names accepted by :func:`load_schema` (e.g. ``["extract", "rerank"]``)."""
    return sorted(_all_schemas())


def prompt_names() -> list[str]:
    """Names accepted by :func:`load_prompt` (e.g. ``["extract_system", "rerank_system"]``)."""
    return sorted(p.stem for p in PROMPT_DIR.glob("*.md"))


def load_schema(name: str) -> dict:
    """Return a deep copy of the validated schema ``name``.

    ``name`` may be ``"extract"``, ``"extract.schema.json"`` or ``"extract.json"``.
    Raises :class:`PromptError` if the schema does not exist or is invalid
    (all schemas are validated together on first use).
    """
    key = _schema_key(name)
    schemas = _all_schemas()
    if key not in schemas:
        raise PromptError(f"no schema named {name!r} in {PROMPT_DIR} (have: {', '.join(sorted(schemas)) or 'none'})")
    return copy.deepcopy(schemas[key])


def load_prompt(name: str) -> str:
    """Return the text of prompt ``name`` (``"extract_system"`` or ``"extract_system.md"``).

    ``"extract"`` is accepted as a short form of ``"extract_system"``.
    """
    stem = Path(name).name
    if stem.endswith(".md"):
        stem = stem[:-3]
    cached = _prompts.get(stem)
    if cached is not None:
        return cached
    candidates = [PROMPT_DIR / f"{stem}.md"]
    if not stem.endswith("_system"):
        candidates.append(PROMPT_DIR / f"{stem}_system.md")
    for path in candidates:
        if path.is_file():
            try:
                text = path.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError) as exc:
                raise PromptError(f"prompts/{path.name}: cannot read prompt: {exc}") from exc
            if not text:
                raise PromptError(f"prompts/{path.name}: prompt file is empty")
            _prompts[stem] = text
            return text
    raise PromptError(f"no prompt named {name!r} in {PROMPT_DIR} (have: {', '.join(prompt_names()) or 'none'})")
