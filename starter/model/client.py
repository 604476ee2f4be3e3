"""The model client: schema-constrained chat with one repair, the two tasks, embeddings, health.

Everything a model says comes back as data already parsed and validated
against a JSON schema -- or as ``data=None`` with a typed error.  Nothing here
raises on a network or model failure, and every call respects ``LLM_TIMEOUT``
as a total deadline (repair retry included).  What the reply means (is a
value really in the message? in the catalogue?) is checked by grounding.
"""
from __future__ import annotations

import logging
import time
from typing import Any, Mapping, Sequence

from starter.model.backoff import Backoff
from starter.model.embeddings import LocalEmbedder
from starter.model.prompting import MAX_MESSAGE_CHARS, format_extract_user, format_rerank_user
from starter.model.replies import (EmbedReply, ErrorKind, LLMReply, add_usage, parse_json_reply, schema_error)
from starter.model.settings import MAX_RERANK_CANDIDATES, LLMConfig
from starter.model.transports import (MAX_OUTPUT_TOKENS, OllamaTransport, TransportError, describe, make_transport,
                                      probe, with_deadline)

log = logging.getLogger(__name__)

#: The repair attempt is skipped when less than this is left of the deadline.
MIN_ATTEMPT_SECONDS = 0.05
#: Health checks never wait longer than this, and are cached this long.
HEALTH_TIMEOUT = 1.0
HEALTH_CACHE_SECONDS = 30.0
#: Chat templates add a few hundred tokens around the messages a server counts.
PROMPT_OVERHEAD_TOKENS = 512


class LLMClient:
    """Schema-constrained chat, rerank and embedding calls; never raises on I/O.

    Safe to construct when no server runs: nothing connects until a call.
    """

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self.transport = make_transport(config)
        self._ollama_embed = OllamaTransport(config)
        self._local = LocalEmbedder(config.embed_model)
        self._health: tuple[float, bool] | None = None
        self.backoff = Backoff()

    # ------------------------------------------------------------------ chat
    def chat_json(self, system: str, user: str, schema: dict, *, name: str = "chat") -> LLMReply:
        """Ask for one JSON object matching ``schema``; validate it; repair once.

        On invalid JSON or a schema violation the model gets its reply back with
        the error and one chance to correct it.  Connection errors, HTTP errors
        and timeouts end the call at once.
        """
        started = time.monotonic()
        deadline = started + self.config.timeout
        reply = self._paused()
        if reply.error:
            return reply
        messages: list[dict] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        last_problem: str | None = None
        after = ""
        for attempt in (1, 2):
            remaining = deadline - time.monotonic()
            if remaining < MIN_ATTEMPT_SECONDS:
                reply.error = (f"timeout: {self.config.timeout:g}s budget used up before attempt {attempt}"
                               + (f" (after: {last_problem})" if last_problem else ""))
                reply.error_kind = ErrorKind.TIMEOUT
                break
            reply.attempts += 1
            try:
                content, prompt_tokens, completion_tokens = with_deadline(
                    lambda: self.transport.chat(messages, schema, name, remaining), remaining, name)
            except TransportError as exc:
                reply.error, reply.error_kind = str(exc) + after, exc.kind
                break
            except Exception as exc:  # noqa: BLE001 - never raise out of the client
                text, kind = describe(exc)
                reply.error, reply.error_kind = text + after, kind
                break
            add_usage(reply.usage, prompt_tokens, completion_tokens,
                      max_prompt=sum(len(str(m["content"])) for m in messages) + PROMPT_OVERHEAD_TOKENS,
                      max_completion=2 * MAX_OUTPUT_TOKENS)
            reply.raw = content
            value, problem = parse_json_reply(content)
            if problem is None:
                problem = schema_error(schema, value)
            if problem is None:
                reply.data, reply.error, reply.error_kind = value, None, None
                break
            log.debug("llm %s attempt %d invalid: %s", name, attempt, problem)
            reply.error_kind = ErrorKind.INVALID
            if attempt == 2:
                reply.error = f"invalid reply twice: {problem} (first: {last_problem})"
                break
            last_problem = problem
            after = f" (repair attempt, after: {last_problem})"
            reply.error = problem
            messages = messages + [
                {"role": "assistant", "content": (content or "")[:MAX_MESSAGE_CHARS]},
                {"role": "user", "content": (f"Your reply was not valid: {problem}. Reply again with only the "
                                             "corrected JSON object: it must match the required schema exactly, "
                                             "with no other text.")},
            ]
        reply.latency_ms = round((time.monotonic() - started) * 1000.0, 1)
        self._note_outcome(reply, name)
        return reply

    def _paused(self) -> LLMReply:
        """An empty reply, with an error while the server's back-off pause lasts (nothing is tried)."""
        pause = self.backoff.waiting()
        if not pause:
            return LLMReply()
        return LLMReply(error=f"model server unavailable: not tried again for {pause:.1f}s",
                        error_kind=ErrorKind.CONNECTION)

    def _note_outcome(self, reply: LLMReply, name: str) -> None:
        """Warn about a failure once per outage of the server; start or end its back-off."""
        if reply.error_kind is ErrorKind.CONNECTION:
            if self.backoff.failed():
                log.warning("llm %s: server unavailable (%s); the parser answers, and the server is tried again "
                            "after a pause that grows while it stays down", name, reply.error)
            else:
                log.debug("llm %s still unavailable: %s", name, reply.error)
            return
        if reply.attempts and self.backoff.succeeded():
            log.warning("llm %s: server answers again", name)
        if reply.error:
            log.warning("llm %s failed after %d attempt(s) in %.0f ms: %s", name, reply.attempts, reply.latency_ms,
                        reply.error)

    # ------------------------------------------------------------------ tasks
    def extract(self, message: str, context: Mapping[str, Any] | None = None) -> LLMReply:
        """Turn one shopper message into the ``prompts/extract.schema.json`` shape (values unchecked)."""
        from prompts import load_prompt, load_schema

        return self.chat_json(load_prompt("extract_system"), format_extract_user(message, context),
                              load_schema("extract"), name="extraction")

    def rerank(self, needs: str, candidates: Sequence[str]) -> LLMReply:
        """Listwise scores 0..4 for ``candidates``; the schema is narrowed to exactly their number.

        ``data["scores"]`` holds ``{"index": i, "score": s}`` with ``i`` from 1; see
        `prompting.rerank_scores`.  At most 50 candidates are sent.
        """
        from prompts import load_prompt, load_schema

        items = [str(c) for c in candidates][:MAX_RERANK_CANDIDATES]
        if len(candidates) > MAX_RERANK_CANDIDATES:
            log.warning("rerank: %d candidates given, only the first %d are scored", len(candidates),
                        MAX_RERANK_CANDIDATES)
        if not items:
            return LLMReply(data={"scores": []})
        schema = load_schema("rerank")
        n = len(items)
        scores = schema["properties"]["scores"]
        scores["minItems"] = n
        scores["maxItems"] = n
        scores["items"]["properties"]["index"]["maximum"] = n
        return self.chat_json(load_prompt("rerank_system"), format_rerank_user(needs, items), schema, name="rerank")

    # ------------------------------------------------------------------ embeddings
    def embed(self, texts: Sequence[str]) -> EmbedReply:
        """Embed ``texts`` (Ollama's ``/api/embed`` or a local model); never raises; bounded by LLM_TIMEOUT."""
        items = [str(t) for t in texts]
        if not items:
            return EmbedReply(vectors=[])
        budget = self.config.timeout
        try:
            if self.config.embed_backend == "sentence-transformers":
                vectors, prompt_tokens = with_deadline(lambda: self._local.embed(items), budget, "embed")
            else:
                vectors, prompt_tokens = with_deadline(lambda: self._ollama_embed.embed(items, budget), budget,
                                                       "embed")
        except TransportError as exc:
            return EmbedReply(None, error=str(exc), error_kind=exc.kind)
        except Exception as exc:  # noqa: BLE001
            text, kind = describe(exc)
            return EmbedReply(None, error=text, error_kind=kind)
        reply = EmbedReply(None)
        add_usage(reply.usage, prompt_tokens, 0, max_prompt=sum(len(t) for t in items) + 16 * len(items),
                  max_completion=0)
        problem = _check_vectors(vectors, len(items))
        if problem:
            reply.error, reply.error_kind = problem, ErrorKind.INVALID
            return reply
        reply.vectors = vectors
        return reply

    def warm_up(self) -> str | None:
        """Load a local embedding model now, with no deadline (torch's first import takes seconds);
        returns an error text or ``None``.  A no-op for server backends."""
        if self.config.embed_backend != "sentence-transformers":
            return None
        try:
            self._local.embed(["warm up"])
        except TransportError as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001
            return describe(exc)[0]
        return None

    # ------------------------------------------------------------------ health
    def available(self, *, refresh: bool = False) -> bool:
        """Does the chat backend answer its model list within a second? (cached 30 s)."""
        now = time.monotonic()
        if not refresh and self._health is not None and now - self._health[0] < HEALTH_CACHE_SECONDS:
            return self._health[1]
        url, headers = self.transport.health_url()
        ok = False
        try:
            ok = probe(url, headers, min(HEALTH_TIMEOUT, self.config.timeout))
        except Exception as exc:  # noqa: BLE001
            log.debug("llm health check %s failed: %s", url, exc)
        self._health = (time.monotonic(), ok)
        return ok


def _check_vectors(vectors: Any, n: int) -> str | None:
    if not isinstance(vectors, list) or len(vectors) != n:
        got = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
        return f"embedding reply has {got} vectors for {n} texts"
    width = None
    for v in vectors:
        if not isinstance(v, list) or not v or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                         for x in v):
            return "embedding reply holds a vector that is not a non-empty list of numbers"
        if width is None:
            width = len(v)
        elif len(v) != width:
            return "embedding reply holds vectors of different lengths"
    return None
