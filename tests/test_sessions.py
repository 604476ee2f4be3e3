"""Sessions are never lost: more live sessions than the memory bound, interleaved, give the results of playing alone."""
from __future__ import annotations

import json
from pathlib import Path

import contest as P
from evaluator.data import load_catalog
from evaluator.local_evaluator import build_customer, run_session
from starter.agent import Agent
from tests.conftest import SMALL_PRODUCTS

SCENARIOS = ("buying", "browsing", "intent_override", "boundary")


def _rows(n: int) -> list[dict]:
    return [{"sample_id": f"s{k:03d}", "scenario_type": SCENARIOS[k % 4], "user_profile": {"k": k},
             "ground_truth": {"parent_asin": SMALL_PRODUCTS[(k // 4) % len(SMALL_PRODUCTS)]["parent_asin"]}}
            for k in range(n)]


def _interleaved(agent: Agent, rows: list[dict], catalog: dict) -> list[dict]:
    """Every session one turn at a time, round robin (the evaluator's rules, sessions open together)."""
    live = []
    for k, row in enumerate(rows):
        sid = f"session-{k:05d}-{row['sample_id']}"
        agent.reset(sid, row["user_profile"])
        customer = build_customer(row, catalog[row["ground_truth"]["parent_asin"]], frozenset(), 0.35)
        live.append({"sid": sid, "row": row, "customer": customer, "message": customer.opening(), "turn": 1,
                     "transcript": [], "result": None})
    while any(s["result"] is None for s in live):
        for s in live:
            if s["result"] is not None:
                continue
            resp = agent.respond(s["sid"], s["message"], s["turn"], P.TOP_K)
            recs = P.normalize_recommendations(resp.get("recommendations"), catalog)
            s["transcript"].append({"customer": s["message"], "agent": resp["message"], "recommendations": recs,
                                    "ask_attribute": resp["ask_attribute"]})
            target = s["row"]["ground_truth"]["parent_asin"]
            if target in recs and s["customer"].hits_count():
                s["result"] = (True, s["turn"], recs.index(target) + 1)
            elif s["turn"] == P.MAX_TURNS:
                s["result"] = (False, None, None)
            else:
                t = s["turn"]
                s["message"] = (s["customer"].override_message() if s["customer"].is_override_turn(t + 1)
                                else s["customer"].reply(resp["ask_attribute"], t + 1))
                s["turn"] = t + 1
    return [{"result": s["result"], "transcript": s["transcript"]} for s in live]


def test_interleaved_sessions_beyond_the_bound_equal_sessions_played_alone(small_catalog: Path, monkeypatch) -> None:
    monkeypatch.delenv("AGENT_MAX_SESSIONS", raising=False)       # the default bound
    rows = _rows(130)
    catalog = load_catalog(small_catalog)
    alone = []
    solo = Agent(str(small_catalog))
    for k, row in enumerate(rows):
        rec = run_session(solo, row, k, catalog, transcripts=True)
        alone.append({"result": (rec["hit"], rec["turn"], rec["rank"]),
                      "transcript": [{"customer": t["customer"], "agent": t["agent"],
                                      "recommendations": t["recommendations"], "ask_attribute": t["ask_attribute"]}
                                     for t in rec["transcript"]]})
        solo.close_session(f"session-{k:05d}-{row['sample_id']}")
    agent = Agent(str(small_catalog))
    together = _interleaved(agent, rows, catalog)
    assert agent.store.evicted > 0 and agent.store.rebuilt > 0 and len(agent.sessions) <= agent.max_sessions
    assert together == alone


def test_a_rebuilt_session_has_the_same_trace(small_catalog: Path, monkeypatch) -> None:
    monkeypatch.setenv("AGENT_MAX_SESSIONS", "1")
    agent = Agent(str(small_catalog))
    agent.reset("a", {"x": 1})
    agent.respond("a", "something black for my wife", 1, 10)
    first = json.dumps(agent.debug_snapshot("a"), sort_keys=True)
    agent.reset("b", {})                              # evicts "a"
    assert "a" not in agent.sessions
    assert json.dumps(agent.debug_snapshot("a"), sort_keys=True) == first
    agent.close_session("a")
    assert agent.debug_snapshot("a")["known"] is False


def test_odd_inputs_replay_as_they_were_read(small_catalog: Path, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("AGENT_MAX_SESSIONS", "1")
    monkeypatch.setenv("AGENT_SESSION_DB", str(tmp_path / "journal.sqlite"))
    agent = Agent(str(small_catalog))
    agent.reset("a", {})
    answers = [agent.respond("a", msg, turn, 10) for msg, turn in
               ((b"black \xff tee", 1), (["list"], "2"), ("shoes \ud800", None))]
    trace = json.dumps(agent.debug_snapshot("a"), sort_keys=True)
    agent.reset("b", {})
    assert json.dumps(agent.debug_snapshot("a"), sort_keys=True) == trace
    assert all(isinstance(a["message"], str) for a in answers)
    assert (tmp_path / "journal.sqlite").is_file()
