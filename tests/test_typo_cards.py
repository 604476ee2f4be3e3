"""The phone-typed copy of persona cards (`scripts.typo_cards`): seeded, the target and moves kept."""
from __future__ import annotations

import random

from scripts.typo_cards import slip, typed, typed_card

CARD = {"sample_id": "x_0001", "ground_truth": {"parent_asin": "B000000001"},
        "script": ["I'd like women's walking shoes, please.", "Under 40 dollars."], "moves": ["describe", "cheaper"]}


def test_the_copy_is_seeded_and_keeps_what_is_not_said() -> None:
    first, again = typed_card(CARD, 0.5), typed_card(CARD, 0.5)
    assert first == again and first["ground_truth"] == CARD["ground_truth"] and first["moves"] == CARD["moves"]
    assert first["script"] != CARD["script"] and CARD["script"][0].startswith("I'd")     # the card itself unchanged


def test_without_slips_only_case_apostrophes_and_shortenings_change() -> None:
    line = typed("I'd like women's walking shoes.", random.Random(0), 0.0)
    assert line == "id like womens walking shoes"


def test_a_slip_is_one_edit_that_keeps_the_first_letter() -> None:
    rng = random.Random(1)
    for _ in range(200):
        out = slip("sneakers", rng)
        assert out[0] == "s" and out != "sneakers" and abs(len(out) - len("sneakers")) <= 1


def test_every_confirm_half_has_a_typed_run() -> None:
    from scripts.persona_split import HALVED_SETS, half_name
    from scripts.run_results import PANELS, dataset_path, default_runs
    runs = {r.name: r for r in default_runs()}
    for card_set in HALVED_SETS:
        run = runs[f"ours.persona-typed-{half_name(card_set, 'confirm')}"]
        assert dataset_path(run.dataset).startswith(str(PANELS / "typed"))
