"""What a model call gives back: typed replies and error kinds, and the JSON repair of model text.

Nothing here talks to a server.  `LLMReply` carries schema-valid data or a
typed error; `EmbedReply` the same for embeddings.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

import logging

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

log = logging.getLogger(__name__)


class ErrorKind(str, Enum):
    """Why a model call gave no data."""

    TIMEOUT = "timeout"          # the deadline passed
    CONNECTION = "connection"    # no server, refused, reset, not a JSON body
    HTTP = "http"                # the server answered with an error status
    INVALID = "invalid"          # the reply was not schema-valid JSON (after the repair attempt)
    SETUP = "setup"              # a local backend is not installed or configured
    OTHER = "other"


def _zero_usage() -> dict[str, int]:
    return {"prompt_tokens": 0, "completion_tokens": 0}


@dataclass
class LLMReply:
    """Result of one chat call (repair retry included).

    ``data`` is a dict that validated against the schema, or ``None``;
    ``error`` / ``error_kind`` say why when ``data`` is ``None``;
    ``usage`` sums the server's token counts over every attempt;
    ``attempts`` is the number of requests sent; ``raw`` is the last reply text.
    """

    data: dict | None = None
    usage: dict = field(default_factory=_zero_usage)
    error: str | None = None
    error_kind: ErrorKind | None = None
    attempts: int = 0
    latency_ms: float = 0.0
    raw: str | None = None

    @property
    def ok(self) -> bool:
        return self.data is not None


@dataclass
class EmbedReply:
    """Result of one embedding call: L2-normalised vectors, or an error."""

    vectors: list[list[float]] | None
    usage: dict = field(default_factory=_zero_usage)
    error: str | None = None
    error_kind: ErrorKind | None = None

    @property
    def ok(self) -> bool:
        return self.vectors is not None


def add_usage(total: dict, prompt: Any, completion: Any, max_prompt: int, max_completion: int) -> None:
    """Add a server's token counts: non-negative numbers no larger than is plausible for what was
    sent (a token is at least one character of the prompt; the reply is capped), else nothing."""
    for key, value, bound in (("prompt_tokens", prompt, max_prompt), ("completion_tokens", completion,
                                                                       max_completion)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= bound:
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > bound:
                log.warning("ignoring an implausible %s count %r from the model server (at most %d)", key, value,
                            bound)
            continue
        total[key] += int(value)


def short(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", str(text)).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\r?\n?(.*?)```", re.DOTALL)


def strip_model_text(text: str) -> str:
    """Drop ``<think>...</think>`` blocks and a ```json fence around the payload."""
    text = _THINK_BLOCK.sub("", text)
    # A stray closing tag: everything before it was reasoning.
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    # An unterminated opening tag (reply cut off, or the JSON follows the reasoning).
    m = _THINK_OPEN.search(text)
    if m is not None:
        brace = text.find("{", m.end())
        text = text[: m.start()] + (text[brace:] if brace >= 0 else "")
    fence = _FENCE.search(text)
    if fence is not None:
        text = fence.group(1)
    return text.strip()


def parse_json_reply(text: str | None) -> tuple[Any, str | None]:
    """Parse a model reply into a JSON value: ``(value, None)`` or ``(None, error)``.

    Think blocks and code fences are stripped first; if the rest is not JSON as a
    whole, the first JSON object in it is taken (models like a preamble).
    """
    if text is None:
        return None, "empty reply (no content)"
    cleaned = strip_model_text(text)
    if not cleaned:
        return None, "empty reply"
    try:
        return json.loads(cleaned), None
    except json.JSONDecodeError as exc:
        first_error = f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    start = cleaned.find("{")
    if start >= 0:
        try:
            value, _ = json.JSONDecoder().raw_decode(cleaned, start)
            return value, None
        except json.JSONDecodeError:
            pass
    return None, first_error


def schema_error(schema: dict, value: Any) -> str | None:
    error = best_match(Draft202012Validator(schema).iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    message = error.message
    if len(message) > 240:
        message = message[:237] + "..."
    return f"schema violation at /{where}: {message}"
