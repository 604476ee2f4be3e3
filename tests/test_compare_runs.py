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
