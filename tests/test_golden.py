"""Behaviour is what the committed golden transcripts say: 170 sessions (public, perturbed, persona, long
tail, terse) played turn by turn give the committed lists, questions and messages.  A change meant to alter
behaviour rewrites them (`python -m scripts.golden --write`) and says why in its commit."""
from __future__ import annotations

from pathlib import Path

from contest.jsonl import read_jsonl
from scripts import golden


def test_the_golden_sessions_are_played_as_committed(proxy_catalog: Path) -> None:
    from evaluator.data import load_catalog_view
    from starter.agent import Agent

    got = golden.play(Agent(str(proxy_catalog)), load_catalog_view(proxy_catalog, golden.targets()))
    assert golden.differences(got, read_jsonl(golden.GOLDEN)) == []


def test_a_changed_turn_is_reported_with_its_session_and_turn() -> None:
    want = read_jsonl(golden.GOLDEN)[:3]
    got = [dict(s, transcript=[dict(t) for t in s["transcript"]]) for s in want]
    got[1]["transcript"][0]["recommendations"] = list(reversed(got[1]["transcript"][0]["recommendations"])) + ["X"]
    assert golden.differences(got, want) == [f"{want[1]['set']} {want[1]['sample_id']}: differs from turn 1"]
