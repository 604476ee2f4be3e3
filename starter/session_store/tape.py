"""The model's replies of a turn, recorded with its input so that a replay never asks the model again.

With `LLM_ENABLED=1` a turn's path depends on what the model answered, and a
model (or its server) need not answer the same twice.  The agent's
understanding and reranking talk to the model through one `ModelTape`: while
a turn is played live it passes every call through and records the reply;
while a stored turn is replayed it answers every call from the recording, in
order, and never reaches the model, so the rebuilt state takes the path the
original took.  A replay that asks for more than was recorded gets an error
reply (the offline fallback), never a live call.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from starter.model.replies import EmbedReply, ErrorKind, LLMReply

_KINDS = {"LLMReply": LLMReply, "EmbedReply": EmbedReply}


def reply_to_json(method: str, reply: Any) -> dict:
    fields = dataclasses.asdict(reply)
    if fields.get("error_kind") is not None:
        fields["error_kind"] = ErrorKind(fields["error_kind"]).value
    return {"method": method, "type": type(reply).__name__, "reply": fields}


def reply_from_json(record: dict) -> Any:
    cls = _KINDS[record["type"]]
    fields = dict(record["reply"])
    if fields.get("error_kind") is not None:
        fields["error_kind"] = ErrorKind(fields["error_kind"])
    return cls(**fields)


def _missing(method: str) -> Any:
    error = "no recorded model reply for this replayed turn"
    if method == "embed":
        return EmbedReply(None, error=error, error_kind=ErrorKind.OTHER)
    return LLMReply(error=error, error_kind=ErrorKind.OTHER)


class ModelTape:
    """A model client that records its replies (live turns) or plays them back (replayed turns)."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self._recorded: list[dict] = []
        self._playback: list[dict] | None = None

    def start(self, playback: list | None = None, replaying: bool = False) -> None:
        """Begin a turn: live (record) or replayed from `playback` (an empty tape when none was recorded)."""
        self._recorded = []
        self._playback = list(playback or []) if replaying else None

    def take(self) -> list[dict]:
        """The replies recorded since `start` (the turn's tape)."""
        recorded, self._recorded = self._recorded, []
        return recorded

    def _call(self, method: str, *args: Any) -> Any:
        if self._playback is not None:
            if self._playback and self._playback[0].get("method") == method:
                return reply_from_json(self._playback.pop(0))
            return _missing(method)
        reply = getattr(self.client, method)(*args)
        self._recorded.append(reply_to_json(method, reply))
        return reply

    def extract(self, message: str, context: Any = None) -> LLMReply:
        return self._call("extract", message, context)

    def rerank(self, needs: str, candidates: Any) -> LLMReply:
        return self._call("rerank", needs, candidates)

    def embed(self, texts: Any) -> EmbedReply:
        return self._call("embed", texts)

    def __getattr__(self, name: str) -> Any:   # anything else (settings, health) is the client's own
        return getattr(self.client, name)
