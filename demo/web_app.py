"""The ASGI app of the web demo (Starlette): routing, request checks, limits and JSON errors.

Why each piece is here:
- The agent is blocking, so every agent call runs in a worker thread while
  the event loop keeps answering /api/info and the page: one at a time (an
  anyio capacity limiter of 1, on top of DemoApp's agent lock) for an agent
  that is not thread-safe, else `DemoApp.agent_threads` at once (the agent
  orders its own turns; one turn's session-store I/O overlaps another's work).
  At most `max_agent_queue` agent calls wait or run; past that the answer is
  503 {"error": "busy ..."} at once instead of an ever longer queue.
- Until the agent is built every API call answers 503 {"error": "loading"};
  the page itself is served at once (it needs only the catalog label).
- Bodies are checked before any work: exact `application/json` (optionally
  `; charset=utf-8`), at most 64 KiB read within `body_timeout`, strict
  UTF-8, nesting depth at most MAX_DEPTH (deeper JSON would reach Python's
  recursion limit), and no lone surrogate in any string (a `\\ud800` escape).
- Every error is short JSON {"error": "..."}; an unexpected exception is
  logged as one line and answered 500 {"error": "internal error"}, never with
  internal data or a traceback.
- Requests must be addressed to the loopback server by Host (no DNS
  rebinding); every response carries the security headers.
"""
from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from demo.web import MAX_BODY, ApiError, DemoApp, Page, is_valid_text, json_bytes
from demo.web_chat import store_reachable

MAX_DEPTH = 32               # JSON nesting; the API's bodies are flat objects
MAX_AGENT_QUEUE = 16         # agent calls waiting or running before 503 busy
BODY_TIMEOUT = 10.0          # seconds to receive a whole request body
MAX_ERROR = 200              # characters of an error message
LOG = logging.getLogger("uvicorn.error")

SECURITY_HEADERS = [(b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"), (b"x-frame-options", b"DENY"),
                    (b"content-security-policy", b"default-src 'none'; frame-ancestors 'none'")]
_JSON_CTYPE = re.compile(r'^application/json[ \t]*(?:;[ \t]*charset[ \t]*=[ \t]*(?:utf-8|"utf-8")[ \t]*)?$', re.I)
# A JSON string (to its end, or to the end of the text if unterminated: linear time) or a bracket.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.?)*+(?:"|\Z)|[\[\]{}]', re.S)
Endpoint = Callable[[Request], Awaitable[Response]]


class WebState:
    """What the server has: the page at once, the demo once the agent is built (or why it failed)."""

    def __init__(self, page: Page, demo: DemoApp | None = None) -> None:
        self.page = page
        self.demo = demo
        self.failed: str | None = None

    @classmethod
    def ready(cls, demo: DemoApp) -> WebState:
        return cls(Page(demo.page, demo.csp), demo)


def json_response(status: int, obj: Any, headers: dict[str, str] | None = None) -> Response:
    return Response(json_bytes(obj), status, headers=headers, media_type="application/json; charset=utf-8")


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> Response:
    """{"error": message}, short; 503s say when to retry."""
    if status == 503:
        headers = {"Retry-After": "1", **(headers or {})}
    return json_response(status, {"error": message[:MAX_ERROR]}, headers)


def json_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """Bracket nesting depth of JSON text, outside strings (stops counting once past `limit`)."""
    depth = deepest = 0
    for m in _TOKEN.finditer(text):
        tok = m.group()
        if tok in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                break
        elif tok in "]}":
            depth -= 1
    return deepest


def _strings_valid(obj: Any) -> bool:
    """No lone surrogate in any key or string of a parsed (depth-checked) JSON value."""
    if isinstance(obj, str):
        return is_valid_text(obj)
    if isinstance(obj, dict):
        return all(_strings_valid(k) and _strings_valid(v) for k, v in obj.items())
    if isinstance(obj, list):
        return all(_strings_valid(v) for v in obj)
    return True


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json_object(raw: bytes) -> dict:
    """The JSON object in `raw`, or ApiError(400) saying what is wrong with it."""
    if not raw:
        raise ApiError(400, "body must be 1 byte to 64 KiB of JSON")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "body must be UTF-8") from None
    if json_depth(text) > MAX_DEPTH:
        raise ApiError(400, f"JSON nested too deeply ({MAX_DEPTH} levels at most)")
    try:
        body = json.loads(text, parse_constant=_no_constants)
    except (ValueError, RecursionError):
        raise ApiError(400, "invalid JSON") from None
    if not isinstance(body, dict):
        raise ApiError(400, "expected a JSON object")
    if not _strings_valid(body):
        raise ApiError(400, "text must be valid UTF-8 (no lone surrogates)")
    return body


async def read_json(request: Request, timeout: float) -> dict:
    """The request's JSON object, checked before any work is done."""
    if not _JSON_CTYPE.match(request.headers.get("content-type", "").strip()):
        raise ApiError(415, "send Content-Type: application/json")
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY:
        raise ApiError(413, "body must be 1 byte to 64 KiB of JSON")
    raw = bytearray()
    try:
        with anyio.fail_after(timeout):
            async for chunk in request.stream():
                raw += chunk
                if len(raw) > MAX_BODY:
                    raise ApiError(413, "body must be 1 byte to 64 KiB of JSON")
    except TimeoutError:
        raise ApiError(408, "request body too slow") from None
    return parse_json_object(bytes(raw))


class AgentQueue:
    """Agent calls in worker threads, `threads` at once (fixed at the first call), at most `size`
    waiting or running."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.pending = 0                     # only touched on the event loop thread
        self._limiter: anyio.CapacityLimiter | None = None

    async def run(self, fn: Callable[..., Any], *args: Any, threads: int = 1) -> Any:
        if self.pending >= self.size:
            raise ApiError(503, "busy: too many turns waiting; try again shortly")
        if self._limiter is None:            # made on the server's event loop
            self._limiter = anyio.CapacityLimiter(max(1, threads))
        self.pending += 1
        try:
            return await anyio.to_thread.run_sync(fn, *args, limiter=self._limiter)
        finally:
            self.pending -= 1


class Guard:
    """Outermost middleware: Host check, security headers, and no exception ever escapes."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    @staticmethod
    def host_ok(scope: Scope) -> bool:
        """Only requests addressed to this loopback server (no DNS rebinding)."""
        host = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1").lower()
        port = (scope.get("server") or ("", 0))[1]
        return host in {f"127.0.0.1:{port}", f"localhost:{port}", "127.0.0.1", "localhost"}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_secure(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                have = {k.lower() for k, _ in message.get("headers", [])}
                message["headers"] = [*message.get("headers", []),
                                      *((k, v) for k, v in SECURITY_HEADERS if k not in have)]
            await send(message)

        if not self.host_ok(scope):
            await error_response(403, "forbidden host")(scope, receive, send_secure)
            return
        try:
            await self.app(scope, receive, send_secure)
        except Exception as exc:  # one line in the log, nothing internal in the answer
            LOG.error("internal error on %s %s: %s", scope.get("method"), scope.get("path"), repr(exc)[:300])
            if not started:
                await error_response(500, "internal error")(scope, receive, send_secure)


def answers(endpoint: Endpoint) -> Endpoint:
    """ApiError -> its JSON error; a client gone mid-body -> nothing to answer."""
    async def wrapped(request: Request) -> Response:
        try:
            return await endpoint(request)
        except ApiError as exc:   # 408/413: the rest of the body is not worth waiting for
            close = {"Connection": "close"} if exc.status in (408, 413) else None
            return error_response(exc.status, str(exc), close)
        except ClientDisconnect:
            return Response(status_code=400)   # never sent: the client is gone
    return wrapped


async def favicon(request: Request) -> Response:
    return Response(b"", 204, media_type="image/x-icon")


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return error_response(exc.status_code, exc.detail.lower(), dict(exc.headers or {}))


def create_app(state: WebState, *, max_agent_queue: int = MAX_AGENT_QUEUE,
               body_timeout: float = BODY_TIMEOUT) -> ASGIApp:
    """The demo's ASGI app over `state` (whose `demo` may be filled in later)."""
    agent_queue = AgentQueue(max_agent_queue)

    def demo() -> DemoApp:
        if state.demo is None:
            raise ApiError(503, "loading" if state.failed is None else "the agent failed to load")
        return state.demo

    async def page(request: Request) -> Response:
        return Response(state.page.html, 200, media_type="text/html; charset=utf-8",
                        headers={"Content-Security-Policy": state.page.csp})

    async def info(request: Request) -> Response:
        return json_response(200, demo().info())       # cheap: answered on the event loop

    async def healthz(request: Request) -> Response:
        return json_response(200, {"status": "ok", "pid": os.getpid()})     # the process answers

    async def readyz(request: Request) -> Response:
        """Ready for turns: the agent is loaded and its session store answers (a balancer's check)."""
        app = demo()
        if not await run_in_threadpool(store_reachable, app.agent):
            raise ApiError(503, "session store unavailable")
        return json_response(200, {"ready": True, "pid": os.getpid()})

    async def sessions(request: Request) -> Response:
        app = demo()
        dataset = request.query_params.get("dataset", "public")
        return json_response(200, await run_in_threadpool(app.sessions, dataset))

    def post(name: str, uses_agent: bool) -> Endpoint:
        async def endpoint(request: Request) -> Response:
            app = demo()
            body = await read_json(request, body_timeout)
            fn = getattr(app, name)
            result = await (agent_queue.run(fn, body, threads=app.agent_threads) if uses_agent
                            else run_in_threadpool(fn, body))
            return json_response(200, result)
        return endpoint

    routes = [Route("/", answers(page), methods=["GET"]),
              Route("/index.html", answers(page), methods=["GET"]),
              Route("/favicon.ico", answers(favicon), methods=["GET"]),
              Route("/api/info", answers(info), methods=["GET"]),
              Route("/healthz", answers(healthz), methods=["GET"]),
              Route("/readyz", answers(readyz), methods=["GET"]),
              Route("/api/sessions", answers(sessions), methods=["GET"]),
              Route("/api/chat", answers(post("chat", True)), methods=["POST"]),
              Route("/api/reset", answers(post("reset", True)), methods=["POST"]),
              Route("/api/replay/start", answers(post("replay_start", True)), methods=["POST"]),
              Route("/api/replay/step", answers(post("replay_step", False)), methods=["POST"])]
    app = Starlette(routes=routes, middleware=[Middleware(Guard)],
                    exception_handlers={HTTPException: http_error})
    app.state.agent_queue = agent_queue   # for tests and the bench
    return app
