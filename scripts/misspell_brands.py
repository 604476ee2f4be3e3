"""Persona cards whose brand is misspelt: `python -m scripts.misspell_brands CARDS --out OUT`.

For measuring how the agent reads a brand a shopper misspells.  Every card
whose opening names its target's store (the catalog's `store`, matched as a
whole word, case-insensitive) is kept with that name misspelt in the opening
and in the answers, by one rule: the two letters after the first are swapped
("Rockport" -> "Rcokport"), or, for a name of four letters or fewer, its last
letter is doubled.  Cards that name no store are left out.  Deterministic;
the input cards are never changed.
"""
from __future__ import annotations

import argparse
import json
import re
import sys

from contest.jsonl import read_jsonl
from contest.paths import resolve_catalog


def misspelt(name: str) -> str:
    """The one misspelling of a store name (letters only are moved)."""
    if len(name) <= 4:
        return name + name[-1]
    return name[0] + name[2] + name[1] + name[3:]


def stores_of(catalog: str, pids: set[str]) -> dict[str, str]:
    """parent_asin -> store, for the given products."""
    out: dict[str, str] = {}
    with open(catalog, encoding="utf-8") as fh:
        for line in fh:
            if any(p in line for p in pids):
                row = json.loads(line)
                if row.get("parent_asin") in pids and isinstance(row.get("store"), str):
                    out[row["parent_asin"]] = row["store"].strip()
    return out


def with_misspelt_brand(card: dict, store: str) -> dict | None:
    """The card with its store name misspelt wherever it says it (None when the opening does not)."""
    if not store:
        return None
    said = re.compile(r"(?<!\w)" + re.escape(store) + r"(?!\w)", re.IGNORECASE)
    if not said.search(card["opening"]):
        return None
    wrong = misspelt(store)

    def swap(text: object) -> object:
        return said.sub(wrong, text) if isinstance(text, str) else text
    out = dict(card, opening=swap(card["opening"]))
    out["answers"] = {k: swap(v) for k, v in card.get("answers", {}).items()}
    if isinstance(card.get("other"), list):
        out["other"] = [swap(v) for v in card["other"]]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.misspell_brands", description=__doc__)
    ap.add_argument("cards")
    ap.add_argument("--out", required=True)
    ap.add_argument("--catalog", default=None)
    args = ap.parse_args(argv)
    cards = read_jsonl(args.cards)
    stores = stores_of(str(resolve_catalog(args.catalog)), {c["ground_truth"]["parent_asin"] for c in cards})
    kept = [got for c in cards
            if (got := with_misspelt_brand(c, stores.get(c["ground_truth"]["parent_asin"], ""))) is not None]
    with open(args.out, "w", encoding="utf-8") as fh:
        for card in kept:
            fh.write(json.dumps(card, ensure_ascii=False) + "\n")
    print(f"{len(kept)} of {len(cards)} cards name their store; written with it misspelt to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
