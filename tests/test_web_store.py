"""The web demo with sessions in the agent's store: no chat is dropped, any worker answers any turn,
a retried turn is answered once, a conflicting one is a 409, a store that is down a 503."""
from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from demo.session import ProductLookup, build_agent
from demo.web import ApiError, DemoApp
from demo_support import write_catalog


def _demo(catalog: Path) -> DemoApp:
    return DemoApp(build_agent(catalog), ProductLookup(catalog), {}, "tiny")


@pytest.fixture()
def catalog(tmp_path: Path) -> Path:
    return write_catalog(tmp_path)[0]


def _timeless(answer: dict) -> dict:
    """An answer without its measured time (the one field that differs between equal turns)."""
    if "view" in answer:
        return dict(answer, view=_timeless(answer["view"]))
    return {k: v for k, v in answer.items() if k != "latency_ms"}


def test_no_conversation_is_dropped_for_others(catalog: Path, monkeypatch) -> None:
    monkeypatch.setenv("AGENT_MAX_SESSIONS", "8")
    app = _demo(catalog)
    for turn, text in enumerate(("some pants please", "blue", "cotton"), 1):
        assert app.chat({"session": "A", "message": text})["turn"] == turn
    for k in range(210):
        assert app.chat({"session": f"other{k}", "message": "shoes"})["turn"] == 1
    assert app.chat({"session": "A", "message": "anything else?"})["turn"] == 4


def test_a_retried_turn_is_answered_once_and_a_conflicting_one_is_409(catalog: Path) -> None:
    app = _demo(catalog)
    first = app.chat({"session": "s", "message": "some pants please", "turn": 1})
    second = app.chat({"session": "s", "message": "blue", "turn": 2})
    again = app.chat({"session": "s", "message": "blue", "turn": 2})     # its answer was lost: same answer
    assert _timeless(again) == _timeless(second) and first["turn"] == 1
    assert isinstance(second["view"]["latency_ms"], float)
    assert app.agent.stored_turns("web-s") == 2
    for body, says in (({"message": "red", "turn": 2}, "already sent with another message"),
                       ({"message": "red", "turn": 4}, "at turn 3"),
                       ({"message": "red", "turn": 1}, "at turn 3")):
        with pytest.raises(ApiError, match=says) as err:
            app.chat({"session": "s", **body})
        assert err.value.status == 409
    with pytest.raises(ApiError, match="unknown session") as err:
        app.chat({"session": "never", "message": "hi", "turn": 3})
    assert err.value.status == 409
    app.reset({"session": "s"})
    assert app.chat({"session": "s", "message": "shoes", "turn": 1})["turn"] == 1


def test_two_workers_on_one_store_continue_each_others_sessions(catalog: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("AGENT_SESSION_STORE", f"sqlite:///{tmp_path / 'journal.db'}")
    one, two = _demo(catalog), _demo(catalog)
    texts = ("some pants please", "blue", "cotton", "anything cheaper?")
    got = [(one if k % 2 == 0 else two).chat({"session": "s", "message": t, "turn": k + 1})["view"]
           for k, t in enumerate(texts)]
    monkeypatch.delenv("AGENT_SESSION_STORE")
    alone = _demo(catalog)
    want = [alone.chat({"session": "s", "message": t, "turn": k + 1})["view"] for k, t in enumerate(texts)]
    assert json.dumps([_timeless(v) for v in got], sort_keys=True) == \
        json.dumps([_timeless(v) for v in want], sort_keys=True)


def test_a_store_that_is_down_is_a_503_the_page_can_retry(catalog: Path, pg_cluster, pg_url: str, monkeypatch) -> None:
    from demo.web_app import WebState, create_app
    from demo.web_server import BackgroundServer
    monkeypatch.setenv("AGENT_SESSION_STORE", pg_url)
    server = BackgroundServer(create_app(WebState.ready(_demo(catalog))))

    def post(body: dict) -> tuple[int, dict, str | None]:
        req = urllib.request.Request(server.url + "/api/chat", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, json.loads(r.read()), None
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read()), exc.headers.get("Retry-After")
    try:
        assert post({"session": "s", "message": "some pants please", "turn": 1})[0] == 200
        pg_cluster.stop()
        try:
            assert post({"session": "s", "message": "blue", "turn": 2}) == (
                503, {"error": "session store unavailable; try again shortly"}, "1")
        finally:
            pg_cluster.start()
        status, body, _ = post({"session": "s", "message": "blue", "turn": 2})
        assert status == 200 and body["turn"] == 2
    finally:
        server.stop()


def test_a_replay_started_on_one_worker_steps_on_another(tmp_path: Path) -> None:
    catalog, dataset, _ = write_catalog(tmp_path)
    one, two = (DemoApp(build_agent(catalog), ProductLookup(catalog), {"tiny": dataset}, "tiny") for _ in range(2))
    sample = one.sessions("tiny")["sessions"][0]["sample_id"]
    started = one.replay_start({"dataset": "tiny", "sample_id": sample, "perturb": "none"})
    steps = [(one if k % 2 else two).replay_step({"replay": started["replay"], "step": k})
             for k in range(started["turns"])]
    alone = [one.replay_step({"replay": started["replay"], "step": k}) for k in range(started["turns"])]
    for step in steps + alone:
        step["view"].pop("latency_ms")                   # measured, not played
    assert steps == alone and steps[-1]["last"] and steps[-1]["outcome"] is not None
    with pytest.raises(ApiError, match="unknown replay"):
        two.replay_step({"replay": "not-a-replay"})


def test_api_errors_name_no_command_line_flags(catalog: Path) -> None:
    app = _demo(catalog)
    with pytest.raises(ApiError, match="unknown perturbation 'shout'") as err:
        app.replay_start({"dataset": "x", "sample_id": "y", "perturb": "shout"})
    assert err.value.status == 400 and "--" not in str(err.value)
