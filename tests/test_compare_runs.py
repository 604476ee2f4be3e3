"""scripts.compare_runs: equal sessions pass, any difference (timings aside) fails."""
from __future__ import annotations

import json
from pathlib import Path

from scripts.compare_runs import main


def _write(folder: Path, sessions: list[dict]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.json").write_text(json.dumps({"sessions": sessions}), encoding="utf-8")


def test_timings_are_ignored_and_differences_fail(tmp_path: Path) -> None:
    s = {"sample_id": "a", "hit": True, "turn": 1, "rank": 1,
         "transcript": [{"turn": 1, "recommendations": ["X"], "latency_ms": 3.0}]}
    _write(tmp_path / "old", [s])
    _write(tmp_path / "new", [dict(s, transcript=[dict(s["transcript"][0], latency_ms=9.0)])])
    assert main([str(tmp_path / "old"), str(tmp_path / "new")]) == 0
    _write(tmp_path / "new", [dict(s, rank=2)])
    assert main([str(tmp_path / "old"), str(tmp_path / "new")]) == 1
    (tmp_path / "new" / "run.json").unlink()
    assert main([str(tmp_path / "old"), str(tmp_path / "new")]) == 1


def test_a_missing_or_empty_folder_is_an_error_not_a_pass(tmp_path: Path) -> None:
    import pytest

    _write(tmp_path / "new", [])
    (tmp_path / "empty").mkdir()
    for old in ("absent", "empty"):
        with pytest.raises(SystemExit) as stop:
            main([str(tmp_path / old), str(tmp_path / "new")])
        assert stop.value.code == 2


def test_bench_turn_names_how_to_make_the_base_checkout(tmp_path: Path, capsys) -> None:
    import pytest

    from scripts.bench_turn import main as bench_turn

    with pytest.raises(SystemExit) as stop:
        bench_turn(["--base", str(tmp_path / "OLD")])
    assert stop.value.code == 2 and "git worktree add" in capsys.readouterr().err


def test_a_differing_run_reports_its_score_change_with_a_paired_interval(tmp_path: Path, capsys) -> None:
    """Scores are the means of the sessions' rewards (the evaluator's TechnicalScore); the interval is
    seeded, pairs sessions by id, and holds the change."""
    import pytest

    from contest.rules import hit_reward
    from scripts.compare_runs import paired_change

    old = [{"sample_id": f"s{k}", "hit": True, "turn": 1 + k % 3, "rank": 1} for k in range(20)]
    new = [dict(s) for s in old]
    new[3] = dict(new[3], hit=False, turn=None, rank=None)
    new[7] = dict(new[7], rank=2)
    before, after, low, high = paired_change(old, list(reversed(new)))
    assert before == pytest.approx(sum(hit_reward(1, 1 + k % 3) for k in range(20)) / 20, abs=1e-12)
    assert after < before and low < 0 and low <= after - before <= high <= 0
    assert paired_change(old, new) == paired_change(old, new)
    assert paired_change(old, old)[2:] == (0.0, 0.0)
    _write(tmp_path / "old", old)
    _write(tmp_path / "new", new)
    assert main([str(tmp_path / "old"), str(tmp_path / "new")]) == 1
    assert "95% paired bootstrap" in capsys.readouterr().out
