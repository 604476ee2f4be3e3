"""The persona-card checker (scripts/check_cards.py) passes a card written by the rules and names each
broken rule: shape, opening length, cents, ids and URLs, a target not in the catalog, copied runs."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from scripts import check_cards as CC

GOOD = {"sample_id": "w_0001", "ground_truth": {"parent_asin": "B1"},
        "opening": "I'm after some brown chelsea boots in real leather for my husband",
        "answers": {"material": "Leather on top.", "color": "Brown.", "size": None,
                    "style": None, "brand": None, "budget": "Under 100 bucks.", "feature": "They just pull on.",
                    "use_case": None, "category": "Chelsea style ankle boots."},
        "other": ["The sole is rubber."]}


def _problems(card: dict, small_catalog: Path) -> list[str]:
    return [p for _, p in CC.check([card], CC.catalog_rows_for([card], small_catalog))]


def test_a_card_written_by_the_rules_passes(small_catalog: Path) -> None:
    assert _problems(GOOD, small_catalog) == []


@pytest.mark.parametrize("edit, expected", [
    (lambda c: c.update(opening="boots please"), "opening of 2 words"),
    (lambda c: c["answers"].pop("brand"), "answers must have exactly the keys"),
    (lambda c: c["answers"].update(size=""), "answers.size is neither"),
    (lambda c: c.update(other=[]), "other must hold 1-3"),
    (lambda c: c["answers"].update(budget="About 89.00 dollars."), "a price with cents"),
    (lambda c: c["other"].append("Same as B0ABCDEFGH on the site."), "a URL or product id"),
    (lambda c: c["ground_truth"].update(parent_asin="NOPE"), "target not in the catalog"),
    (lambda c: c.update(opening="Looking for a leather chelsea boot brown for my husband"), "copies 'leather chelsea boot brown'"),
])
def test_each_broken_rule_is_named(small_catalog: Path, edit, expected: str) -> None:
    card = copy.deepcopy(GOOD)
    edit(card)
    assert any(expected in p for p in _problems(card, small_catalog)), _problems(card, small_catalog)


def test_duplicate_ids_and_the_exit_code(small_catalog: Path, tmp_path: Path, capsys) -> None:
    path = tmp_path / "cards.jsonl"
    path.write_text(json.dumps(GOOD) + "\n", encoding="utf-8")
    assert CC.main([str(path), "--catalog", str(small_catalog)]) == 0
    path.write_text((json.dumps(GOOD) + "\n") * 2, encoding="utf-8")
    assert CC.main([str(path), "--catalog", str(small_catalog)]) == 1
    assert "sample_id used 2 times" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["cards", "wording2", "wording3"])
def test_the_committed_cards_keep_the_rules(name: str, proxy_catalog: Path) -> None:
    from contest.jsonl import read_jsonl
    from contest.paths import PROJECT_ROOT
    cards = read_jsonl(PROJECT_ROOT / "data" / "personas" / f"{name}.jsonl")
    assert len(cards) == 200
    assert CC.check(cards, CC.catalog_rows_for(cards, proxy_catalog)) == []


SCRIPT = {"sample_id": "s_0001", "ground_truth": {"parent_asin": "B1"},
          "script": ["hi! looking for boots for my wife", "sorry, they're for my husband",
                     "brown leather ones", "not the tall kind, ankle height"],
          "moves": ["describe", "correct", "describe", "negate"]}


def test_a_script_written_by_the_rules_passes(small_catalog: Path) -> None:
    assert _problems(SCRIPT, small_catalog) == []


@pytest.mark.parametrize("edit, expected", [
    (lambda c: c.update(script=c["script"][:3], moves=c["moves"][:3]), "script of 3 lines"),
    (lambda c: c.update(moves=["describe", "correct", "describe", "describe"]), "fewer than two moves"),
    (lambda c: c.update(moves=["describe", "correct", "describe"]), "moves must label every"),
    (lambda c: c.update(moves=["describe", "wave", "describe", "negate"]), "unknown moves ['wave']"),
    (lambda c: c["script"].append("the one for $49.99"), "a price with cents"),
])
def test_each_broken_script_rule_is_named(small_catalog: Path, edit, expected: str) -> None:
    card = copy.deepcopy(SCRIPT)
    edit(card)
    assert any(expected in p for p in _problems(card, small_catalog)), _problems(card, small_catalog)


def test_terse_cards_open_with_two_to_ten_words(small_catalog: Path) -> None:
    card = copy.deepcopy(GOOD)
    card["opening"] = "brown boots 4 hubby"
    rows = CC.catalog_rows_for([card], small_catalog)
    assert any("opening of 4 words" in p for _, p in CC.check([card], rows))
    assert CC.check([card], rows, CC.TERSE_OPENING_WORDS) == []
