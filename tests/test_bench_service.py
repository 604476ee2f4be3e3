"""The load-and-fault benchmark, small: a worker killed and the database restarted mid-run lose no
conversation and change none (each compared with the same conversation played alone)."""
from __future__ import annotations

import json
from pathlib import Path

from demo_support import write_catalog


def test_a_killed_worker_and_a_restarted_database_lose_and_change_nothing(tmp_path: Path, pg_cluster) -> None:
    from scripts.bench_service import main
    catalog, dataset, _ = write_catalog(tmp_path)
    out = tmp_path / "run.txt"
    assert main(["--out", str(out), "--workers", "2", "--conversations", "16", "--turns", "3", "--clients", "4",
                 "--template-only", "--catalog", str(catalog), "--dataset", str(dataset)]) == 0
    figures, = json.loads(out.with_suffix(".json").read_text())
    assert figures["turns_served"] == figures["turns_expected"] == 48
    assert figures["conversations_lost"] == 0 and figures["conversations_differing"] == 0
    assert [e.split(": ")[1].split()[0] for e in figures["faults"]] == ["worker", "database"]
    assert all(kind.startswith(("503", "connection")) for kind in figures["errors_retried"])
    assert figures["server_exit_code"] == 0
    assert main(["--out", str(out)]) == 2                   # never over an existing report
