"""Playing sessions for the demos: one module shared by replay, chat and web.

- `ProductLookup` indexes a catalog file by byte offset (one pass, about
  0.6 s on 50k rows) so that any product's display fields or full row can be
  read back without holding the catalog in memory twice (the agent has its
  own copy).
- `play_evaluator_session` plays one dataset row exactly as the evaluator
  does: it calls `evaluator.local_evaluator.run_session` itself (same
  customer, same perturbations, same hit rule: the session stops at the first
  counted hit) through a thin recorder that remembers the session id, then
  pairs every transcript turn with the agent's typed trace turn.
- `ChatSession` lets a person play the shopper with free text.
- `explain` turns one `TurnTrace` into the plain structure every renderer
  (terminal and web) draws; fault turns included.
"""
from __future__ import annotations

import json
import logging
import math
import threading
import time
import uuid
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import contest as P
from evaluator.data import PROJECT_ROOT, CatalogView, resolve_dataset
from evaluator.local_evaluator import construct_agent, run_session
from starter.conversation.trace import SessionTrace, TurnTrace

log = logging.getLogger(__name__)

DEFAULT_AGENT = "starter.agent:Agent"
PANEL_DIR = PROJECT_ROOT / "data" / "panels"


class SessionError(ValueError):
    """A session cannot be played (unknown sample id, target not in the catalog...)."""


# ---- catalog lookup -----------------------------------------------------------------
def _price_text(price: Any) -> str:
    if isinstance(price, bool) or price is None or price == "":
        return "n/a"
    if isinstance(price, (int, float)):
        return f"${price:,.2f}" if math.isfinite(price) else "n/a"
    return str(price)


class ProductLookup:
    """parent_asin -> byte offset of its line; display cards and full rows on demand."""

    def __init__(self, catalog_path: str | Path) -> None:
        self.path = Path(catalog_path)
        self.offsets: dict[str, int] = {}
        with open(self.path, "rb") as fh:
            offset = 0
            for line in fh:
                if line.strip():
                    try:
                        row = json.loads(line)
                    except ValueError:
                        row = None
                    pid = row.get("parent_asin") if isinstance(row, dict) else None
                    if isinstance(pid, str) and pid and pid not in self.offsets:
                        self.offsets[pid] = offset
                offset += len(line)
        self.ids = set(self.offsets)
        self._lock = threading.Lock()
        self._fh = open(self.path, "rb")

    def __len__(self) -> int:
        return len(self.offsets)

    def __contains__(self, pid: object) -> bool:
        return pid in self.offsets

    def row(self, pid: str) -> dict | None:
        """The full catalog row of `pid` (None if unknown)."""
        offset = self.offsets.get(pid)
        if offset is None:
            return None
        with self._lock:
            self._fh.seek(offset)
            line = self._fh.readline()
        return json.loads(line)

    def card(self, pid: str) -> dict:
        """What a product card shows: title, price, rating, shelf path."""
        row = self.row(pid) or {}
        rating = row.get("average_rating")
        count = row.get("rating_number")
        cats = row.get("categories") if isinstance(row.get("categories"), list) else []
        return {
            "parent_asin": pid,
            "title": str(row.get("title") or "(untitled)"),
            "price": row.get("price") if isinstance(row.get("price"), (int, float, str, type(None))) else None,
            "price_text": _price_text(row.get("price")),
            "average_rating": rating if isinstance(rating, (int, float)) and not isinstance(rating, bool) else None,
            "rating_number": count if isinstance(count, int) and not isinstance(count, bool) else None,
            "store": str(row.get("store") or ""),
            "category": P.coarse_category(cats),
        }

    def catalog_view(self, target_ids: set[str]) -> CatalogView:
        """The evaluator's catalog view: every id, full rows of the targets."""
        rows = {pid: r for pid in target_ids if (r := self.row(pid)) is not None}
        return CatalogView(self.ids, rows)

    def close(self) -> None:
        self._fh.close()


def build_agent(catalog_path: str | Path, agent_spec: str = DEFAULT_AGENT) -> Any:
    """The agent under demo (constructed once, in a process the demo owns)."""
    return construct_agent(agent_spec, str(catalog_path))


# ---- datasets ---------------------------------------------------------------------------
def dataset_paths(extra: dict[str, str | Path] | None = None) -> dict[str, Path]:
    """Named session files: `public`, one `panel:<name>` per data/panels/*.jsonl, plus `extra`."""
    out: dict[str, Path] = {}
    try:
        out["public"] = resolve_dataset(None)
    except FileNotFoundError:
        pass
    if PANEL_DIR.is_dir():
        for p in sorted(PANEL_DIR.glob("*.jsonl")):
            out[f"panel:{p.stem}"] = p
    for name, path in (extra or {}).items():
        out[name] = Path(path)
    return out


def find_row(rows: list[dict], sample_id: str) -> tuple[int, dict]:
    """(position, row) of a sample id in a dataset."""
    for i, row in enumerate(rows):
        if str(row.get("sample_id")) == sample_id:
            return i, row
    raise SessionError(f"unknown sample id: {sample_id}")


# ---- one turn, as every renderer sees it -------------------------------------------------
@dataclass
class TurnView:
    turn: int
    customer: str                     # what the shopper said this turn
    agent: str                        # the agent's message
    ask_attribute: Any
    products: list[dict]              # display cards, in rank order
    explain: dict                     # `explain(snapshot turn)`
    latency_ms: float | None = None
    hit_rank: int | None = None       # rank of the target if this turn is the counted hit
    target_shown_uncounted: bool = False  # target listed before an intent override (does not count)

    def to_dict(self) -> dict:
        # Its fields hold plain JSON values already (`explain`, product cards): no deep copy per turn.
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass
class SessionResult:
    sample_id: str
    scenario_type: str
    target: dict                      # display card of the target
    hit: bool
    turn: int | None
    rank: int | None
    turns: list[TurnView] = field(default_factory=list)
    snapshot: dict = field(default_factory=dict)   # the raw debug_snapshot
    record: dict = field(default_factory=dict)     # the evaluator's session record
    perturb: str = "none"

    @property
    def outcome_text(self) -> str:
        if self.hit:
            return f"hit at rank {self.rank} on turn {self.turn}"
        return f"miss (target not found in {len(self.turns)} turns)"

    def outcome(self) -> dict:
        return {"hit": self.hit, "turn": self.turn, "rank": self.rank, "text": self.outcome_text}

    def to_dict(self, raw: bool = False) -> dict:
        d = {"sample_id": self.sample_id, "scenario_type": self.scenario_type, "perturb": self.perturb,
             "target": self.target, "outcome": self.outcome(),
             "turns": [t.to_dict() for t in self.turns]}
        if raw:
            d["record"] = self.record
            d["snapshot"] = self.snapshot
        return d


def _fmt_num(x: Any) -> Any:
    return x if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def explain(turn: TurnTrace | None) -> dict:
    """The decisions of one turn (a typed `TurnTrace`), as the plain structure every renderer draws."""
    if turn is None:
        turn = TurnTrace(turn=0, message="")
    funnel = [{"stage": k.replace("_", " "), "count": v} for k, v in turn.funnel.items()
              if k not in ("live", "exact_consistent")]
    if "exact_consistent" in turn.funnel:
        funnel.append({"stage": "exact-consistent", "count": turn.funnel["exact_consistent"]})
    if "live" in turn.funnel:
        funnel.append({"stage": "live (ranked)", "count": turn.funnel["live"]})
    parsed = turn.parsed.to_dict() if turn.parsed is not None else {}
    commit = turn.commit
    return {
        "turn": turn.turn,
        "message": turn.message,
        "kind": parsed.get("kind"),
        "kind_parsed": parsed.get("kind_parsed"),
        "parsed": parsed,
        "shelf": turn.shelf.to_dict() if turn.shelf is not None else None,
        "scenario": turn.state.scenario if turn.state is not None else None,
        "accepted": [{"attribute": c.attribute, "value": c.value, "source": c.source,
                      "confidence": _fmt_num(c.confidence), "negated": c.negated} for c in turn.accepted],
        "rejected": [{"value": r.value, "reason": r.reason} for r in turn.rejected],
        "funnel": funnel,
        "questions": [{"attribute": q.attribute, "value": q.value, "top1_mass": q.top1_mass, "groups": q.groups}
                      for q in turn.questions],
        "commit": {"count": commit.count if commit else None, "reason": commit.reason if commit else None,
                   "expected_value": commit.expected_value if commit else None},
        "ask_attribute": turn.ask_attribute,
        "understood": list(turn.understood),
        "model": ({"called": turn.understanding.llm_called, "error": turn.understanding.llm_error,
                   "intent": turn.understanding.intent, "usage": dict(turn.understanding.usage)}
                  if turn.understanding is not None else None),
        "fault": turn.fault,
    }


def _products(lookup: ProductLookup, pids: list[str], scores: dict[str, Any], target: str | None) -> list[dict]:
    out = []
    for rank, pid in enumerate(pids, 1):
        card = lookup.card(pid)
        card["rank"] = rank
        card["score"] = _fmt_num(scores.get(pid))
        card["is_target"] = pid == target
        out.append(card)
    return out


def _scores(resp: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    recs = resp.get("recommendations") if isinstance(resp, dict) else None
    if isinstance(recs, list):
        for item in recs:
            if isinstance(item, dict) and item.get("parent_asin") is not None:
                out.setdefault(str(item["parent_asin"]).strip(), item.get("score"))
    return out


# ---- evaluator sessions -------------------------------------------------------------------
class _Recorder:
    """Wraps the agent for `run_session`: remembers the session id and each raw response."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.session_id: str | None = None
        self.responses: list[Any] = []

    def reset(self, session_id: str, user_profile: dict) -> None:
        self.session_id = session_id
        self.agent.reset(session_id, user_profile)

    def respond(self, session_id: str, message: str, turn: int, top_k: int) -> Any:
        self.responses.append(None)
        resp = self.agent.respond(session_id, message, turn, top_k)
        self.responses[-1] = resp
        return resp


def trace_of(agent: Any, session_id: str) -> SessionTrace:
    """The agent's typed trace of a session, or an empty one if it keeps none."""
    fn = getattr(agent, "trace", None)
    if not callable(fn):
        return SessionTrace(session_id=session_id, known=False)
    try:
        got = fn(session_id)
    except Exception:  # a demo must not die on a debugging aid
        log.exception("trace of %s failed", session_id)
        return SessionTrace(session_id=session_id, known=False)
    return got if isinstance(got, SessionTrace) else SessionTrace(session_id=session_id, known=False)


def play_evaluator_session(agent: Any, lookup: ProductLookup, row: dict, index: int = 0,
                           modes: frozenset[str] = frozenset(), drop_rate: float = 0.35,
                           perturb_label: str = "none") -> SessionResult:
    """Play one dataset row with the evaluator's own `run_session`; every turn explained."""
    try:
        target_id = row["ground_truth"]["parent_asin"]
    except (KeyError, TypeError):
        raise SessionError(f"session {row.get('sample_id')!r} has no ground_truth.parent_asin") from None
    if target_id not in lookup:
        raise SessionError(f"target {target_id} of {row.get('sample_id')} is not in the catalog {lookup.path}")
    recorder = _Recorder(agent)
    record = run_session(recorder, row, index, lookup.catalog_view({target_id}), modes, drop_rate,
                         transcripts=True)
    record.pop("_latencies", None)
    trace = trace_of(agent, recorder.session_id or "")
    snap_turns = list(trace.turns)
    by_turn = {t.turn: t for t in snap_turns}  # a fault turn carries its turn number too
    views: list[TurnView] = []
    target_turn = record["turn"] if record["hit"] else None
    for k, tr in enumerate(record.get("transcript", [])):
        recs = tr.get("recommendations") or []
        resp = recorder.responses[k] if k < len(recorder.responses) else None
        views.append(TurnView(
            turn=tr["turn"], customer=tr["customer"], agent=tr.get("agent") or "",
            ask_attribute=tr.get("ask_attribute"),
            products=_products(lookup, recs, _scores(resp), target_id),
            explain=explain(by_turn.get(tr["turn"], snap_turns[k] if k < len(snap_turns) else None)),
            latency_ms=tr.get("latency_ms"),
            hit_rank=record["rank"] if tr["turn"] == target_turn else None,
            target_shown_uncounted=target_id in recs and tr["turn"] != target_turn,
        ))
    return SessionResult(sample_id=record["sample_id"], scenario_type=str(record.get("scenario_type")),
                         target=lookup.card(target_id), hit=record["hit"], turn=record["turn"],
                         rank=record["rank"], turns=views, snapshot=trace.to_dict(), record=record,
                         perturb=perturb_label)


# ---- free-text chat -------------------------------------------------------------------------
class ChatSession:
    """A person plays the shopper: free text in, the agent's turn (explained) out."""

    def __init__(self, agent: Any, lookup: ProductLookup, session_id: str | None = None,
                 profile: dict | None = None, lock: threading.Lock | None = None) -> None:
        self.agent = agent
        self.lookup = lookup
        self.session_id = session_id or f"chat-{uuid.uuid4().hex[:12]}"
        self.profile = dict(profile or {})
        self.lock = lock or threading.Lock()
        self.turn = 0
        self.history: list[TurnView] = []
        self.reset()

    @property
    def done(self) -> bool:
        return self.turn >= P.MAX_TURNS

    def reset(self) -> None:
        with self.lock:
            self.agent.reset(self.session_id, self.profile)
        self.turn = 0
        self.history = []

    def send(self, message: str) -> TurnView:
        """One turn. Raises SessionError after the benchmark's 10 turns."""
        if self.done:
            raise SessionError(f"this session has had its {P.MAX_TURNS} turns; reset to start again")
        self.turn += 1
        with self.lock:
            start = time.perf_counter()
            try:
                resp = self.agent.respond(self.session_id, message, self.turn, P.TOP_K)
            except Exception as exc:  # the evaluator counts it as an empty response
                resp = {"message": "", "ask_attribute": None, "recommendations": [], "error": repr(exc)}
            latency_ms = round((time.perf_counter() - start) * 1000.0, 3)
            trace = trace_of(self.agent, self.session_id)
        if not P.valid_response(resp):
            resp = {"message": "", "ask_attribute": None, "recommendations": []}
        recs = P.normalize_recommendations(resp.get("recommendations"), self.lookup.ids)
        turns = list(trace.turns)
        ask = resp.get("ask_attribute")
        view = TurnView(turn=self.turn, customer=message, agent=resp["message"],
                        ask_attribute=ask if isinstance(ask, (str, type(None))) else repr(ask),
                        products=_products(self.lookup, recs, _scores(resp), None),
                        explain=explain(turns[-1] if turns else None), latency_ms=latency_ms)
        self.history.append(view)
        return view
