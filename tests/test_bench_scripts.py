"""The benchmark scripts run end to end on small inputs and print the figures they promise."""
from __future__ import annotations

from pathlib import Path

import pytest


def test_fuzz_only_reports_wall_cpu_and_the_slowest(proxy_catalog: Path, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from scripts.bench_robustness import main

    out = tmp_path / "fuzz.txt"
    assert main(["--fuzz-only", "7", "--seed", "3", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "7 fuzz messages, seed 3" in text
    assert "(7 turns)" in text and text.count("\n  ") >= 7   # wall, cpu and the seven slowest
    assert "over 200 ms of CPU:" in text and text == capsys.readouterr().out


def test_fuzz_side_by_side_runs_both_checkouts(proxy_catalog: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from contest.paths import PROJECT_ROOT
    from scripts.bench_robustness import main

    out = tmp_path / "both.txt"
    argv = ["--fuzz-only", "3", "--seed", "5", "--base", str(PROJECT_ROOT), "--out", str(out)]
    assert main(argv) == 0
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# side by side, at the same time: python -m scripts.bench_robustness --fuzz-only 3 --seed 5")
    assert text.count("3 fuzz messages, seed 5") == 2 and "## base: " in text and "## new: " in text
    assert text.count("(3 turns)") == 4 and text == capsys.readouterr().out


def test_bench_scale_table_and_one_small_catalog(small_catalog: Path, tmp_path: Path) -> None:
    from scripts.bench_scale import main

    assert main(["--catalog", f"tiny={small_catalog}", "--warm", "1", "--no-sessions", "--out", str(tmp_path)]) == 0
    import json

    row = json.loads((tmp_path / "scale.json").read_text(encoding="utf-8"))["rows"][0]
    assert row["products"] == 8 and row["catalog"] == "tiny"
    assert row["cold_construct_s"] > 0 and row["warm_construct_s"] > 0 and row["cache_mb"] > 0
    assert "| tiny | 8 |" in (tmp_path / "scale.md").read_text(encoding="utf-8")
