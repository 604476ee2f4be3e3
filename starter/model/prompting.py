"""The user turns of the model's two tasks, and reading a rerank reply."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from starter.model.replies import LLMReply, short as _short

#: Message and context texts are cut to these lengths before they reach a prompt.
MAX_MESSAGE_CHARS = 2000
MAX_CONTEXT_CHARS = 400
MAX_CANDIDATE_CHARS = 400


def format_extract_user(message: str, context: Mapping[str, Any] | None = None) -> str:
    """The user turn for :meth:`LLMClient.extract`.

    ``context`` may hold ``shelf`` (the category being browsed), ``known``
    (constraints already known: a string or a list of strings) and ``asked``
    (the attribute the agent asked about last); any other key is shown as
    ``key: value``.  Every context value is cut short; the prompt tells the
    model never to copy from the context.
    """
    lines: list[str] = []
    context = dict(context or {})
    labels = {"shelf": "shelf the shopper is on", "known": "already known", "asked": "the agent last asked about"}
    for key in ("shelf", "known", "asked"):
        value = context.pop(key, None)
        if value is None or value == "" or value == []:
            continue
        if isinstance(value, (list, tuple, set)):
            value = "; ".join(str(v) for v in value if v is not None and str(v).strip())
        lines.append(f"Context - {labels[key]}: {_short(value, MAX_CONTEXT_CHARS)}")
    for key, value in context.items():
        if value is None or value == "" or value == []:
            continue
        if isinstance(value, (list, tuple, set)):
            value = "; ".join(str(v) for v in value)
        lines.append(f"Context - {_short(key, 40)}: {_short(value, MAX_CONTEXT_CHARS)}")
    msg = str(message or "")
    if len(msg) > MAX_MESSAGE_CHARS:
        msg = msg[:MAX_MESSAGE_CHARS]
    lines.append(f"Message: {msg}")
    return "\n".join(lines)


def format_rerank_user(needs: str, candidates: Sequence[str]) -> str:
    """The user turn for :meth:`LLMClient.rerank` (candidates numbered from 1)."""
    lines = [f"Shopper needs: {_short(needs, MAX_MESSAGE_CHARS) or '(nothing stated yet)'}", "", "Candidates:"]
    for i, text in enumerate(candidates, start=1):
        lines.append(f"[{i}] {_short(text, MAX_CANDIDATE_CHARS)}")
    lines += ["", f"Score all {len(candidates)} candidates, index 1 to {len(candidates)}."]
    return "\n".join(lines)


def rerank_scores(reply: LLMReply, n: int) -> list[int | None]:
    """Scores from a :meth:`LLMClient.rerank` reply, by candidate position (0-based).

    Positions the model did not score (or any, if the reply failed) are ``None``;
    if an index repeats, the first score wins.
    """
    out: list[int | None] = [None] * n
    if reply.data is None:
        return out
    for item in reply.data.get("scores", []):
        i = item.get("index")
        if isinstance(i, int) and 1 <= i <= n and out[i - 1] is None:
            out[i - 1] = item.get("score")
    return out
