"""Split the development persona cards in two halves by a seeded rule: tune on one, confirm on the other.

    python -m scripts.persona_split                  # data/personas/cards.jsonl -> tune.jsonl, confirm.jsonl
    python -m scripts.persona_split --set longtail   # longtail.jsonl -> longtail_tune.jsonl, longtail_confirm.jsonl

The rule: sample ids sorted, shuffled with `random.Random(SEED)`, the first
half is `tune`.  Deterministic; the cards are never edited.
"""
from __future__ import annotations

import argparse
import json
import random
import sys

from contest.jsonl import read_jsonl
from contest.paths import PROJECT_ROOT

PERSONA_DIR = PROJECT_ROOT / "data" / "personas"
SEED = "persona-split-2026"
# Every card set split into halves, in the order results list them ("" is cards.jsonl, the public-target cards
# whose halves are tune.jsonl and confirm.jsonl).  Which tune halves the people model is fitted on is the fit's
# own choice (`scripts.fit_people.TUNE_SETS`).
HALVED_SETS = ("", "longtail", "terse", "scripts", "longtail2", "terse2", "scripts2", "longtail3", "terse3",
               "scripts3", "tersep", "longtail4", "terse4", "scripts4", "terse5", "scripts5", "longtail6", "terse6",
               "scripts6", "longtail7", "terse7", "scripts7", "longtail8", "terse8", "scripts8", "longtail9", "terse9",
               "scripts9", "longtail10", "terse10", "scripts10")


def half_name(card_set: str, half: str) -> str:
    """The file stem of one half ("tune" or "confirm") of a card set of `HALVED_SETS`."""
    return f"{card_set}_{half}" if card_set else half


def split(cards: list[dict]) -> tuple[list[dict], list[dict]]:
    """(tune, confirm), each in sample-id order."""
    ids = sorted(c["sample_id"] for c in cards)
    random.Random(SEED).shuffle(ids)
    tune = set(ids[: len(ids) // 2])
    ordered = sorted(cards, key=lambda c: c["sample_id"])
    return [c for c in ordered if c["sample_id"] in tune], [c for c in ordered if c["sample_id"] not in tune]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.persona_split", description=__doc__)
    ap.add_argument("--set", help="a card set NAME of data/personas/NAME.jsonl: halves NAME_tune, NAME_confirm")
    ap.add_argument("--cards", default=str(PERSONA_DIR / "cards.jsonl"))
    ap.add_argument("--out-dir", default=str(PERSONA_DIR))
    args = ap.parse_args(argv)
    cards = args.cards if args.set is None else str(PERSONA_DIR / f"{args.set}.jsonl")
    prefix = "" if args.set is None else f"{args.set}_"
    tune, confirm = split(read_jsonl(cards))
    for name, rows in (("tune", tune), ("confirm", confirm)):
        path = f"{args.out_dir}/{prefix}{name}.jsonl"
        with open(path, "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(f"wrote {path} ({len(rows)} cards)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
