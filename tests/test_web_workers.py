"""`techjam-web --workers N`: one socket, workers forked from one loaded agent, sessions in a store; a
killed worker is replaced and loses no conversation; SIGTERM lets an in-flight turn finish."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from demo_support import write_catalog
from tests.test_web import ROOT, _env, request

SLOW_AGENT = '''
import time
from pathlib import Path
from starter.agent import Agent

class SlowAgent(Agent):
    """Each turn waits while the file `slow` exists (a turn in flight the test can hold)."""
    def take_turn(self, *args, **kwargs):
        while Path(__file__).with_name("slow").exists():
            time.sleep(0.05)
        return super().take_turn(*args, **kwargs)
'''


def _children(pid: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def _start(tmp_path: Path, workers: int) -> tuple[subprocess.Popen, str]:
    catalog, _, _ = write_catalog(tmp_path)
    (tmp_path / "slow_agent.py").write_text(SLOW_AGENT)
    proc = subprocess.Popen([sys.executable, "-m", "demo.web", "--port", "0", "--catalog", str(catalog),
                             "--workers", str(workers), "--agent", "slow_agent:SlowAgent",
                             "--session-store", f"sqlite:///{tmp_path / 'sessions.db'}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path), cwd=ROOT)
    first = proc.stdout.readline()
    assert first.startswith("serving http://127.0.0.1:"), first + proc.stderr.read()
    url = first.split()[1].rstrip("/")
    deadline = time.monotonic() + 60
    while (len(_children(proc.pid)) < workers or request(url + "/readyz")[0] != 200) and time.monotonic() < deadline:
        time.sleep(0.1)
    return proc, url


def _chat(url: str, turn: int, text: str) -> tuple[int, dict]:
    status, _, raw = request(url + "/api/chat", {"session": "s", "message": text, "turn": turn}, timeout=60)
    return status, json.loads(raw)


def test_a_killed_worker_is_replaced_and_the_conversation_goes_on(tmp_path: Path) -> None:
    proc, url = _start(tmp_path, 2)
    try:
        workers = _children(proc.pid)
        assert len(workers) == 2
        assert _chat(url, 1, "some pants please")[1]["turn"] == 1
        os.kill(workers[0], signal.SIGKILL)
        deadline = time.monotonic() + 30
        while (len(kids := _children(proc.pid)) < 2 or workers[0] in kids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert workers[0] not in kids and len(kids) == 2
        answered = {_chat(url, turn, text)[1]["turn"] for turn, text in ((2, "blue"), (3, "cotton"), (4, "any"))}
        assert answered == {2, 3, 4}
        health = {json.loads(request(url + "/healthz")[2])["pid"] for _ in range(20)}
        assert health <= set(kids)
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    assert "worker {} ended (signal SIGKILL)".format(workers[0]) in proc.stderr.read()


def test_sigterm_lets_the_turn_in_flight_finish(tmp_path: Path) -> None:
    proc, url = _start(tmp_path, 2)
    got: list[tuple[int, dict]] = []
    try:
        (tmp_path / "slow").touch()
        asking = threading.Thread(target=lambda: got.append(_chat(url, 1, "some pants please")))
        asking.start()
        time.sleep(1.0)                                   # the turn is being played
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        (tmp_path / "slow").unlink()
        asking.join(30)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert got and got[0][0] == 200 and got[0][1]["turn"] == 1
