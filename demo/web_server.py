"""Serving the web demo: uvicorn on a loopback socket that is bound before the agent loads; the CLI.

    python -m demo.web [--port 8765] [--catalog PATH] [--dataset NAME=PATH ...]

Why it is not `uvicorn.run(app)`:
- The port is bound first (a taken port is a one-line error suggesting a
  free one, not a traceback), then the server answers at once (the page, and
  503 {"error": "loading"} from the API) while the agent is built in a thread.
- uvicorn closes idle keep-alive connections, but not a connection that
  never sends a request, nor one that trickles its headers: `DemoProtocol`
  closes those after `header_timeout` (a half-sent request gets a 408), caps
  open connections (503), and answers malformed requests with JSON too.
"""
from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.h11_impl import H11Protocol

from contest.paths import add_no_cache_argument
from demo.session import DEFAULT_AGENT, ProductLookup, build_agent, dataset_paths
from demo import web
from demo.web import DemoApp, json_bytes, render_page
from demo.web_app import BODY_TIMEOUT, MAX_AGENT_QUEUE, WebState, create_app
from evaluator.data import resolve_catalog

HOST = "127.0.0.1"
BACKLOG = 2048               # the kernel queue of connections not yet accepted (the standard library's is 5)
KEEP_ALIVE = 5.0             # seconds an idle keep-alive connection stays open
HEADER_TIMEOUT = 10.0        # seconds to send a whole request line and headers
MAX_CONNECTIONS = 1000       # open connections; past it new ones get 503 and are closed
_REASONS = {400: "Bad Request", 408: "Request Timeout", 503: "Service Unavailable"}


def raw_json_response(status: int, message: str) -> bytes:
    """A complete `Connection: close` HTTP response with a JSON error (written below the ASGI app)."""
    body = json_bytes({"error": message})
    head = (f"HTTP/1.1 {status} {_REASONS[status]}\r\ncontent-type: application/json; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\ncache-control: no-store\r\n"
            "x-content-type-options: nosniff\r\n\r\n")
    return head.encode("ascii") + body


class DemoProtocol(H11Protocol):
    """uvicorn's h11 protocol plus a request-header deadline, a connection cap and JSON 400s."""

    header_timeout = HEADER_TIMEOUT
    max_connections = MAX_CONNECTIONS
    _header_timer: Any = None

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            transport.write(raw_json_response(503, "too many connections; try again shortly"))
            transport.close()
            return
        self._arm_header_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_timer()        # the next request's headers have the same deadline

    def _arm_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
        self._header_timer = self.loop.call_later(self.header_timeout, self._header_deadline)

    def _header_deadline(self) -> None:
        """No request in progress `header_timeout` after the server started waiting for one: close."""
        self._header_timer = None
        if self.transport.is_closing() or (self.cycle is not None and not self.cycle.response_complete):
            return                          # a request is being answered; the app bounds its body read
        if self.conn.trailing_data[0]:      # some bytes of a request came, not all its headers
            self.transport.write(raw_json_response(408, "request headers too slow"))
        self.transport.close()

    def send_400_response(self, msg: str) -> None:
        self.transport.write(raw_json_response(400, "invalid HTTP request"))
        self.transport.close()


def bind_socket(port: int, host: str = HOST) -> socket.socket:
    """A listening TCP socket on host:port (0: any free port); OSError if it cannot be had."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)   # not SO_REUSEPORT: a taken port stays taken
        sock.bind((host, port))
        sock.listen(BACKLOG)
    except OSError:
        sock.close()
        raise
    return sock


def bind_error_message(port: int, exc: OSError, host: str = HOST) -> str:
    """One line saying why the port cannot be used, with a free port to try when it is taken."""
    if exc.errno != errno.EADDRINUSE:
        return f"cannot listen on {host}:{port}: {exc.strerror or exc}"
    for candidate in range(port + 1, min(port + 21, 65536)):
        try:
            bind_socket(candidate, host).close()
        except OSError:
            continue
        return f"port {port} is in use; try --port {candidate}"
    return f"port {port} is in use; try --port 0 (any free port)"


def make_config(app: ASGIApp, *, keep_alive: float = KEEP_ALIVE, header_timeout: float = HEADER_TIMEOUT,
                max_connections: int = MAX_CONNECTIONS, verbose: bool = False) -> uvicorn.Config:
    """uvicorn settings for the demo: our protocol, no lifespan, no proxy headers, quiet logs."""
    protocol = type("BoundDemoProtocol", (DemoProtocol,),
                    {"header_timeout": header_timeout, "max_connections": max_connections})
    return uvicorn.Config(app, http=protocol, ws="none", lifespan="off", interface="asgi3",
                          backlog=BACKLOG, timeout_keep_alive=keep_alive, timeout_graceful_shutdown=5,
                          proxy_headers=False, server_header=False, access_log=verbose,
                          log_level="info" if verbose else "warning")


class BackgroundServer:
    """The demo served from a daemon thread (tests, scripts); the port is listening on return."""

    def __init__(self, app: ASGIApp, port: int = 0, **config: Any) -> None:
        self.sock = bind_socket(port)
        self.port: int = self.sock.getsockname()[1]
        self.url = f"http://{HOST}:{self.port}"
        self.server = uvicorn.Server(make_config(app, **config))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started and self.thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not self.server.started:
            self.stop()
            raise RuntimeError("the web server did not start")

    @classmethod
    def for_demo(cls, demo: DemoApp, port: int = 0, **config: Any) -> BackgroundServer:
        return cls(create_app(WebState.ready(demo)), port, **config)

    def stop(self, timeout: float = 15.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)
        self.sock.close()


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m demo.web", description=web.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default %(default)s; 0 = any free)")
    ap.add_argument("--catalog", help="catalog JSONL (default: as the evaluator resolves it)")
    ap.add_argument("--agent", default=DEFAULT_AGENT, help="module:Class (default %(default)s)")
    ap.add_argument("--dataset", action="append", default=[], metavar="NAME=PATH",
                    help="an extra dataset for replay mode (public and data/panels/*.jsonl are always offered)")
    ap.add_argument("--max-queue", type=int, default=MAX_AGENT_QUEUE,
                    help="agent calls waiting or running before 503 busy (default %(default)s)")
    ap.add_argument("--keep-alive", type=float, default=KEEP_ALIVE,
                    help="seconds an idle connection stays open (default %(default)s)")
    ap.add_argument("--verbose", action="store_true", help="log every request")
    ap.add_argument("--workers", type=int, default=1,
                    help="worker processes forked after the agent is loaded once (default %(default)s); "
                         "see docs/operations.md")
    ap.add_argument("--session-store", metavar="URL",
                    help="where conversations live: memory, sqlite:///PATH or postgresql://... "
                         "(default $AGENT_SESSION_STORE; with --workers > 1, a SQLite file for this run)")
    ap.add_argument("--no-preload", action="store_true", help=argparse.SUPPRESS)   # each worker loads (measurement)
    add_no_cache_argument(ap)
    return ap


def _checked(args: argparse.Namespace) -> tuple[Path, dict[str, Path]]:
    """The catalog and the extra datasets the arguments name; ValueError / FileNotFoundError say what is
    wrong (a command line's errors may name its flags)."""
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be 0-65535, got {args.port}")
    if not 1 <= args.workers <= 64:
        raise ValueError(f"--workers must be 1-64, got {args.workers}")
    catalog_path = resolve_catalog(args.catalog)
    extra = {}
    for spec in args.dataset:
        name, sep, path = spec.partition("=")
        if not sep or not name or not Path(path).is_file():
            raise ValueError(f"--dataset wants NAME=PATH of an existing file, got {spec!r}")
        extra[name] = Path(path)
    return catalog_path, extra


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        catalog_path, extra = _checked(args)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        sock = bind_socket(args.port)
    except OSError as exc:
        print(f"error: {bind_error_message(args.port, exc)}", file=sys.stderr)
        return 2
    if args.workers > 1:
        from demo.web_workers import serve
        print(f"serving http://{HOST}:{sock.getsockname()[1]}/ with {args.workers} workers (Ctrl-C to stop); "
              f"loading {catalog_path} ...", flush=True)
        return serve(sock, catalog_path, args.agent, extra, args.workers, args.session_store,
                     lambda app: make_config(app, keep_alive=args.keep_alive, verbose=args.verbose),
                     preload=not args.no_preload, max_queue=args.max_queue)
    if args.session_store:
        os.environ["AGENT_SESSION_STORE"] = args.session_store
    return _serve_one(sock, args, catalog_path, extra)


def _serve_one(sock: socket.socket, args: argparse.Namespace, catalog_path: Path, extra: dict[str, Path]) -> int:
    """One process: the server answers at once (503 loading) while a thread builds the agent."""
    state = WebState(render_page(str(catalog_path)))
    server = uvicorn.Server(make_config(create_app(state, max_agent_queue=args.max_queue, body_timeout=BODY_TIMEOUT),
                                        keep_alive=args.keep_alive, verbose=args.verbose))
    lookups: list[ProductLookup] = []

    def load() -> None:
        """Build the agent while the server already answers (503 loading from the API)."""
        t0 = time.perf_counter()
        try:
            lookups.append(ProductLookup(catalog_path))
            agent = build_agent(catalog_path, args.agent)
            state.demo = DemoApp(agent, lookups[0], dataset_paths(extra), str(catalog_path))
        except Exception as exc:
            state.failed = repr(exc)
            print(f"error: the agent failed to load: {repr(exc)[:300]}", file=sys.stderr, flush=True)
            server.should_exit = True
            return
        print(f"agent ready in {time.perf_counter() - t0:.1f} s", flush=True)

    print(f"serving http://{HOST}:{sock.getsockname()[1]}/ (Ctrl-C to stop); loading {catalog_path} ...",
          flush=True)
    threading.Thread(target=load, name="load-agent", daemon=True).start()
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        for lookup in lookups:
            lookup.close()
    return 1 if state.failed else 0


if __name__ == "__main__":
    sys.exit(main())
