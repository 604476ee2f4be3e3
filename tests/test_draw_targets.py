"""The seeded draw of development targets (PERSONAS.md "Which targets") and the card sets split in halves."""
from __future__ import annotations

import random

from scripts.draw_targets import PUBLIC_ALL, PUBLIC_MORE, PUBLIC_REST, PUBLIC_SETS, SEED, SYNTHETIC_SETS, draw

SYNTHETIC = [f"S{k:05d}" for k in range(3000)]
PUBLIC = [f"P{k:03d}" for k in range(200)]


def test_the_draw_depends_on_the_ids_not_their_order() -> None:
    shuffled_s, shuffled_p = SYNTHETIC[:], PUBLIC[:]
    random.Random(3).shuffle(shuffled_s)
    random.Random(4).shuffle(shuffled_p)
    assert draw(SYNTHETIC, PUBLIC) == draw(shuffled_s, shuffled_p)


def test_synthetic_sets_are_disjoint_and_public_sets_cover_the_public_targets() -> None:
    sets = draw(SYNTHETIC, PUBLIC)
    synthetic = [i for name, n in SYNTHETIC_SETS for i in sets[name]]
    assert [len(sets[name]) for name, _ in SYNTHETIC_SETS] == [n for _, n in SYNTHETIC_SETS]
    assert len(set(synthetic)) == len(synthetic) and set(synthetic) <= set(SYNTHETIC)
    drawn = [i for name, _ in PUBLIC_SETS for i in sets[name]] + sets[PUBLIC_REST]
    assert sorted(drawn) == sorted(PUBLIC)
    for name in PUBLIC_ALL:          # every public target once, in an order of its own
        assert sorted(sets[name]) == sorted(PUBLIC) and sets[name] != sorted(PUBLIC)
    for name, n in PUBLIC_MORE:      # each drawn alone: n distinct public targets
        assert len(set(sets[name])) == n and set(sets[name]) <= set(PUBLIC)


def test_a_later_wave_leaves_the_earlier_draws_as_they_were() -> None:
    """The synthetic sets are consecutive slices of one shuffled order: a set added at the end of
    `SYNTHETIC_SETS` cannot move the ones before it."""
    sets = draw(SYNTHETIC, PUBLIC)
    order = [i for name, _ in SYNTHETIC_SETS for i in sets[name]]
    pool = sorted(SYNTHETIC)
    random.Random(SEED).shuffle(pool)
    assert order == pool[:len(order)]


def test_every_halved_card_set_is_split_by_the_rule_and_run_by_the_results() -> None:
    """Each set of `HALVED_SETS` has its two halves on disk, as `persona_split` makes them from the whole set,
    and the results and the reliability report read them (a new set named once is run everywhere)."""
    from contest.jsonl import read_jsonl
    from scripts.people_reliability import CONFIRM_SETS
    from scripts.persona_split import HALVED_SETS, PERSONA_DIR, half_name, split
    from scripts.run_results import default_runs
    runs = {r.name for r in default_runs()}
    for card_set in HALVED_SETS:
        whole = read_jsonl(PERSONA_DIR / f"{card_set or 'cards'}.jsonl")
        tune, confirm = split(whole)
        assert read_jsonl(PERSONA_DIR / f"{half_name(card_set, 'tune')}.jsonl") == tune
        assert read_jsonl(PERSONA_DIR / f"{half_name(card_set, 'confirm')}.jsonl") == confirm
        assert {f"ours.persona-{half_name(card_set, h)}" for h in ("tune", "confirm")} <= runs
        assert half_name(card_set, "confirm") in CONFIRM_SETS
