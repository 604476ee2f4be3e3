"""Playing sessions for the demos: one module shared by replay, chat and web.

- `ProductLookup` indexes a catalog file by byte offset (one pass, about
  0.6 s on 50k rows) so that any product's display fields or full row can be
  read back without holding the catalog in memory twice (the agent has its
  own copy).
- `play_evaluator_session` plays one dataset row exactly as the evaluator
  does: it calls `evaluator.local_evaluator.run_session` itself (same
  customer, same perturbations, same hit rule: the session stops at the first
  counted hit) through a thin recorder that remembers the session id, then
  pairs every transcript turn with the agent's `debug_snapshot` turn.
- `ChatSession` lets a person play the shopper with free text.
- `explain` turns one snapshot turn into the plain structure every renderer
  (terminal and web) draws; it tolerates missing keys and fault turns.
"""
from __future__ import annotations

import json
import math
import threading
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evaluator import protocol as P
from evaluator.data import PROJECT_ROOT, CatalogView, read_jsonl, resolve_dataset
from evaluator.local_evaluator import load_agent_class, run_session

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
    """The agent under demo (constructed once)."""
    return load_agent_class(agent_spec)(str(catalog_path))


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
        return asdict(self)


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


def explain(snap: dict | None) -> dict:
    """The decisions of one turn, normalised for the renderers (missing keys are fine)."""
    snap = snap if isinstance(snap, dict) else {}
    parsed = snap.get("parsed") if isinstance(snap.get("parsed"), dict) else {}
    funnel_raw = snap.get("funnel") if isinstance(snap.get("funnel"), dict) else {}
    stages = [(k.replace("_", " "), v) for k, v in funnel_raw.items()
              if k not in ("live", "exact_consistent") and isinstance(v, int)]
    funnel = [{"stage": k, "count": v} for k, v in stages]
    if "exact_consistent" in funnel_raw:
        funnel.append({"stage": "exact-consistent", "count": funnel_raw["exact_consistent"]})
    if "live" in funnel_raw:
        funnel.append({"stage": "live (ranked)", "count": funnel_raw["live"]})
    questions = []
    for q in snap.get("questions") or []:
        if isinstance(q, dict):
            questions.append({"attribute": str(q.get("attribute")), "value": _fmt_num(q.get("value")) or 0.0,
                              "top1_mass": _fmt_num(q.get("top1_mass")), "groups": _fmt_num(q.get("groups"))})
    commit = snap.get("commit") if isinstance(snap.get("commit"), dict) else {}
    accepted = [c for c in snap.get("accepted_constraints") or [] if isinstance(c, dict)]
    rejected = [c for c in snap.get("rejected_constraints") or [] if isinstance(c, dict)]
    shelf = snap.get("shelf") if isinstance(snap.get("shelf"), dict) else None
    state = snap.get("state") if isinstance(snap.get("state"), dict) else {}
    return {
        "turn": snap.get("turn"),
        "message": snap.get("message"),
        "kind": parsed.get("kind"),
        "parsed": parsed,
        "shelf": shelf,
        "scenario": state.get("scenario"),
        "accepted": [{"attribute": str(c.get("attribute", "")), "value": str(c.get("value", "")),
                      "source": str(c.get("source", "")), "confidence": _fmt_num(c.get("confidence")),
                      "negated": bool(c.get("negated"))} for c in accepted],
        "rejected": [{"value": str(c.get("value", c.get("phrase", ""))), "reason": str(c.get("reason", ""))}
                     for c in rejected],
        "funnel": funnel,
        "questions": questions,
        "commit": {"count": commit.get("count"), "reason": commit.get("reason"),
                   "expected_value": _fmt_num(commit.get("expected_value"))},
        "ask_attribute": snap.get("ask_attribute"),
        "fault": snap.get("fault"),
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


def snapshot_of(agent: Any, session_id: str) -> dict:
    """The agent's debug snapshot, or an empty one if it has none."""
    fn = getattr(agent, "debug_snapshot", None)
    if not callable(fn):
        return {"session_id": session_id, "known": False, "turns": []}
    try:
        snap = fn(session_id)
    except Exception as exc:  # a demo must not die on a debugging aid
        return {"session_id": session_id, "known": False, "turns": [], "error": repr(exc)}
    return snap if isinstance(snap, dict) else {"session_id": session_id, "known": False, "turns": []}


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
    snapshot = snapshot_of(agent, recorder.session_id or "")
    snap_turns = [t for t in snapshot.get("turns", []) if isinstance(t, dict)]
    by_turn = {t.get("turn"): t for t in snap_turns}  # a fault turn carries its turn number too
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
                         rank=record["rank"], turns=views, snapshot=snapshot, record=record,
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
            try:
                resp = self.agent.respond(self.session_id, message, self.turn, P.TOP_K)
            except Exception as exc:  # the evaluator counts it as an empty response
                resp = {"message": "", "ask_attribute": None, "recommendations": [], "error": repr(exc)}
            snap = snapshot_of(self.agent, self.session_id)
        if not P.valid_response(resp):
            resp = {"message": "", "ask_attribute": None, "recommendations": []}
        recs = P.normalize_recommendations(resp.get("recommendations"), self.lookup.ids)
        turns = [t for t in snap.get("turns", []) if isinstance(t, dict)]
        ask = resp.get("ask_attribute")
        view = TurnView(turn=self.turn, customer=message, agent=resp["message"],
                        ask_attribute=ask if isinstance(ask, (str, type(None))) else repr(ask),
                        products=_products(self.lookup, recs, _scores(resp), None),
                        explain=explain(turns[-1] if turns else None))
        self.history.append(view)
        return view
