"""A local web page to chat with the agent and watch every decision.

    python -m demo.web [--port 8765] [--catalog PATH] [--dataset NAME=PATH ...]

Standard library only (`http.server.ThreadingHTTPServer`), bound to 127.0.0.1.
One static page (demo/static/index.html, inline JS and CSS, no network) talks
to a small JSON API:

    GET  /                        the page
    GET  /api/info                catalog, datasets, perturbation modes
    GET  /api/sessions?dataset=D  sample ids and scenarios of a dataset
    POST /api/chat                {"session": id, "message": text} -> the turn, explained
    POST /api/reset               {"session": id}
    POST /api/replay/start        {"dataset": D, "sample_id": S, "perturb": "none"} -> replay id
    POST /api/replay/step         {"replay": id} -> the next turn of the evaluator session

Catalog text only ever reaches the page as JSON (with `<`, `>`, `&` escaped
as \\u003c...) and is rendered with `textContent`; the page's content
security policy allows only its own inline script (by hash), so injected
markup could neither render nor run.  The agent is built once at start-up and
every agent call holds one lock.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import html
import json
import re
import sys
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from demo.session import (DEFAULT_AGENT, ChatSession, ProductLookup, SessionError, SessionResult, build_agent,
                          dataset_paths, find_row, play_evaluator_session)
from evaluator.data import read_jsonl, resolve_catalog
from evaluator.perturb import MODES, parse_modes

PAGE_PATH = Path(__file__).with_name("static") / "index.html"
MAX_BODY = 64 * 1024
MAX_CHATS = 200
MAX_REPLAYS = 50
_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ApiError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def json_bytes(obj: Any) -> bytes:
    """JSON with the HTML-significant characters escaped (still the same JSON values)."""
    text = json.dumps(obj, ensure_ascii=False)
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    return text.encode("utf-8")


def _inline_hashes(page: str, tag: str) -> list[str]:
    """CSP sha256 sources of every inline <tag>...</tag> block of the page."""
    out = []
    for body in re.findall(rf"<{tag}>(.*?)</{tag}>", page, flags=re.S):
        digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii")
        out.append(f"'sha256-{digest}'")
    return out


@dataclass
class Replay:
    result: SessionResult
    dataset: str
    shown: int = 0


class DemoApp:
    """The state behind the API: one agent, chat sessions, replays."""

    def __init__(self, agent: Any, lookup: ProductLookup, datasets: dict[str, Path], catalog_label: str = "") -> None:
        self.agent = agent
        self.lookup = lookup
        self.datasets = datasets
        self.catalog_label = catalog_label or str(lookup.path)
        self.agent_lock = threading.Lock()   # every agent call
        self.state_lock = threading.Lock()   # the dicts below
        self.chats: OrderedDict[str, ChatSession] = OrderedDict()
        self.replays: OrderedDict[str, Replay] = OrderedDict()
        self._rows: dict[str, list[dict]] = {}
        page = PAGE_PATH.read_text(encoding="utf-8")
        self.page = page.replace("{{CATALOG}}", html.escape(self.catalog_label)).encode("utf-8")
        scripts = " ".join(_inline_hashes(page, "script"))
        styles = " ".join(_inline_hashes(page, "style"))
        self.csp = (f"default-src 'none'; script-src {scripts}; style-src {styles}; connect-src 'self'; "
                    "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")

    # ---- helpers ----------------------------------------------------------------------
    def rows(self, dataset: str) -> list[dict]:
        path = self.datasets.get(dataset)
        if path is None:
            raise ApiError(404, f"unknown dataset {dataset!r}")
        with self.state_lock:
            if dataset not in self._rows:
                self._rows[dataset] = read_jsonl(path)
            return self._rows[dataset]

    def _chat(self, session: Any, create: bool = True) -> ChatSession:
        if not isinstance(session, str) or not _ID_RE.match(session):
            raise ApiError(400, "session must be 1-64 characters of letters, digits, '-' or '_'")
        with self.state_lock:
            chat = self.chats.get(session)
            if chat is None and create:
                if len(self.chats) >= MAX_CHATS:
                    self.chats.popitem(last=False)
                chat = ChatSession(self.agent, self.lookup, session_id=f"web-{session}", lock=self.agent_lock)
                self.chats[session] = chat
            elif chat is not None:
                self.chats.move_to_end(session)
            return chat

    # ---- endpoints --------------------------------------------------------------------
    def info(self) -> dict:
        return {"catalog": self.catalog_label, "products": len(self.lookup),
                "datasets": list(self.datasets), "perturb_modes": ["none", *MODES], "max_turns": 10}

    def sessions(self, dataset: str) -> dict:
        rows = self.rows(dataset)
        return {"dataset": dataset,
                "sessions": [{"sample_id": str(r.get("sample_id")), "scenario_type": str(r.get("scenario_type"))}
                             for r in rows]}

    def chat(self, body: dict) -> dict:
        message = body.get("message")
        if not isinstance(message, str) or not message.strip():
            raise ApiError(400, "message must be a non-empty string")
        if len(message) > 2000:
            raise ApiError(400, "message too long (2000 characters at most)")
        chat = self._chat(body.get("session"))
        try:
            view = chat.send(message.strip())
        except SessionError as exc:
            raise ApiError(409, str(exc)) from None
        return {"session": body["session"], "turn": view.turn, "done": chat.done, "view": view.to_dict()}

    def reset(self, body: dict) -> dict:
        chat = self._chat(body.get("session"), create=False)
        if chat is not None:
            chat.reset()
        return {"session": body["session"], "reset": True}

    def replay_start(self, body: dict) -> dict:
        dataset, sample_id = body.get("dataset"), body.get("sample_id")
        if not isinstance(dataset, str) or not isinstance(sample_id, str):
            raise ApiError(400, "dataset and sample_id must be strings")
        perturb = body.get("perturb", "none")
        try:
            modes = parse_modes(perturb if isinstance(perturb, str) else "")
            index, row = find_row(self.rows(dataset), sample_id)
        except (ValueError, SessionError) as exc:
            raise ApiError(400, str(exc)) from None
        label = "+".join(sorted(modes)) or "none"
        with self.agent_lock:
            try:
                result = play_evaluator_session(self.agent, self.lookup, row, index, modes, 0.35, label)
            except SessionError as exc:
                raise ApiError(400, str(exc)) from None
        replay_id = uuid.uuid4().hex[:16]
        with self.state_lock:
            if len(self.replays) >= MAX_REPLAYS:
                self.replays.popitem(last=False)
            self.replays[replay_id] = Replay(result, dataset)
        return {"replay": replay_id, "dataset": dataset, "sample_id": result.sample_id,
                "scenario_type": result.scenario_type, "perturb": label, "target": result.target,
                "turns": len(result.turns)}

    def replay_step(self, body: dict) -> dict:
        replay_id = body.get("replay")
        with self.state_lock:
            rep = self.replays.get(replay_id) if isinstance(replay_id, str) else None
            if rep is None:
                raise ApiError(404, "unknown replay; start one first")
            if rep.shown >= len(rep.result.turns):
                raise ApiError(409, "replay finished")
            view = rep.result.turns[rep.shown]
            rep.shown += 1
            last = rep.shown >= len(rep.result.turns)
        return {"replay": replay_id, "step": rep.shown, "turns": len(rep.result.turns), "last": last,
                "view": view.to_dict(), "outcome": rep.result.outcome() if last else None}


class Handler(BaseHTTPRequestHandler):
    server_version = "techjam-demo/1"
    app: DemoApp  # set on the subclass made by make_server

    # quiet by default; `--verbose` turns request logs on
    verbose = False

    def log_message(self, fmt: str, *args: Any) -> None:
        if self.verbose:
            super().log_message(fmt, *args)

    def _headers(self, status: int, ctype: str, length: int, extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(length))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("X-Frame-Options", "DENY")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()

    def _json(self, status: int, obj: Any) -> None:
        data = json_bytes(obj)
        self._headers(status, "application/json; charset=utf-8", len(data))
        self.wfile.write(data)

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"error": message})

    def _host_ok(self) -> bool:
        """Only requests addressed to this loopback server (no DNS rebinding)."""
        host = (self.headers.get("Host") or "").lower()
        port = self.server.server_address[1]
        return host in {f"127.0.0.1:{port}", f"localhost:{port}", "127.0.0.1", "localhost"}

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        if not self._host_ok():
            return self._error(403, "forbidden host")
        url = urlsplit(self.path)
        try:
            if url.path in ("/", "/index.html"):
                page = self.app.page
                self._headers(200, "text/html; charset=utf-8", len(page), {"Content-Security-Policy": self.app.csp})
                self.wfile.write(page)
            elif url.path == "/api/info":
                self._json(200, self.app.info())
            elif url.path == "/api/sessions":
                dataset = parse_qs(url.query).get("dataset", ["public"])[0]
                self._json(200, self.app.sessions(dataset))
            elif url.path == "/favicon.ico":
                self._headers(204, "image/x-icon", 0)
            else:
                self._error(404, "not found")
        except ApiError as exc:
            self._error(exc.status, str(exc))

    def do_POST(self) -> None:  # noqa: N802
        if not self._host_ok():
            return self._error(403, "forbidden host")
        routes = {"/api/chat": self.app.chat, "/api/reset": self.app.reset,
                  "/api/replay/start": self.app.replay_start, "/api/replay/step": self.app.replay_step}
        fn = routes.get(urlsplit(self.path).path)
        if fn is None:
            return self._error(404, "not found")
        if not (self.headers.get("Content-Type") or "").lower().startswith("application/json"):
            return self._error(415, "send application/json")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            return self._error(400, "bad Content-Length")
        if length <= 0 or length > MAX_BODY:
            return self._error(413 if length > MAX_BODY else 400, "body must be 1 byte to 64 KiB of JSON")
        try:
            body = json.loads(self.rfile.read(length))
        except (ValueError, UnicodeDecodeError):
            return self._error(400, "invalid JSON")
        if not isinstance(body, dict):
            return self._error(400, "expected a JSON object")
        try:
            self._json(200, fn(body))
        except ApiError as exc:
            self._error(exc.status, str(exc))
        except Exception as exc:  # keep serving; report the fault
            self._error(500, f"internal error: {exc!r}")


def make_server(app: DemoApp, port: int = 0, verbose: bool = False) -> ThreadingHTTPServer:
    """A server on 127.0.0.1:`port` (0: any free port) serving `app`."""
    handler = type("BoundHandler", (Handler,), {"app": app, "verbose": verbose})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    return server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m demo.web", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=8765, help="port on 127.0.0.1 (default %(default)s; 0 = any free)")
    ap.add_argument("--catalog", help="catalog JSONL (default: as the evaluator resolves it)")
    ap.add_argument("--agent", default=DEFAULT_AGENT, help="module:Class (default %(default)s)")
    ap.add_argument("--dataset", action="append", default=[], metavar="NAME=PATH",
                    help="an extra dataset for replay mode (public and data/panels/*.jsonl are always offered)")
    ap.add_argument("--verbose", action="store_true", help="log every request")
    args = ap.parse_args(argv)
    try:
        catalog_path = resolve_catalog(args.catalog)
        extra = {}
        for spec in args.dataset:
            name, sep, path = spec.partition("=")
            if not sep or not name or not Path(path).is_file():
                raise ValueError(f"--dataset wants NAME=PATH of an existing file, got {spec!r}")
            extra[name] = Path(path)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    print(f"loading {catalog_path} ...", file=sys.stderr, flush=True)
    lookup = ProductLookup(catalog_path)
    agent = build_agent(catalog_path, args.agent)
    app = DemoApp(agent, lookup, dataset_paths(extra), str(catalog_path))
    server = make_server(app, args.port, args.verbose)
    host, port = server.server_address[:2]
    print(f"agent ready in {time.perf_counter() - t0:.1f} s; serving http://{host}:{port}/ (Ctrl-C to stop)",
          flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        lookup.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
