"""A newcomer's first hour: missing or malformed data says what to do, in one clear message."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from tests.conftest import write_rows

import contest.paths as paths
from evaluator import local_evaluator as E
from starter.index.catalog import CatalogError, CatalogIndex
from starter.settings import SETTINGS


def test_missing_catalog_and_sessions_are_named_together_with_the_fix(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("CATALOG_PATH", raising=False)
    monkeypatch.setattr(paths, "PROJECT_ROOT", tmp_path)
    monkeypatch.setattr(paths, "SHARED_DIR", tmp_path / "shared")
    assert E.main(["--output", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err
    assert "no catalog found" in err and "no dataset found" in err
    assert "--catalog" in err and "CATALOG_PATH" in err and "data/" in err and "--dataset" in err


@pytest.mark.parametrize("content,expected", [
    (b'{"parent_asin": "A1", "title": "ok"}\n{"parent_asin": "A2", "title": "\xff"}\n', "c.jsonl:2: not valid UTF-8"),
    (b'{"parent_asin": "A1"}\n{"parent_asin": \n', "c.jsonl:2: invalid JSON"),
    (b'[1, 2]\n', "c.jsonl:1: expected a JSON object"),
])
def test_a_malformed_catalog_gives_one_line_with_file_and_line(tmp_path: Path, capsys, content: bytes,
                                                              expected: str) -> None:
    catalog = tmp_path / "c.jsonl"
    catalog.write_bytes(content)
    sessions = tmp_path / "s.jsonl"
    sessions.write_text(json.dumps({"sample_id": "x", "scenario_type": "buying",
                                    "ground_truth": {"parent_asin": "A1"}}) + "\n", encoding="utf-8")
    assert E.main(["--catalog", str(catalog), "--dataset", str(sessions), "--output", str(tmp_path / "r.json"),
                   "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and expected in err and "Traceback" not in err and len(err.splitlines()) == 1
    with pytest.raises(CatalogError, match=expected.split(":", 1)[1].strip()):
        CatalogIndex(catalog, SETTINGS.index)


def test_each_kind_of_odd_row_is_counted_in_the_warning(tmp_path: Path, caplog) -> None:
    rows = [{"parent_asin": "A1", "title": "tee", "categories": ["Women", "Tops"], "price": 3},
            {"parent_asin": "A1", "title": "dup"}, {"title": "no id"}, {"parent_asin": " "},
            {"parent_asin": "A2", "categories": []}]
    path = tmp_path / "c.jsonl"
    write_rows(path, rows)
    with caplog.at_level(logging.WARNING, logger="starter.index.catalog"):
        index = CatalogIndex(path, SETTINGS.index)
    assert len(index.products) == 2
    text = caplog.text
    assert "skipped 2 rows without a usable parent_asin" in text and "skipped 1 rows with a duplicate" in text
    assert "1 rows loaded without a title" in text and "1 rows loaded without categories" in text


def test_huge_fields_are_cut_when_read(tmp_path: Path) -> None:
    row = {"parent_asin": "A1", "title": "black " + "x" * 300_000, "features": ["f"] * 5000,
           "categories": ["Women", "Tops"], "price": 3}
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    index = CatalogIndex(path, SETTINGS.index)
    assert len(index.products[0].title) <= SETTINGS.index.max_field_chars


def test_capped_cuts_every_shape_by_the_one_recursive_rule() -> None:
    """`capped` inlines the common shapes; it must give what the plain rule gives: strings to
    `limit` characters, lists and dicts to `limit // 100` items, two levels down, anything else kept."""
    from starter.index.catalog_rows import capped

    def rule(v: object, limit: int, depth: int = 0) -> object:
        items = max(1, limit // 100)
        if isinstance(v, str):
            return v[:limit]
        if isinstance(v, list) and depth < 2:
            return [rule(x, limit, depth + 1) for x in v[:items]]
        if isinstance(v, dict) and depth < 2:
            return {str(k)[:limit]: rule(x, limit, depth + 1) for k, x in list(v.items())[:items]}
        return v

    deep = {"k" * 150: ["a" * 150, {"x": "y" * 150}], "n": None, "l": [["z" * 9] * 5] * 5}
    row = {"parent_asin": "A" * 9, "title": "t" * 9, "price": 3.5, "flag": True, "none": None,
           "features": ["f" * 9, 7, None, ["g" * 9] * 5, deep] * 3, "details": deep,
           "description": [], "nested": [[["w" * 9] * 5] * 5] * 5}
    for limit in (100, 300, 4000):
        assert capped(row, limit) == {k: rule(v, limit) for k, v in row.items()}
    assert capped(row, 300)["details"]["l"] == [["z" * 9] * 5] * 3        # two levels down: items cut
    assert capped(row, 300)["nested"][0][0] == ["w" * 9] * 5              # three levels: kept as it is
