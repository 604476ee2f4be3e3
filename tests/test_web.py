"""The web demo's server under load and abuse: each finding of the review, checked on a live server.

A fake agent whose turn blocks until the test releases it stands in for a
slow model; no test asserts a timing beyond generous bounds.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from demo_support import write_catalog

ROOT = Path(__file__).resolve().parent.parent
WAIT = 20.0   # generous bound for anything that should be quick


class SlowAgent:
    """Blocks in `respond` until `release` is set; counts its calls."""

    def __init__(self, catalog_path: str = "", blocked: bool = True) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        if not blocked:
            self.release.set()
        self.calls = 0
        self.lock = threading.Lock()

    def reset(self, session_id: str, profile: dict) -> None:
        pass

    def respond(self, session_id: str, message: str, turn: int, top_k: int) -> dict:
        with self.lock:
            self.calls += 1
        self.entered.set()
        self.release.wait(60)
        return {"message": f"you said {message}", "ask_attribute": None, "recommendations": []}


class BrokenAgent(SlowAgent):
    def reset(self, session_id: str, profile: dict) -> None:
        raise RuntimeError("secret internal state " + "x" * 5000)


def _serve(tmp_path: Path, agent: object, **config):
    from demo.session import ProductLookup
    from demo.web import DemoApp
    from demo.web_app import WebState, create_app
    from demo.web_server import BackgroundServer

    catalog, _, _ = write_catalog(tmp_path)
    demo = DemoApp(agent, ProductLookup(catalog), {}, "tiny")
    queue = config.pop("max_agent_queue", 16)
    state = config.pop("state", None) or WebState.ready(demo)
    app = create_app(state, max_agent_queue=queue, body_timeout=config.pop("body_timeout", 10.0))
    return BackgroundServer(app, **config), demo, app


@pytest.fixture()
def slow(tmp_path):
    agent = SlowAgent()
    server, demo, app = _serve(tmp_path, agent, max_agent_queue=2)
    yield server.url, agent, app
    agent.release.set()
    server.stop()


@pytest.fixture()
def fast(tmp_path):
    agent = SlowAgent(blocked=False)
    server, _, _ = _serve(tmp_path, agent)
    yield server.url, agent
    server.stop()


def request(url: str, body: object = None, ctype: str = "application/json", method: str | None = None,
            headers: dict | None = None, timeout: float = WAIT):
    """(status, headers, body bytes) of one request; HTTP errors are answers too."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": ctype, **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def short_json_error(raw: bytes) -> str:
    """The error text of a short {"error": ...} body (asserts its shape)."""
    assert len(raw) < 300, raw[:300]
    obj = json.loads(raw)
    assert list(obj) == ["error"] and isinstance(obj["error"], str)
    return obj["error"]


def _raw(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    return s


def _read_all(s: socket.socket) -> bytes:
    """Everything until the server closes the connection (bounded by the socket timeout)."""
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    return out


# ---- the event loop stays free while a turn is played ------------------------------------------------
def test_info_and_page_answer_while_a_slow_turn_runs(slow):
    url, agent, _ = slow
    with ThreadPoolExecutor(max_workers=40) as pool:
        turn = pool.submit(request, url + "/api/chat", {"session": "s1", "message": "shoes"})
        assert agent.entered.wait(WAIT), "the turn started"
        gets = [pool.submit(request, url + ("/api/info" if i % 2 else "/"), timeout=WAIT) for i in range(30)]
        statuses = [f.result(timeout=WAIT + 5)[0] for f in gets]
        assert statuses == [200] * 30
        assert not turn.done(), "all answered while the turn was still being played"
        agent.release.set()
        status, _, raw = turn.result(timeout=WAIT)
    assert status == 200 and json.loads(raw)["view"]["agent"] == "you said shoes"


def test_busy_503_when_the_agent_queue_is_full(slow):
    url, agent, app = slow            # max_agent_queue=2
    with ThreadPoolExecutor(max_workers=4) as pool:
        first = pool.submit(request, url + "/api/chat", {"session": "a", "message": "one"})
        assert agent.entered.wait(WAIT)
        second = pool.submit(request, url + "/api/chat", {"session": "b", "message": "two"})
        deadline = time.monotonic() + WAIT
        while app.state.agent_queue.pending < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert app.state.agent_queue.pending == 2
        status, headers, raw = request(url + "/api/chat", {"session": "c", "message": "three"})
        assert status == 503 and short_json_error(raw).startswith("busy")
        assert headers["Retry-After"] == "1" and headers["Content-Type"].startswith("application/json")
        assert request(url + "/api/info")[0] == 200, "cheap requests are not bounded by the agent queue"
        agent.release.set()
        assert first.result(timeout=WAIT)[0] == 200 and second.result(timeout=WAIT)[0] == 200
    assert agent.calls == 2
    assert request(url + "/api/chat", {"session": "c", "message": "three"})[0] == 200


class ThreadSafeSlowAgent(SlowAgent):
    """A slow agent that orders its own calls (`thread_safe`): the web app runs AGENT_THREADS of its
    turns at once; counts how many are inside `respond` together."""

    thread_safe = True

    def __init__(self) -> None:
        super().__init__()
        self.inside = 0
        self.most = 0

    def respond(self, session_id: str, message: str, turn: int, top_k: int) -> dict:
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        try:
            return super().respond(session_id, message, turn, top_k)
        finally:
            with self.lock:
                self.inside -= 1


def test_a_thread_safe_agent_plays_two_turns_at_once_and_no_more(tmp_path):
    from demo.web import AGENT_THREADS
    agent = ThreadSafeSlowAgent()
    server, demo, app = _serve(tmp_path, agent, max_agent_queue=4)
    try:
        assert demo.agent_threads == AGENT_THREADS == 2
        with ThreadPoolExecutor(max_workers=3) as pool:
            turns = [pool.submit(request, server.url + "/api/chat", {"session": s, "message": s}) for s in "abc"]
            deadline = time.monotonic() + WAIT
            while (agent.inside < 2 or app.state.agent_queue.pending < 3) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert agent.inside == 2 and app.state.agent_queue.pending == 3    # the third waits its turn
            agent.release.set()
            assert [t.result(timeout=WAIT)[0] for t in turns] == [200] * 3
        assert agent.most == 2 and agent.calls == 3
    finally:
        agent.release.set()
        server.stop()


def test_loading_503_until_the_agent_is_ready(tmp_path):
    from demo.web import render_page
    from demo.web_app import WebState

    state = WebState(render_page("tiny catalog"))
    server, demo, _ = _serve(tmp_path, SlowAgent(blocked=False), state=state)
    try:
        status, headers, page = request(server.url + "/")
        assert status == 200 and b"tiny catalog" in page and "script-src 'sha256-" in headers["Content-Security-Policy"]
        for path, body in (("/api/info", None), ("/api/sessions?dataset=public", None),
                           ("/api/chat", {"session": "s", "message": "hi"}), ("/api/replay/step", {"replay": "x"})):
            status, headers, raw = request(server.url + path, body)
            assert (status, short_json_error(raw)) == (503, "loading"), path
            assert headers["Retry-After"] == "1"
        state.demo = demo
        assert request(server.url + "/api/info")[0] == 200
        assert request(server.url + "/api/chat", {"session": "s", "message": "hi"})[0] == 200
    finally:
        server.stop()


# ---- request bodies are checked before any work ----------------------------------------------------
def test_deep_json_is_a_400_not_a_dropped_connection(fast):
    url, agent = fast
    deep = b'{"session": "d", "message": ' + b"[" * 30000 + b"]" * 30000 + b"}"
    assert len(deep) < 64 * 1024
    status, _, raw = request(url + "/api/chat", deep)
    assert status == 400 and "nested too deeply" in short_json_error(raw)
    just_over = b'{"session": "d", "message": "x", "extra": ' + b"[" * 32 + b"]" * 32 + b"}"
    assert request(url + "/api/chat", just_over)[0] == 400
    # brackets inside strings (and escaped quotes) are text, not nesting
    text = '[[[[ {{{{ \\" [[[[' * 10
    status, _, raw = request(url + "/api/chat", {"session": "d", "message": text})
    assert status == 200 and agent.calls == 1


@pytest.mark.parametrize("body", [
    b'{"session": "u", "message": "shoes \\ud800"}',           # a JSON escape of a lone surrogate
    b'{"session": "u", "message": "shoes \xed\xa0\x80"}',      # the surrogate encoded as (invalid) UTF-8
    b'{"session": "u", "message": "shoes \xff"}',              # not UTF-8 at all
    b'{"session": "u\\udfff", "message": "shoes"}',            # in another field
])
def test_lone_surrogate_is_a_400_before_the_turn_is_played(fast, body):
    url, agent = fast
    status, _, raw = request(url + "/api/chat", body)
    assert status == 400 and "UTF-8" in short_json_error(raw)
    assert agent.calls == 0, "the agent was never called"


def test_only_application_json_is_accepted(fast):
    url, agent = fast
    body = {"session": "c", "message": "hi"}
    for ctype in ("application/jsonfoo", "text/plain", "application/json; charset=latin-1", "application/json;x=1",
                  "application/json-seq", ""):
        status, _, raw = request(url + "/api/chat", body, ctype=ctype)
        assert status == 415 and short_json_error(raw) == "send Content-Type: application/json", ctype
    assert agent.calls == 0
    for ctype in ("application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8"):
        assert request(url + "/api/chat", body, ctype=ctype)[0] == 200, ctype


def test_other_errors_are_short_json(fast):
    url, agent = fast
    status, _, raw = request(url + "/api/chat", b'{"session": "x", "message": "' + b"a" * 70000 + b'"}')
    assert status == 413 and "64 KiB" in short_json_error(raw)
    for body in (b"{not json", b"[1, 2]", b'{"a": NaN}', b""):
        status, _, raw = request(url + "/api/chat", body)
        assert status == 400 and short_json_error(raw), body
    status, _, raw = request(url + "/api/info", headers={"Host": "evil.example"})
    assert (status, short_json_error(raw)) == (403, "forbidden host")
    status, _, raw = request(url + "/nothing/here")
    assert (status, short_json_error(raw)) == (404, "not found")
    with _raw(int(url.rsplit(":", 1)[1])) as s:          # not HTTP at all
        s.sendall(b"HELLO THERE\r\n\r\n")
        head, _, body = _read_all(s).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400") and short_json_error(body) == "invalid HTTP request"


def test_an_internal_error_is_a_500_without_internal_data(tmp_path):
    server, _, _ = _serve(tmp_path, BrokenAgent(blocked=False))
    try:
        status, headers, raw = request(server.url + "/api/chat", {"session": "b", "message": "hi"})
        assert (status, short_json_error(raw)) == (500, "internal error")
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert request(server.url + "/api/info")[0] == 200, "still serving"
    finally:
        server.stop()


def test_put_and_delete_are_405_json_and_head_is_answered(fast):
    url, _ = fast
    for method in ("PUT", "DELETE", "PATCH", "OPTIONS"):
        for path in ("/", "/api/chat", "/api/info"):
            status, headers, raw = request(url + path, b"{}", method=method)
            assert (status, short_json_error(raw)) == (405, "method not allowed"), (method, path)
            assert headers["Allow"]
    status, headers, raw = request(url + "/", method="HEAD")
    assert status == 200 and raw == b"" and headers["Content-Type"].startswith("text/html")
    assert int(headers["Content-Length"]) == len(request(url + "/")[2]) > 1000
    assert "script-src 'sha256-" in headers["Content-Security-Policy"]
    status, headers, raw = request(url + "/api/info", method="HEAD")
    assert status == 200 and raw == b"" and headers["Content-Type"].startswith("application/json")
    assert request(url + "/api/chat", method="HEAD")[0] == 405


# ---- connections --------------------------------------------------------------------------------
def test_idle_and_half_sent_connections_are_closed_by_the_server(tmp_path):
    server, _, _ = _serve(tmp_path, SlowAgent(blocked=False), keep_alive=0.5, header_timeout=0.5)
    try:
        with _raw(server.port) as idle, _raw(server.port) as half, _raw(server.port) as kept:
            half.sendall(b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n")       # headers never finished
            kept.sendall(f"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n\r\n".encode())
            assert _read_all(idle) == b"", "closed without a word"
            head, _, body = _read_all(half).partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 408") and short_json_error(body) == "request headers too slow"
            answer = _read_all(kept)                                              # one answer, then closed
            assert answer.startswith(b"HTTP/1.1 200") and answer.count(b"HTTP/1.1") == 1
        assert request(server.url + "/api/info")[0] == 200
    finally:
        server.stop()


def test_a_slow_body_gets_408_and_the_agent_is_not_called(tmp_path):
    agent = SlowAgent(blocked=False)
    server, _, _ = _serve(tmp_path, agent, body_timeout=0.5)
    try:
        with _raw(server.port) as s:
            s.sendall(f"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
                      "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"session\": ".encode())
            head, _, body = _read_all(s).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408") and short_json_error(body) == "request body too slow"
        assert agent.calls == 0
    finally:
        server.stop()


def test_connections_past_the_cap_get_503(tmp_path):
    server, _, _ = _serve(tmp_path, SlowAgent(blocked=False), max_connections=5)
    held = [_raw(server.port) for _ in range(5)]
    try:
        time.sleep(0.2)   # let the server accept them (a late accept only makes the check below stricter)
        with _raw(server.port) as extra:
            head, _, body = _read_all(extra).partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 503") and "too many connections" in short_json_error(body)
    finally:
        for s in held:
            s.close()
    deadline = time.monotonic() + WAIT
    while request(server.url + "/api/info")[0] != 200 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert request(server.url + "/api/info")[0] == 200
    server.stop()


def test_a_client_leaving_mid_request_prints_no_traceback(fast, capfd):
    url, _ = fast
    port = int(url.rsplit(":", 1)[1])
    for _ in range(3):
        with _raw(port) as s:
            s.sendall(f"POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
                      "Content-Length: 500\r\n\r\n{\"session\":".encode())
        with _raw(port) as s:
            s.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            s.recv(10)                                      # leave with most of the page unread
    assert request(url + "/api/info")[0] == 200
    err = capfd.readouterr().err
    assert "Traceback" not in err and "BrokenPipe" not in err


# ---- the command line ----------------------------------------------------------------------------
def _env(extra_path: Path | None = None) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (ROOT, extra_path) if p)
    return env


def test_port_in_use_is_one_line_and_a_nonzero_exit(tmp_path):
    catalog, _, _ = write_catalog(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "demo.web", "--port", str(port), "--catalog", str(catalog)],
                              capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=60)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: port {port} is in use; try --port "), proc.stderr
    assert int(lines[0].rsplit(" ", 1)[1]) != port and "Traceback" not in proc.stderr


GATED_AGENT = '''
import time
from pathlib import Path

class GatedAgent:
    """Builds only once the test creates the gate file (a slow model load)."""
    def __init__(self, catalog_path):
        gate = Path(__file__).with_name("gate")
        deadline = time.monotonic() + 60
        while not gate.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    def reset(self, session_id, profile):
        pass
    def respond(self, session_id, message, turn, top_k):
        return {"message": "ready", "ask_attribute": None, "recommendations": []}
'''


def test_cli_binds_and_answers_before_the_agent_is_built(tmp_path):
    catalog, _, _ = write_catalog(tmp_path)
    (tmp_path / "gated_agent.py").write_text(GATED_AGENT)
    proc = subprocess.Popen([sys.executable, "-m", "demo.web", "--port", "0", "--catalog", str(catalog),
                             "--agent", "gated_agent:GatedAgent"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env(tmp_path), cwd=ROOT)
    try:
        first = proc.stdout.readline()
        assert first.startswith("serving http://127.0.0.1:"), first
        url = first.split()[1].rstrip("/")
        assert request(url + "/")[0] == 200, "the page is served at once"
        status, _, raw = request(url + "/api/info")
        assert (status, short_json_error(raw)) == (503, "loading")
        (tmp_path / "gate").touch()
        deadline = time.monotonic() + 60
        while request(url + "/api/info")[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert request(url + "/api/info")[0] == 200
        assert json.loads(request(url + "/api/chat", {"session": "z", "message": "hi"})[2])["view"]["agent"] == "ready"
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# ---- the parts ------------------------------------------------------------------------------------
def test_json_depth_and_body_parsing():
    from demo.web import ApiError, json_bytes
    from demo.web_app import json_depth, parse_json_object

    assert json_depth('{"a": [1, {"b": []}]}') == 4
    assert json_depth('{"a": "[[[[{{{{"}') == 1 and json_depth('{"a": "\\"[[[["}') == 1
    assert json_depth('"' + "\\" * 1001) == 0            # an unterminated string is scanned once
    assert json_depth('"' + '\\"[' * 30000 + "\\") == 0       # no quadratic rescans of escaped quotes
    assert json_depth("[" * 100000) == 33                  # stops counting past the limit
    assert parse_json_object(b'{"message": "caf\xc3\xa9 \\u00e9"}') == {"message": "café é"}
    for raw in (b"", b"[]", b"{", b'{"a": Infinity}', b'{"a": "\\ud800"}', b"\xef\xbb\xbf{}"):
        with pytest.raises(ApiError) as err:
            parse_json_object(raw)
        assert err.value.status == 400, raw
    # an agent's lone surrogate still goes out as valid JSON (escaped), not as a 500
    raw = json_bytes({"t": "shoes \ud800 <b>"})
    assert raw.isascii() and json.loads(raw) == {"t": "shoes \ud800 <b>"} and b"<" not in raw
