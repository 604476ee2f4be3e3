"""The session loop and scoring of evaluator/local_evaluator.py, with scripted agents.

Agents used by class path (`tests.test_evaluator:Class`) are defined at module
level; the others are instances handed to `run_session` directly.
"""
from __future__ import annotations

import json
import os
import time
import zlib
from pathlib import Path

import pytest

from evaluator import local_evaluator as E
import contest as P
from evaluator.data import SHARED_DIR, load_catalog, read_jsonl

NO_ATTR = "Those options are not quite right yet. Ask me about one specific attribute."

# ---------------------------------------------------------------- a small catalog

BELT = {"parent_asin": "T_BELT", "title": "Classic Leather Belt",
        "features": ["Genuine leather strap", "Black finish"], "description": ["A belt."], "price": 21.0,
        "categories": ["Clothing, Shoes & Jewelry", "Men", "Accessories", "Belts"],
        "details": {"Department": "mens"}, "average_rating": 4.5, "rating_number": 321, "store": "Acme"}
# card: hard (leather, color: black), soft (Genuine leather strap, Black finish); category "Accessories Belts"

SHELVES = [
    ["Clothing, Shoes & Jewelry", "Men", "Accessories", "Belts"],
    ["Clothing, Shoes & Jewelry", "Women", "Shoes", "Running"],
    ["Clothing, Shoes & Jewelry", "Women", "Clothing", "Dresses"],
    ["Clothing, Shoes & Jewelry", "Novelty & More", "Clothing", "T-Shirts"],
]
COLOURS = ["black", "red", "blue", "white", "green", ""]
MATERIALS = ["cotton", "leather", "polyester", "", "wool"]


def make_catalog(n: int = 60) -> list[dict]:
    rows = [BELT]
    for i in range(1, n):
        colour, material = COLOURS[i % 6], MATERIALS[i % 5]
        rows.append({
            "parent_asin": f"P{i:02d}",
            "title": f"{colour.title()} {material.title()} Item {i}".replace("  ", " ").strip(),
            "features": [f"Feature {i} a", f"Size {i % 4} fits wide", f"Style {i % 3}"][: 1 + i % 3],
            "description": [f"Item number {i}."],
            "price": None if i % 7 == 0 else 10 + i,
            "categories": SHELVES[i % 4],
            "details": {"Department": "womens" if i % 2 else "mens"},
            "average_rating": 4.0, "rating_number": (i * 37) % 500, "store": f"Store{i % 5}",
        })
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def catalog_file(tmp_path) -> Path:
    return write_jsonl(tmp_path / "catalog.jsonl", make_catalog())


@pytest.fixture
def catalog(catalog_file) -> dict[str, dict]:
    return load_catalog(catalog_file)


def row(sample_id: str, scenario: str, target: str = "T_BELT", **extra) -> dict:
    r = {"category_bucket": "clothing", "difficulty_bucket": "easy", "ground_truth": {"parent_asin": target},
         "sample_id": sample_id, "scenario_type": scenario, "user_profile": {"summary": f"profile of {sample_id}"}}
    r.update(extra)
    return r


def panel_rows(n: int = 16) -> list[dict]:
    ids = ["T_BELT"] + [f"P{i:02d}" for i in range(1, 60)]
    return [row(f"w_{i:02d}", P.SCENARIOS[i % 4], ids[(i * 11) % len(ids)]) for i in range(n)]


# ---------------------------------------------------------------- scripted agents

class ScriptedAgent:
    """Plays `plan(turn, message)` -> response (an Exception instance is raised); records every call."""

    def __init__(self, plan, sleep: float = 0.0) -> None:
        self.plan = plan
        self.sleep = sleep
        self.calls: list[tuple] = []
        self.resets: list[tuple] = []

    def reset(self, session_id, user_profile):
        self.resets.append((session_id, user_profile))

    def respond(self, session_id, user_message, turn, top_k):
        self.calls.append((session_id, user_message, turn, top_k))
        if self.sleep:
            time.sleep(self.sleep)
        out = self.plan(turn, user_message)
        if isinstance(out, Exception):
            raise out
        return out


def asks(seq, recs_at=None):
    """A plan asking seq[turn-1] and recommending recs_at(turn) (default nothing)."""
    def plan(turn, message):
        ask = seq[turn - 1] if turn <= len(seq) else None
        return {"message": "ok", "ask_attribute": ask, "recommendations": recs_at(turn) if recs_at else []}
    return plan


PAGING_ATTRS = ["color", "material", None, "size", "other", "bogus", "style", ""]


class PagingAgent:
    """Deterministic: three ids a turn at a place set by the message text (crc32) and turn."""

    def __init__(self, catalog_path: str) -> None:
        with open(catalog_path, encoding="utf-8") as fh:
            self.ids = sorted(json.loads(line)["parent_asin"] for line in fh if line.strip())

    def reset(self, session_id, user_profile):
        self.session = session_id

    def respond(self, session_id, user_message, turn, top_k):
        h = zlib.crc32(user_message.encode("utf-8"))
        start = (h + 7 * turn) % len(self.ids)
        recs = [self.ids[(start + j) % len(self.ids)] for j in range(3)]
        return {"message": f"turn {turn}", "ask_attribute": PAGING_ATTRS[h % len(PAGING_ATTRS)],
                "recommendations": [{"parent_asin": r, "score": 1.0} for r in recs],
                "usage": {"prompt_tokens": len(user_message), "completion_tokens": turn}}


class SleepyPagingAgent(PagingAgent):
    """PagingAgent that takes 10 ms a turn."""

    def respond(self, session_id, user_message, turn, top_k):
        time.sleep(0.01)
        return super().respond(session_id, user_message, turn, top_k)


class PreparingPagingAgent(PagingAgent):
    """PagingAgent with a `prepare_catalog` hook that notes each call (PREPARED_LOG)."""

    @staticmethod
    def prepare_catalog(catalog_path: str) -> bool:
        with open(os.environ["PREPARED_LOG"], "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()}\n")
        return True


class ExplodingAgent:
    def __init__(self, catalog_path: str) -> None:
        raise RuntimeError("constructed")


class ResetFailAgent(PagingAgent):
    def reset(self, session_id, user_profile):
        raise RuntimeError("reset failed")


def customer_messages(record: dict) -> list[str]:
    return [t["customer"] for t in record["transcript"]]


# ---------------------------------------------------------------- messages and replies in a session

def test_buying_session_messages_turn_by_turn(catalog):
    seq = ["material", "material", "size", None, "colour", "budget", "xyz", "", 7]
    agent = ScriptedAgent(asks(seq, lambda t: ["P01"]))
    rec = E.run_session(agent, row("b1", "buying"), 0, catalog, transcripts=True)
    assert customer_messages(rec) == [
        "I'm looking for Accessories Belts. A key requirement is: leather.",
        "For that, what matters is: Genuine leather strap.",
        "I don't have an additional preference for material.",
        "I don't have an additional preference for size.",
        NO_ATTR,
        "For that, what matters is: color: black; Black finish.",
        "I don't have an additional preference for budget.",
        "I don't have an additional preference for other.",
        NO_ATTR,
        NO_ATTR,
    ]
    assert (rec["hit"], rec["turn"], rec["rank"]) == (False, None, None)
    assert [c[2] for c in agent.calls] == list(range(1, 11))
    assert {c[3] for c in agent.calls} == {10}
    assert len({c[0] for c in agent.calls}) == 1
    assert agent.resets == [(agent.calls[0][0], {"summary": "profile of b1"})]


def test_browsing_and_boundary_sessions(catalog):
    rec = E.run_session(ScriptedAgent(asks(["material"])), row("w1", "browsing"), 0, catalog, transcripts=True)
    assert customer_messages(rec)[:2] == ["I'm looking for Accessories Belts, but I'm still exploring.",
                                          "For that, what matters is: leather; Genuine leather strap."]
    rec = E.run_session(ScriptedAgent(asks([None, " ", "color", "color", "colour"])), row("x1", "boundary"), 1,
                        catalog, transcripts=True)
    assert customer_messages(rec)[:6] == [
        "I'm looking for Accessories Belts, but I'm still exploring.",
        NO_ATTR,                                                          # None does not use the boundary
        "I don't have a preference for  ; please use your judgment.",      # the raw " ", used up
        "For that, what matters is: color: black; Black finish.",
        "I don't have an additional preference for color.",
        "For that, what matters is: leather; Genuine leather strap.",      # unknown -> other
    ]


def test_each_session_gets_a_fresh_id_and_reset(catalog):
    agent = ScriptedAgent(asks([], lambda t: ["T_BELT"]))
    rows = [row("a", "buying"), row("b", "browsing")]
    for i, r in enumerate(rows):
        E.run_session(agent, r, i, catalog)
    assert len(agent.resets) == 2 and agent.resets[0][0] != agent.resets[1][0]
    assert [c[0] for c in agent.calls] == [agent.resets[0][0], agent.resets[1][0]]


# ---------------------------------------------------------------- intent override

@pytest.mark.parametrize("sample_id, override_turn", [("ovr_0", 3), ("ovr_4", 4)])
def test_override_turn_and_message(catalog, sample_id, override_turn):
    agent = ScriptedAgent(asks(["other"] * 10, lambda t: ["T_BELT"]))
    rec = E.run_session(agent, row(sample_id, "intent_override"), 0, catalog, transcripts=True)
    expected = ["I'm looking for Accessories Belts. Black finish",
                "For that, what matters is: leather; color: black.",
                # the old value was never disclosed, so it can come back in a reply
                "For that, what matters is: Genuine leather strap; Black finish."][:override_turn - 1]
    expected.append("Actually, ignore my earlier preference. What I need is: leather.")
    assert customer_messages(rec) == expected
    # recommended from turn 1, but only found once the override has been sent
    assert (rec["hit"], rec["turn"], rec["rank"]) == (True, override_turn, 1)


def test_pre_override_hits_do_not_count(catalog):
    plan = asks([None] * 10, lambda t: ["T_BELT"] if t in (1, 2) else ["P01"])
    rec = E.run_session(ScriptedAgent(plan), row("ovr_0", "intent_override"), 0, catalog)
    assert rec["hit"] is False
    plan = asks([None] * 10, lambda t: ["P01", "T_BELT"] if t in (1, 2, 5) else ["P01"])
    rec = E.run_session(ScriptedAgent(plan), row("ovr_0", "intent_override"), 0, catalog)
    assert (rec["hit"], rec["turn"], rec["rank"]) == (True, 5, 2)


def test_row_with_card_and_behavior_is_used_as_is(catalog):
    card = {"title": "Own", "hard_constraints": ["custom hard"], "soft_preferences": ["custom soft"]}
    rec = E.run_session(ScriptedAgent(asks(["other"])), row("c1", "buying", intent_card=card, behavior={}),
                        0, catalog, transcripts=True)
    assert customer_messages(rec)[:2] == ["I'm looking for Accessories Belts. A key requirement is: custom hard.",
                                          "For that, what matters is: custom soft."]
    behavior = {"override_turn": 2, "old_value": "OLD", "new_value": "NEW"}
    rec = E.run_session(ScriptedAgent(asks([], lambda t: ["T_BELT"])),
                        row("c2", "intent_override", intent_card=card, behavior=behavior), 0, catalog,
                        transcripts=True)
    assert customer_messages(rec) == ["I'm looking for Accessories Belts. OLD",
                                      "Actually, ignore my earlier preference. What I need is: NEW."]
    assert (rec["hit"], rec["turn"]) == (True, 2)


# ---------------------------------------------------------------- recommendations and ranks

def test_rank_counts_only_normalized_recommendations(catalog):
    ten_others = [f"P{i:02d}" for i in range(1, 11)]

    def recs(turn):
        if turn == 1:
            return ten_others + ["T_BELT"]          # 11th valid id: not kept
        return ["NOPE", "P01", {"parent_asin": "P01"}, " P02 ", "", {"parent_asin": None}, " T_BELT"]
    rec = E.run_session(ScriptedAgent(asks([], recs)), row("r1", "browsing"), 0, catalog)
    assert (rec["hit"], rec["turn"], rec["rank"]) == (True, 2, 3)


def test_tuple_recommendations_count_as_nothing(catalog):
    plan = lambda t, m: {"message": "ok", "recommendations": ("T_BELT",) if t < 4 else [{"parent_asin": "T_BELT"}]}
    rec = E.run_session(ScriptedAgent(plan), row("r2", "buying"), 0, catalog)
    assert (rec["hit"], rec["turn"], rec["rank"]) == (True, 4, 1)


def test_exceptions_and_invalid_responses_are_empty_turns(catalog):
    def plan(turn, message):
        return {
            1: ValueError("boom"),
            2: "not a dict",
            3: {"message": None, "ask_attribute": "color", "recommendations": ["T_BELT"],
                "usage": {"prompt_tokens": 100, "completion_tokens": 100}},
            4: {"message": 5, "ask_attribute": "color", "recommendations": ["T_BELT"]},
            5: {"message": "ok", "ask_attribute": "color", "recommendations": ("T_BELT",),
                "usage": {"prompt_tokens": True, "completion_tokens": 2}},
            6: {"message": "", "recommendations": ["T_BELT"],
                "usage": {"prompt_tokens": -5, "completion_tokens": 1.5}},
        }[turn]
    agent = ScriptedAgent(plan)
    rec = E.run_session(agent, row("e1", "buying"), 0, catalog, transcripts=True)
    assert (rec["hit"], rec["turn"], rec["rank"]) == (True, 6, 1)
    assert customer_messages(rec)[1:] == [NO_ATTR, NO_ATTR, NO_ATTR, NO_ATTR,
                                          "For that, what matters is: color: black; Black finish."]
    assert (rec["prompt_tokens"], rec["completion_tokens"]) == (1, 2)
    assert len(agent.calls) == 6


def test_construction_and_reset_are_not_guarded(catalog_file, catalog):
    rows = [row("a", "buying")]
    with pytest.raises(RuntimeError, match="constructed"):
        E.evaluate("tests.test_evaluator:ExplodingAgent", str(catalog_file), rows, catalog, progress=False)
    with pytest.raises(RuntimeError, match="reset failed"):
        E.evaluate("tests.test_evaluator:ResetFailAgent", str(catalog_file), rows, catalog, progress=False)


# ---------------------------------------------------------------- tokens and summary

def test_token_usage_summed_across_turns_and_sessions(catalog):
    usages = {1: {"prompt_tokens": 3, "completion_tokens": 4}, 2: {"prompt_tokens": True, "completion_tokens": -1},
              3: {"prompt_tokens": 2.0, "completion_tokens": 5}, 4: "lots"}

    def plan(turn, message):
        return {"message": "m", "recommendations": ["T_BELT"] if turn == 4 else [], "usage": usages[turn]}
    records = [E.run_session(ScriptedAgent(plan), row(s, "buying"), i, catalog) for i, s in enumerate("ab")]
    assert [(r["prompt_tokens"], r["completion_tokens"]) for r in records] == [(4, 9), (4, 9)]
    summary = E.build_summary(records)
    assert summary["reported_token_usage"] == {"prompt_tokens": 8, "completion_tokens": 18, "total_tokens": 26}
    assert all("prompt_tokens" not in s and "completion_tokens" not in s for s in summary["sessions"])


def test_build_summary_shape_and_scenario_entries():
    def rec(sid, scenario, turn, rank):
        return {"sample_id": sid, "scenario_type": scenario, "target_parent_asin": "T", "hit": turn is not None,
                "turn": turn, "rank": rank, "prompt_tokens": 1, "completion_tokens": 0}
    records = [rec("1", "browsing", 2, 1), rec("2", "buying", None, None), rec("3", "browsing", None, None),
               rec("4", "boundary", 10, 4)]
    s = E.build_summary(records)
    assert list(s) == ["sample_count", "hit_rate_at_10", "mrr", "mttc", "efficiency",
                       "recommended_technical_score", "reported_token_usage", "scenario_metrics", "sessions"]
    assert list(s["scenario_metrics"]) == ["browsing", "buying", "boundary"]    # first appearance
    assert s["scenario_metrics"]["browsing"] == {"sample_count": 2, "hit_rate_at_10": 0.5, "mrr": 0.5,
                                                 "mttc": 6.5}
    for entry in s["scenario_metrics"].values():
        assert set(entry) == {"sample_count", "hit_rate_at_10", "mrr", "mttc"}
    assert (s["hit_rate_at_10"], s["mrr"], s["mttc"], s["efficiency"]) == (0.5, 0.3125, 8.5, 0.25)
    assert s["recommended_technical_score"] == round(0.25 + 0.3 * 0.3125 + 0.2 * 0.25, 6)
    assert [x["sample_id"] for x in s["sessions"]] == ["1", "2", "3", "4"]


# ---------------------------------------------------------------- the CLI and the run

def test_missing_target_is_reported_before_the_run(tmp_path, catalog_file):
    ds = write_jsonl(tmp_path / "ds.jsonl", [row("ok", "buying"), row("bad_1", "buying", "NOT_THERE")])
    with pytest.raises(SystemExit) as exc:
        # ExplodingAgent raises when constructed: the check must come first
        E.main(["--catalog", str(catalog_file), "--dataset", str(ds), "--agent",
                "tests.test_evaluator:ExplodingAgent", "--output", str(tmp_path / "r.json"), "--quiet"])
    assert "missing from the catalog" in str(exc.value.code) and "bad_1 -> NOT_THERE" in str(exc.value.code)
    assert not (tmp_path / "r.json").exists()


def test_cli_writes_the_summary(tmp_path, catalog_file, catalog, capsys):
    rows = panel_rows()
    ds = write_jsonl(tmp_path / "ds.jsonl", rows)
    out = tmp_path / "r.json"
    assert E.main(["--catalog", str(catalog_file), "--dataset", str(ds), "--agent",
                   "tests.test_evaluator:PagingAgent", "--output", str(out), "--quiet"]) == 0
    written = json.loads(out.read_text())
    records, _ = E.evaluate("tests.test_evaluator:PagingAgent", str(catalog_file), rows, catalog, progress=False)
    assert written == E.build_summary(records)
    assert "TechnicalScore" in capsys.readouterr().out


def _strip_latency(summary: dict) -> list[dict]:
    return [{**s, "transcript": [{k: v for k, v in t.items() if k != "latency_ms"} for t in s["transcript"]]}
            for s in summary["sessions"]]


def test_two_workers_give_the_same_sessions_and_sleeping_changes_nothing(catalog_file, catalog):
    rows = panel_rows()
    one, stats1 = E.evaluate("tests.test_evaluator:PagingAgent", str(catalog_file), rows, catalog,
                             workers=1, transcripts=True, progress=False)
    two, _ = E.evaluate("tests.test_evaluator:PagingAgent", str(catalog_file), rows, catalog,
                        workers=2, transcripts=True, progress=False)
    slow, stats_slow = E.evaluate("tests.test_evaluator:SleepyPagingAgent", str(catalog_file), rows, catalog,
                                  workers=1, transcripts=True, progress=False)
    s1, s2, s3 = E.build_summary(one), E.build_summary(two), E.build_summary(slow)
    assert _strip_latency(s1) == _strip_latency(s2) == _strip_latency(s3)
    for key in ("hit_rate_at_10", "mrr", "mttc", "recommended_technical_score", "reported_token_usage",
                "scenario_metrics"):
        assert s1[key] == s2[key] == s3[key]
    # the panel is a real mix: some hits at different turns, some misses
    assert 0 < sum(r["hit"] for r in one) < len(one)
    assert len({r["turn"] for r in one if r["hit"]}) > 1
    assert stats_slow["latency_ms"]["median"] >= 10.0 > stats1["latency_ms"]["median"]


def test_the_catalog_is_prepared_once_before_the_workers_start(catalog_file, catalog, tmp_path, monkeypatch):
    """An agent's optional `prepare_catalog` (ours builds and stores its index) runs once, before the
    workers start, so they open a built index instead of each building it."""
    log = tmp_path / "prepared.log"
    monkeypatch.setenv("PREPARED_LOG", str(log))
    rows = panel_rows()[:4]
    E.evaluate("tests.test_evaluator:PreparingPagingAgent", str(catalog_file), rows, catalog, workers=2,
               progress=False)
    assert len(log.read_text(encoding="utf-8").split()) == 1
    E.evaluate("tests.test_evaluator:PreparingPagingAgent", str(catalog_file), rows, catalog, workers=1,
               progress=False)
    assert len(log.read_text(encoding="utf-8").split()) == 1        # one process: nothing to prepare


def test_our_agent_prepares_its_index_once(small_catalog, tmp_path, monkeypatch):
    from starter.index import cache as index_cache
    from starter.agent import Agent
    monkeypatch.setenv("AGENT_INDEX_CACHE", str(tmp_path / "cache"))
    hashed: list[str] = []
    real = index_cache.file_sha256
    monkeypatch.setattr(index_cache, "file_sha256", lambda path, *a: hashed.append(Path(path).name) or real(path, *a))
    assert Agent.prepare_catalog(str(small_catalog)) is True            # built and stored
    assert hashed.count(small_catalog.name) == 1                        # the catalog is hashed once
    monkeypatch.undo()
    monkeypatch.setenv("AGENT_INDEX_CACHE", str(tmp_path / "cache"))
    assert Agent(str(small_catalog)).index.cache_state == "loaded"
    assert Agent.prepare_catalog(str(small_catalog)) is True            # already there: opened, not rebuilt
    monkeypatch.setenv("AGENT_INDEX_CACHE", "off")
    assert Agent.prepare_catalog(str(small_catalog)) is False
    assert Agent.prepare_catalog(str(tmp_path / "missing.jsonl")) is False


def test_sleeping_agent_is_scored_normally(catalog):
    agent = ScriptedAgent(asks([], lambda t: ["P01", "T_BELT"] if t == 2 else []), sleep=0.05)
    rec = E.run_session(agent, row("s1", "browsing"), 0, catalog)
    assert (rec["hit"], rec["turn"], rec["rank"]) == (True, 2, 2)
    assert min(rec["_latencies"]) >= 50.0


# ---------------------------------------------------------------- the official figures (slow)

@pytest.mark.slow
def test_weak_baseline_reproduces_the_official_proxy_figures():
    catalog_path = SHARED_DIR / "catalog_proxy.jsonl"
    public = SHARED_DIR / "public_set.jsonl"
    if not (catalog_path.is_file() and public.is_file()):
        pytest.skip(f"shared data not found at {SHARED_DIR} (catalog_proxy.jsonl, public_set.jsonl)")
    rows = read_jsonl(public)
    catalog = load_catalog(catalog_path)
    records, _ = E.evaluate("evaluator.baselines:WeakBaselineAgent", str(catalog_path), rows, catalog,
                            workers=2, progress=False)
    s = E.build_summary(records)
    assert (s["hit_rate_at_10"], s["mrr"], s["mttc"], s["recommended_technical_score"]) == \
        (0.11, 0.055151, 9.945, 0.092645)
    assert s["efficiency"] == 0.1055
    assert {k: v["sample_count"] for k, v in s["scenario_metrics"].items()} == \
        {"buying": 80, "intent_override": 30, "browsing": 80, "boundary": 10}
