"""A local web page to chat with the agent and watch every decision: the state behind the API.

    python -m demo.web [--port 8765] [--catalog PATH] [--dataset NAME=PATH ...]

Three modules: this one holds the demo's state and endpoints as plain
blocking methods (`DemoApp`), the page and its content security policy, and
the JSON encoder; `demo.web_app` is the ASGI app (Starlette) that routes,
validates and limits requests; `demo.web_server` serves it with uvicorn on
127.0.0.1 and is the command line.  One static page
(demo/static/index.html, inline JS and CSS, no network) talks to a small JSON API:

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
markup could neither render nor run.  An agent that is not thread-safe gets
one lock around every call; the project's agent orders its own turns
(`Agent.thread_safe`), so its calls run in `AGENT_THREADS` threads at once.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
import re
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from demo.session import ChatSession, ProductLookup, SessionError, SessionResult, find_row, play_evaluator_session
from demo.web_chat import StoreUnavailable, stored_chat_turn, uses_store
from evaluator.data import read_jsonl
from evaluator.perturb import MODES, parse_modes

PAGE_PATH = Path(__file__).with_name("static") / "index.html"
MAX_BODY = 64 * 1024
MAX_CHATS = 200
MAX_REPLAYS = 50
MAX_MESSAGE = 2000
# Agent calls at once in one process when the agent is thread-safe: its turns run one at a time, so a
# second thread only lets one turn's session-store round trips overlap another's computing.
AGENT_THREADS = 2
_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class ApiError(Exception):
    """An error the client caused (or may retry): answered as {"error": message} with `status`."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def json_bytes(obj: Any) -> bytes:
    """JSON with the HTML-significant characters escaped (still the same JSON values).

    Text that cannot be UTF-8 (a lone surrogate from an agent or a file) is
    written with \\u escapes instead of failing after the work was done.
    """
    for ascii_only in (False, True):
        text = json.dumps(obj, ensure_ascii=ascii_only)
        text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError:
            continue
    raise AssertionError("unreachable: ASCII JSON always encodes")


def is_valid_text(text: str) -> bool:
    """False for text with a lone surrogate (it came from a \\ud800 escape, not from UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _inline_hashes(page: str, tag: str) -> list[str]:
    """CSP sha256 sources of every inline <tag>...</tag> block of the page."""
    out = []
    for body in re.findall(rf"<{tag}>(.*?)</{tag}>", page, flags=re.S):
        digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii")
        out.append(f"'sha256-{digest}'")
    return out


@dataclass(frozen=True)
class Page:
    """The static page with the catalog label filled in, and its content security policy."""
    html: bytes
    csp: str


def render_page(catalog_label: str) -> Page:
    """The page for `catalog_label`: needs no agent, so it is served while the agent loads."""
    page = PAGE_PATH.read_text(encoding="utf-8")
    scripts = " ".join(_inline_hashes(page, "script"))
    styles = " ".join(_inline_hashes(page, "style"))
    csp = (f"default-src 'none'; script-src {scripts}; style-src {styles}; connect-src 'self'; "
           "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
    return Page(page.replace("{{CATALOG}}", html.escape(catalog_label)).encode("utf-8"), csp)


@dataclass
class Replay:
    result: SessionResult
    dataset: str
    shown: int = 0


class DemoApp:
    """The state behind the API: one agent, chat sessions, replays.

    The methods are thread-safe and most block (agent calls, file reads): the
    web app calls them from worker threads so that its event loop stays free;
    only `info` (no lock, no I/O) is called on the event loop.
    """

    def __init__(self, agent: Any, lookup: ProductLookup, datasets: dict[str, Path], catalog_label: str = "") -> None:
        self.agent = agent
        self.lookup = lookup
        self.datasets = datasets
        self.catalog_label = catalog_label or str(lookup.path)
        # Every agent call holds agent_lock unless the agent orders its own calls (`thread_safe`).
        self.agent_threads = AGENT_THREADS if getattr(agent, "thread_safe", False) is True else 1
        self.agent_lock: Any = threading.Lock() if self.agent_threads == 1 else contextlib.nullcontext()
        self.state_lock = threading.Lock()   # the dicts below
        self.chats: OrderedDict[str, ChatSession] = OrderedDict()
        self.replays: OrderedDict[str, Replay] = OrderedDict()
        self._rows: dict[str, list[dict]] = {}
        rendered = render_page(self.catalog_label)
        self.page, self.csp = rendered.html, rendered.csp

    # ---- helpers ----------------------------------------------------------------------
    def rows(self, dataset: str) -> list[dict]:
        path = self.datasets.get(dataset)
        if path is None:
            raise ApiError(404, f"unknown dataset {dataset!r}")
        with self.state_lock:
            if dataset not in self._rows:
                self._rows[dataset] = read_jsonl(path)
            return self._rows[dataset]

    def _chat(self, session: Any, create: bool = True) -> ChatSession | None:
        """The chat of `session`, made on first use (the oldest of MAX_CHATS is dropped).

        A new ChatSession resets the agent (an agent call under the agent lock),
        so it is made outside the state lock: a long turn never blocks the
        state lock that quick requests need.
        """
        if not isinstance(session, str) or not _ID_RE.match(session):
            raise ApiError(400, "session must be 1-64 characters of letters, digits, '-' or '_'")
        with self.state_lock:
            chat = self.chats.get(session)
            if chat is not None:
                self.chats.move_to_end(session)
                return chat
        if not create:
            return None
        fresh = ChatSession(self.agent, self.lookup, session_id=f"web-{session}", lock=self.agent_lock)
        with self.state_lock:
            chat = self.chats.get(session)
            if chat is None:                        # another request may have made it meanwhile
                if len(self.chats) >= MAX_CHATS:
                    self.chats.popitem(last=False)
                chat = self.chats[session] = fresh
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
        if len(message) > MAX_MESSAGE:
            raise ApiError(400, f"message too long ({MAX_MESSAGE} characters at most)")
        if not is_valid_text(message):
            raise ApiError(400, "message must be valid UTF-8 text (no lone surrogates)")
        if uses_store(self.agent):
            return self._stored_chat(body, message.strip())
        chat = self._chat(body.get("session"))
        assert chat is not None
        try:
            view = chat.send(message.strip())
        except SessionError as exc:
            raise ApiError(409, str(exc)) from None
        return {"session": body["session"], "turn": view.turn, "done": chat.done, "view": view.to_dict()}

    def _stored_chat(self, body: dict, message: str) -> dict:
        """A chat turn whose session lives in the agent's store (demo.web_chat): no chat is held here."""
        session, turn = body.get("session"), body.get("turn")
        if not isinstance(session, str) or not _ID_RE.match(session):
            raise ApiError(400, "session must be 1-64 characters of letters, digits, '-' or '_'")
        if turn is not None and (not isinstance(turn, int) or isinstance(turn, bool) or not 1 <= turn <= 10):
            raise ApiError(400, "turn must be an integer 1-10 (the turn being sent), or absent")
        try:
            view = stored_chat_turn(self.agent, self.lookup, self.agent_lock, f"web-{session}", message, turn)
        except StoreUnavailable:
            raise ApiError(503, "session store unavailable; try again shortly") from None
        except SessionError as exc:
            raise ApiError(409, str(exc)) from None
        return {"session": session, "turn": view.turn, "done": view.turn >= 10, "view": view.to_dict()}

    def reset(self, body: dict) -> dict:
        if uses_store(self.agent):
            session = body.get("session")
            if not isinstance(session, str) or not _ID_RE.match(session):
                raise ApiError(400, "session must be 1-64 characters of letters, digits, '-' or '_'")
            try:
                with self.agent_lock:
                    self.agent.reset(f"web-{session}", {})
            except StoreUnavailable:
                raise ApiError(503, "session store unavailable; try again shortly") from None
            return {"session": session, "reset": True}
        chat = self._chat(body.get("session"), create=False)
        if chat is not None:
            chat.reset()
        return {"session": body["session"], "reset": True}

    def replay_start(self, body: dict) -> dict:
        dataset, sample_id = body.get("dataset"), body.get("sample_id")
        if not isinstance(dataset, str) or not isinstance(sample_id, str):
            raise ApiError(400, "dataset and sample_id must be strings")
        perturb = body.get("perturb", "none")
        replay_id, result = self._play_replay(dataset, sample_id, perturb if isinstance(perturb, str) else "")
        return {"replay": replay_id, "dataset": dataset, "sample_id": result.sample_id,
                "scenario_type": result.scenario_type, "perturb": result.perturb, "target": result.target,
                "turns": len(result.turns)}

    def _play_replay(self, dataset: str, sample_id: str, perturb: str) -> tuple[str, SessionResult]:
        """Play an evaluator session; its replay id names what was played, so that any worker
        (web_server --workers) can play it again when a step reaches one that did not start it."""
        try:
            modes = parse_modes(perturb)
        except ValueError:
            # The parser's message names the evaluator's command-line flag; the page knows no flags.
            raise ApiError(400, f"unknown perturbation {perturb!r}; choose from none, "
                                f"{', '.join(MODES)} or a '+' combination") from None
        try:
            index, row = find_row(self.rows(dataset), sample_id)
        except (ValueError, SessionError) as exc:
            raise ApiError(400, str(exc)) from None
        label = "+".join(sorted(modes)) or "none"
        with self.agent_lock:
            try:
                result = play_evaluator_session(self.agent, self.lookup, row, index, modes, 0.35, label)
            except SessionError as exc:
                raise ApiError(400, str(exc)) from None
        replay_id = base64.urlsafe_b64encode(json.dumps([dataset, sample_id, label]).encode()).decode().rstrip("=")
        with self.state_lock:
            self.replays.pop(replay_id, None)
            if len(self.replays) >= MAX_REPLAYS:
                self.replays.popitem(last=False)
            self.replays[replay_id] = Replay(result, dataset)
        return replay_id, result

    def _replay_of(self, replay_id: Any) -> Replay:
        """The replay `replay_id` names: kept here, or played again (started by another worker)."""
        with self.state_lock:
            rep = self.replays.get(replay_id) if isinstance(replay_id, str) else None
        if rep is not None:
            return rep
        try:
            assert isinstance(replay_id, str) and len(replay_id) <= 400
            dataset, sample_id, label = json.loads(base64.urlsafe_b64decode(replay_id + "=" * (-len(replay_id) % 4)))
            assert all(isinstance(x, str) for x in (dataset, sample_id, label))
        except (AssertionError, ValueError, TypeError):
            raise ApiError(404, "unknown replay; start one first") from None
        self._play_replay(dataset, sample_id, "" if label == "none" else label)
        with self.state_lock:
            return self.replays[replay_id]

    def replay_step(self, body: dict) -> dict:
        replay_id, step = body.get("replay"), body.get("step")
        if step is not None and (not isinstance(step, int) or isinstance(step, bool) or step < 0):
            raise ApiError(400, "step must be a non-negative integer (the steps already shown), or absent")
        rep = self._replay_of(replay_id)
        with self.state_lock:
            shown = rep.shown if step is None else step
            if shown >= len(rep.result.turns):
                raise ApiError(409, "replay finished")
            view = rep.result.turns[shown]
            rep.shown = shown + 1
            last = rep.shown >= len(rep.result.turns)
        return {"replay": replay_id, "step": shown + 1, "turns": len(rep.result.turns), "last": last,
                "view": view.to_dict(), "outcome": rep.result.outcome() if last else None}


if __name__ == "__main__":
    from demo.web_server import main

    sys.exit(main())
