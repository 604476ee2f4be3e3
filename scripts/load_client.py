"""Shoppers for `scripts/bench_service.py`: conversations played against the web API by many clients at once.

Each conversation is the evaluator's simulated shopper (a template session
of the public set, or a persona card) talking to `/api/chat` for a fixed
number of turns, whatever the agent shows (no stop at a hit: every
conversation has the same length).  A turn that fails in a way a client can
retry (503, a connection refused or cut by a dying worker, a timeout) is sent
again, the same turn with the same message, after a back-off; the server
answers a retry of a stored turn with that turn's answer.  An asyncio HTTP/1.1
client over plain sockets keeps the load generator's own CPU small (the
machine has two cores).  The same conversation played alone, against an
in-process agent, is the reference its transcript is compared with.
"""
from __future__ import annotations

import asyncio
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any

import contest as P
from evaluator.local_evaluator import build_customer

RETRY_FOR = 60.0          # seconds a turn is retried before it counts as lost
TIMEOUT = 30.0            # seconds for one request


@dataclass
class Conversation:
    session: str
    row: dict
    kind: str                                  # template | persona
    transcript: list[dict] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    retried_turns: int = 0
    lost: str | None = None                    # why it could not be completed


def next_message(customer: Any, ask: Any, turn: int) -> str:
    """What the shopper says on `turn` after an answer that asked `ask` (the evaluator's rule)."""
    return customer.override_message() if customer.is_override_turn(turn) else customer.reply(ask, turn)


def play_alone(agent: Any, conv: Conversation, target: dict, turns: int, catalog: Any) -> list[dict]:
    """The conversation against an in-process agent: the reference transcript (`catalog`: every id)."""
    customer = build_customer(conv.row, target, frozenset(), 0.35)
    sid = f"alone-{conv.session}"
    agent.reset(sid, {})
    message, out = customer.opening().strip(), []
    for turn in range(1, turns + 1):
        resp = agent.respond(sid, message, turn, P.TOP_K)
        recs = P.normalize_recommendations(resp.get("recommendations"), catalog)
        out.append({"customer": message, "agent": resp["message"], "ask": resp.get("ask_attribute"), "recs": recs})
        message = next_message(customer, resp.get("ask_attribute"), turn + 1).strip()
    agent.close_session(sid)
    return out


class Http:
    """One keep-alive HTTP/1.1 connection to the server (reopened after any failure)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, obj: dict) -> tuple[int, dict]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        body = json.dumps(obj).encode()
        self.writer.write(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nContent-Type: application/json\r\n"
                          f"Content-Length: {len(body)}\r\n\r\n".encode() + body)
        await self.writer.drain()
        head = (await self.reader.readline()).split()
        if len(head) < 2:
            raise ConnectionResetError("closed before an answer")      # a worker died, or a stale keep-alive
        status = int(head[1])
        length, close = 0, False
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
            elif name.lower() == "connection" and value.strip().lower() == "close":
                close = True
        raw = await self.reader.readexactly(length)
        if close:
            self.close()
        return status, json.loads(raw) if raw else {}

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def _turn(http: Http, conv: Conversation, turn: int, message: str, errors: dict[str, int]) -> dict | None:
    """One turn, retried until answered or RETRY_FOR has passed; the answer's view, or None."""
    start, delay, retried = time.perf_counter(), 0.05, False
    while time.perf_counter() - start < RETRY_FOR:
        try:
            status, body = await asyncio.wait_for(
                http.post("/api/chat", {"session": conv.session, "message": message, "turn": turn}), TIMEOUT)
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError, ValueError) as exc:
            http.close()
            status, body = 0, {"error": type(exc).__name__}
        if status == 200:
            conv.latencies_ms.append((time.perf_counter() - start) * 1000)
            conv.retried_turns += retried
            return body["view"]
        kind = f"{status} {body.get('error', '')[:40]}" if status else f"connection: {body['error']}"
        errors[kind] = errors.get(kind, 0) + 1
        if status not in (0, 503):               # not worth retrying: the conversation is lost
            conv.lost = kind
            return None
        retried = True
        await asyncio.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 2, 2.0)
    conv.lost = "retried for too long"
    return None


async def play(port: int, conv: Conversation, target: dict, turns: int, errors: dict[str, int],
               progress: Any) -> None:
    """The conversation against the server, from its opening to `turns` answers (or lost)."""
    customer = build_customer(conv.row, target, frozenset(), 0.35)
    http = Http(port)
    message = customer.opening().strip()
    try:
        for turn in range(1, turns + 1):
            view = await _turn(http, conv, turn, message, errors)
            if view is None:
                return
            recs = [p["parent_asin"] for p in view["products"]]
            conv.transcript.append({"customer": message, "agent": view["agent"], "ask": view["ask_attribute"],
                                    "recs": recs})
            progress()
            message = next_message(customer, view["ask_attribute"], turn + 1).strip()
    finally:
        http.close()


async def run_all(port: int, convs: list[Conversation], targets: dict[str, dict], turns: int, clients: int,
                  progress: Any) -> dict[str, int]:
    """Every conversation, `clients` at a time; the errors seen, by kind."""
    errors: dict[str, int] = {}
    queue: asyncio.Queue[Conversation] = asyncio.Queue()
    for conv in convs:
        queue.put_nowait(conv)

    async def client() -> None:
        while not queue.empty():
            conv = queue.get_nowait()
            await play(port, conv, targets[conv.row["ground_truth"]["parent_asin"]], turns, errors, progress)
    await asyncio.gather(*(client() for _ in range(clients)))
    return errors
