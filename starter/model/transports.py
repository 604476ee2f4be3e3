"""Talking to a model server: Ollama (official client) or any OpenAI-compatible server (stdlib).

Every request runs under a deadline (a worker thread plus the transport's own
socket timeout, so even a slow-dribbling server or a hanging DNS lookup cannot
hold a turn).  Failures are raised as `TransportError` with an `ErrorKind`;
the client turns them into typed replies.
"""
from __future__ import annotations

import json
import logging
import re
import threading
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Callable

from starter.model.replies import ErrorKind, short
from starter.model.settings import LLMConfig

log = logging.getLogger(__name__)

#: Hard cap on generated tokens per request (a schema-shaped reply needs far less).
MAX_OUTPUT_TOKENS = 1024


class TransportError(Exception):
    """Could not get a reply at all (no repair retry for these)."""

    def __init__(self, message: str, kind: ErrorKind, status: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.detail = detail


def is_loopback(url: str) -> bool:
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    return host in ("localhost", "::1") or host.startswith("127.")


def _opener(url: str) -> urllib.request.OpenerDirector:
    # Never send a loopback request through an HTTP proxy from the environment.
    if is_loopback(url):
        return urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return urllib.request.build_opener()


def with_deadline(fn: Callable[[], Any], seconds: float, what: str) -> Any:
    """Run ``fn`` in a worker thread and give up after ``seconds`` (TransportError, kind timeout)."""
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
        raise TransportError(f"timeout: no reply to {what} within {seconds:.2f}s", ErrorKind.TIMEOUT)
    if "error" in box:
        raise box["error"]
    return box.get("value")


def describe(exc: BaseException) -> tuple[str, ErrorKind]:
    """A short text and a kind for any exception."""
    name = type(exc).__name__
    text = str(exc) or repr(exc)
    lowered = (name + " " + text).lower()
    if "timed out" in lowered or "timeout" in lowered:
        return f"timeout: {name}: {short(text, 200)}", ErrorKind.TIMEOUT
    return f"{name}: {short(text, 300)}", ErrorKind.OTHER


def as_transport_error(exc: BaseException, kind: ErrorKind = ErrorKind.CONNECTION) -> TransportError:
    text, got = describe(exc)
    return TransportError(text, ErrorKind.TIMEOUT if got is ErrorKind.TIMEOUT else kind)


class OllamaTransport:
    """``/api/chat`` with ``format=<schema>`` and ``/api/embed`` through the official ``ollama`` client."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._think_ok = True  # cleared if the server refuses the ``think`` field

    def _client(self, budget: float) -> Any:
        import ollama

        # One client per call: its socket timeout is what is left of this call's deadline.
        return ollama.Client(host=self.config.ollama_url, timeout=budget,
                             trust_env=not is_loopback(self.config.ollama_url))

    def chat(self, messages: list[dict], schema: dict, name: str, budget: float) -> tuple[str, Any, Any]:
        import ollama

        client = self._client(budget)
        kwargs: dict[str, Any] = {"model": self.config.model, "messages": messages, "format": schema,
                                  "options": {"temperature": 0, "num_predict": MAX_OUTPUT_TOKENS}, "stream": False}
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
            raise TransportError(f"HTTP {exc.status_code} from ollama: {short(exc.error, 300)}", ErrorKind.HTTP,
                                 exc.status_code) from None
        except ConnectionError as exc:
            raise TransportError(f"connection failed to {self.config.ollama_url}: {short(str(exc), 200)}",
                                 ErrorKind.CONNECTION) from None
        except Exception as exc:  # httpx timeouts, protocol errors, bad JSON bodies
            raise as_transport_error(exc) from None
        message = getattr(response, "message", None)
        content = getattr(message, "content", None)
        return content, getattr(response, "prompt_eval_count", None), getattr(response, "eval_count", None)

    def embed(self, texts: list[str], budget: float) -> tuple[Any, Any]:
        import ollama

        client = self._client(budget)
        try:
            response = client.embed(model=self.config.embed_model, input=texts)
        except ollama.ResponseError as exc:
            raise TransportError(f"HTTP {exc.status_code} from ollama embed: {short(exc.error, 300)}",
                                 ErrorKind.HTTP, exc.status_code) from None
        except ConnectionError as exc:
            raise TransportError(f"connection failed to {self.config.ollama_url}: {short(str(exc), 200)}",
                                 ErrorKind.CONNECTION) from None
        except Exception as exc:  # noqa: BLE001
            raise as_transport_error(exc) from None
        vectors = getattr(response, "embeddings", None)
        return ([list(v) for v in vectors] if vectors is not None else None), getattr(response, "prompt_eval_count",
                                                                                        None)

    def health_url(self) -> tuple[str, dict[str, str]]:
        return self.config.ollama_url.rstrip("/") + "/api/tags", {"Accept": "application/json"}


class OpenAITransport:
    """``/v1/chat/completions`` with ``response_format`` (llama.cpp, vLLM, LM Studio), over urllib."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        # OpenAI-style ``json_schema`` response_format, or -- for servers that only know the
        # older ``{"type": "json_object", "schema": ...}`` form (llama-cpp-python's server) --
        # ``json_object``; switched once, automatically, when the server rejects the first.
        self.response_format = "json_schema"

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.config.openai_api_key:
            headers["Authorization"] = f"Bearer {self.config.openai_api_key}"
        return headers

    def _post_json(self, url: str, body: dict, budget: float) -> dict:
        headers = dict(self._headers(), **{"Content-Type": "application/json"})
        request = urllib.request.Request(url, data=json.dumps(body).encode("utf-8"), headers=headers, method="POST")
        try:
            with _opener(url).open(request, timeout=budget) as response:
                payload = response.read()
        except urllib.error.HTTPError as exc:
            try:
                detail = exc.read().decode("utf-8", "replace")
            except Exception:  # noqa: BLE001
                detail = ""
            raise TransportError(f"HTTP {exc.code} from {url}: {short(detail or exc.reason, 300)}", ErrorKind.HTTP,
                                 exc.code, detail) from None
        except urllib.error.URLError as exc:
            reason = describe(exc.reason)[0] if isinstance(exc.reason, BaseException) else exc.reason
            kind = ErrorKind.TIMEOUT if "timeout" in str(reason).lower() else ErrorKind.CONNECTION
            raise TransportError(f"connection failed to {url}: {reason}", kind) from None
        except Exception as exc:  # socket.timeout, RemoteDisconnected, ConnectionResetError, ...
            raise as_transport_error(exc) from None
        try:
            data = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise TransportError(f"server body from {url} is not JSON: {exc}", ErrorKind.CONNECTION) from None
        if not isinstance(data, dict):
            raise TransportError(f"server body from {url} is not a JSON object", ErrorKind.CONNECTION)
        return data

    def _format(self, schema: dict, name: str) -> dict:
        if self.response_format == "json_object":
            return {"type": "json_object", "schema": schema}
        safe_name = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "reply"
        return {"type": "json_schema", "json_schema": {"name": safe_name, "schema": schema, "strict": True}}

    def chat(self, messages: list[dict], schema: dict, name: str, budget: float) -> tuple[str, Any, Any]:
        url = self.config.openai_base_url.rstrip("/") + "/chat/completions"
        body = {"model": self.config.model, "messages": messages, "temperature": 0, "max_tokens": MAX_OUTPUT_TOKENS,
                "stream": False, "response_format": self._format(schema, name)}
        try:
            data = self._post_json(url, body, budget)
        except TransportError as exc:
            refused = exc.status in (400, 422, 500) and "response_format" in exc.detail and "json_object" in exc.detail
            if self.response_format != "json_schema" or not refused:
                raise
            log.info("%s does not take response_format json_schema; using json_object with a schema", url)
            self.response_format = "json_object"
            body["response_format"] = self._format(schema, name)
            data = self._post_json(url, body, budget)
        try:
            content = data["choices"][0]["message"].get("content")
        except (KeyError, IndexError, TypeError, AttributeError):
            raise TransportError(f"no choices[0].message in the reply from {url}: {short(json.dumps(data), 200)}",
                                 ErrorKind.CONNECTION) from None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        return content, usage.get("prompt_tokens"), usage.get("completion_tokens")

    def health_url(self) -> tuple[str, dict[str, str]]:
        return self.config.openai_base_url.rstrip("/") + "/models", self._headers()


def probe(url: str, headers: dict[str, str], timeout: float) -> bool:
    """Does `url` answer a JSON body with a 2xx status within `timeout`?"""
    def get() -> bool:
        with _opener(url).open(urllib.request.Request(url, headers=headers), timeout=timeout) as response:
            json.loads(response.read().decode("utf-8"))
            return 200 <= response.status < 300

    return bool(with_deadline(get, timeout, "health check"))


def make_transport(config: LLMConfig) -> OllamaTransport | OpenAITransport:
    return OpenAITransport(config) if config.backend == "openai" else OllamaTransport(config)
