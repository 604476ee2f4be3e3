"""A scripted stand-in for a model server, for tests of ``starter/llm.py``.

Speaks enough of two HTTP APIs on 127.0.0.1 (a free port):

- Ollama: ``POST /api/chat``, ``POST /api/embed``, ``GET /api/tags``, ``GET /api/version``
- OpenAI-compatible: ``POST /v1/chat/completions``, ``POST /v1/embeddings``, ``GET /v1/models``

POST replies come from a queue that each test fills, in order:

- :meth:`FakeLLMServer.push_chat` -- a model reply text with token counts; wrapped
  in the envelope of whichever chat endpoint is hit, so one script serves both backends;
- :meth:`FakeLLMServer.push_embed` -- embedding vectors;
- :meth:`FakeLLMServer.push_raw` -- an exact HTTP body and status;
- :meth:`FakeLLMServer.push_close` -- drop the connection without answering.

Every reply may carry a ``delay`` (seconds before answering).  A POST with an
empty queue gets HTTP 500 ``"no scripted reply"``, so an unexpected extra
request shows up as a failure.  Every request is recorded in
:attr:`FakeLLMServer.requests` (method, path, headers, parsed JSON body).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    kind: str  # "chat" | "embed" | "raw" | "close"
    content: Any = None
    status: int = 200
    delay: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict
    body: Any
    at: float = field(default_factory=time.monotonic)


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return raw.decode("utf-8", "replace")

    def _send(self, status: int, body: str | bytes, content_type: str = "application/json") -> None:
        data = body.encode("utf-8") if isinstance(body, str) else body
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests)

    def do_GET(self) -> None:
        fake = self.server.fake
        fake._record(Recorded("GET", self.path, dict(self.headers), None))
        if self.path == "/api/tags":
            self._send(200, json.dumps({"models": [{"name": m, "model": m} for m in fake.models]}))
        elif self.path == "/api/version":
            self._send(200, json.dumps({"version": "0.9.0"}))
        elif self.path == "/v1/models":
            self._send(200, json.dumps({"object": "list", "data": [{"id": m, "object": "model"} for m in fake.models]}))
        else:
            self._send(404, json.dumps({"error": f"not found: {self.path}"}))

    def do_POST(self) -> None:
        fake = self.server.fake
        body = self._read_body()
        fake._record(Recorded("POST", self.path, dict(self.headers), body))
        if self.path not in ("/api/chat", "/api/embed", "/v1/chat/completions", "/v1/embeddings"):
            self._send(404, json.dumps({"error": f"not found: {self.path}"}))
            return
        reply = fake._pop()
        if reply is None:
            self._send(500, json.dumps({"error": "no scripted reply"}))
            return
        if reply.delay > 0 and fake._stopping.wait(reply.delay):
            self.close_connection = True
            return
        if reply.kind == "close":
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if reply.kind == "raw":
            self._send(reply.status, reply.content if isinstance(reply.content, (str, bytes)) else json.dumps(reply.content))
            return
        model = body.get("model", "") if isinstance(body, dict) else ""
        if reply.kind == "embed":
            vectors = reply.content
            if self.path == "/api/embed":
                payload = {"model": model, "embeddings": vectors}
                if reply.prompt_tokens is not None:
                    payload["prompt_eval_count"] = reply.prompt_tokens
            else:
                payload = {
                    "object": "list",
                    "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)],
                    "usage": {"prompt_tokens": reply.prompt_tokens or 0, "total_tokens": reply.prompt_tokens or 0},
                }
            self._send(reply.status, json.dumps(payload))
            return
        # chat
        if self.path == "/api/chat":
            payload = {
                "model": model,
                "created_at": "2026-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": reply.content},
                "done": True,
                "done_reason": "stop",
            }
            if reply.prompt_tokens is not None:
                payload["prompt_eval_count"] = reply.prompt_tokens
            if reply.completion_tokens is not None:
                payload["eval_count"] = reply.completion_tokens
        elif self.path == "/v1/chat/completions":
            payload = {
                "id": "chatcmpl-fake",
                "object": "chat.completion",
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply.content}, "finish_reason": "stop"}],
            }
            if reply.prompt_tokens is not None or reply.completion_tokens is not None:
                p, c = reply.prompt_tokens or 0, reply.completion_tokens or 0
                payload["usage"] = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
        else:
            self._send(400, json.dumps({"error": f"a chat reply was scripted but {self.path} was called"}))
            return
        self._send(reply.status, json.dumps(payload))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: "FakeLLMServer"


class FakeLLMServer:
    """Start with :meth:`start` (or use as a context manager); stop with :meth:`stop`."""

    def __init__(self, models: list[str] | None = None) -> None:
        self.models = list(models or ["fake-model", "all-minilm"])
        self.requests: list[Recorded] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None

    # lifecycle
    def start(self) -> "FakeLLMServer":
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def __enter__(self) -> "FakeLLMServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """Base URL for Ollama (``OLLAMA_URL``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """Base URL for the OpenAI-compatible API (``OPENAI_BASE_URL``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    # scripting
    def push_chat(self, content: str | dict, *, prompt_tokens: int | None = 10, completion_tokens: int | None = 5,
                  delay: float = 0.0, status: int = 200) -> None:
        """Queue a chat reply whose assistant text is ``content`` (a dict is JSON-encoded)."""
        if not isinstance(content, str):
            content = json.dumps(content)
        self._push(Reply("chat", content, status, delay, prompt_tokens, completion_tokens))

    def push_embed(self, vectors: list[list[float]], *, prompt_tokens: int | None = 4, delay: float = 0.0) -> None:
        self._push(Reply("embed", vectors, 200, delay, prompt_tokens, None))

    def push_raw(self, body: str | dict, *, status: int = 200, delay: float = 0.0) -> None:
        """Queue an exact HTTP body (e.g. an error) with ``status``."""
        self._push(Reply("raw", body, status, delay))

    def push_close(self, *, delay: float = 0.0) -> None:
        """Queue a dropped connection (no HTTP response at all)."""
        self._push(Reply("close", None, 0, delay))

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def posts(self, path: str | None = None) -> list[Recorded]:
        """Recorded POST requests, optionally only those to ``path``."""
        with self._lock:
            return [r for r in self.requests if r.method == "POST" and (path is None or r.path == path)]

    def _push(self, reply: Reply) -> None:
        with self._lock:
            self._queue.append(reply)

    def _pop(self) -> Reply | None:
        with self._lock:
            return self._queue.popleft() if self._queue else None

    def _record(self, rec: Recorded) -> None:
        with self._lock:
            self.requests.append(rec)


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
