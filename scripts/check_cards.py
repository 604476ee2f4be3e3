"""Check persona cards against PERSONAS.md's format and writing rules.

    python -m scripts.check_cards data/personas/wording2.jsonl [--labels LABELS] [--catalog PATH]

Per card: the JSON shape (sample id, ground truth, an opening, the nine
attribute answers as strings or null, one to three `other` details), an
opening of 5-30 words, no prices with cents, URLs or product ids, a target
that is in the catalog, and the copy rule: no run of four consecutive words
of the card (opening, answers, details) that is also a run of the product's
title, features or description.  Prints every violation, one a line, and a
summary (with `--labels`, the writers' detail levels, typos and brands); exits
1 when there is any violation.  Cards are checked, never edited.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from contest.jsonl import iter_jsonl, read_jsonl
from contest.paths import resolve_catalog

ANSWER_KEYS = ("category", "material", "color", "size", "style", "brand", "budget", "feature", "use_case")
COPY_RUN = 4                         # words: a run this long shared with the product text is a copy
_WORD = re.compile(r"[a-z0-9']+")
_CENTS = re.compile(r"\d+\.\d\d\b")
_URL = re.compile(r"https?://|www\.", re.I)
_PRODUCT_ID = re.compile(r"\bB0[A-Z0-9]{8}\b")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def runs(text: str, n: int = COPY_RUN) -> set[tuple[str, ...]]:
    """Every run of `n` consecutive words of `text`."""
    w = words(text)
    return {tuple(w[k:k + n]) for k in range(len(w) - n + 1)}


def product_runs(row: dict) -> set[tuple[str, ...]]:
    """The word runs of a product's title, features and description (each piece on its own)."""
    out: set[tuple[str, ...]] = set()
    for name in ("title", "features", "description"):
        value = row.get(name)
        for piece in value if isinstance(value, list) else [value]:
            if isinstance(piece, str):
                out |= runs(piece)
    return out


def card_texts(card: dict) -> list[str]:
    texts = [card.get("opening")]
    answers = card.get("answers")
    if isinstance(answers, dict):
        texts += list(answers.values())
    other = card.get("other")
    if isinstance(other, list):
        texts += other
    return [t for t in texts if isinstance(t, str)]


def shape_problems(card: object) -> list[str]:
    """What is wrong with a card's JSON shape and its texts (catalog aside)."""
    if not isinstance(card, dict):
        return ["not a JSON object"]
    out = []
    if not isinstance(card.get("sample_id"), str) or not card["sample_id"]:
        out.append("no sample_id")
    gt = card.get("ground_truth")
    if not isinstance(gt, dict) or not isinstance(gt.get("parent_asin"), str):
        out.append("no ground_truth.parent_asin")
    opening = card.get("opening")
    if not isinstance(opening, str):
        out.append("no opening")
    elif not 5 <= len(opening.split()) <= 30:
        out.append(f"opening of {len(opening.split())} words (5-30)")
    answers = card.get("answers")
    if not isinstance(answers, dict) or set(answers) != set(ANSWER_KEYS):
        out.append(f"answers must have exactly the keys {', '.join(ANSWER_KEYS)}")
    else:
        for k, v in answers.items():
            if v is not None and (not isinstance(v, str) or not v.strip()):
                out.append(f"answers.{k} is neither a non-empty string nor null")
    other = card.get("other")
    if not isinstance(other, list) or not 1 <= len(other) <= 3 or \
            not all(isinstance(x, str) and x.strip() for x in other):
        out.append("other must hold 1-3 non-empty strings")
    for text in card_texts(card):
        if _CENTS.search(text):
            out.append(f"a price with cents: {text!r}")
        if _URL.search(text) or _PRODUCT_ID.search(text):
            out.append(f"a URL or product id: {text!r}")
    return out


def copy_problems(card: dict, row: dict) -> list[str]:
    """The card's texts that share a run of COPY_RUN words with the product's title, features or description."""
    theirs = product_runs(row)
    out = []
    for text in card_texts(card):
        shared = sorted(runs(text) & theirs)
        if shared:
            out.append(f"copies {' '.join(shared[0])!r} (in {text!r})")
    return out


def check(cards: list[dict], catalog_rows: dict[str, dict]) -> list[tuple[str, str]]:
    """(sample id, problem) for every violation."""
    problems: list[tuple[str, str]] = []
    seen: Counter[str] = Counter(str(c.get("sample_id")) if isinstance(c, dict) else "?" for c in cards)
    problems += [(sid, f"sample_id used {n} times") for sid, n in seen.items() if n > 1]
    for card in cards:
        sid = str(card.get("sample_id")) if isinstance(card, dict) else "?"
        problems += [(sid, p) for p in shape_problems(card)]
        if not isinstance(card, dict) or not isinstance(card.get("ground_truth"), dict):
            continue
        row = catalog_rows.get(card["ground_truth"].get("parent_asin"))
        if row is None:
            problems.append((sid, "target not in the catalog"))
        else:
            problems += [(sid, p) for p in copy_problems(card, row)]
    return problems


def catalog_rows_for(cards: list[dict], catalog: Path) -> dict[str, dict]:
    """The catalog rows of the cards' targets (the catalog streamed once)."""
    want = {c["ground_truth"].get("parent_asin") for c in cards
            if isinstance(c, dict) and isinstance(c.get("ground_truth"), dict)}
    out: dict[str, dict] = {}
    for row in iter_jsonl(catalog):
        pid = row.get("parent_asin")
        if pid in want and pid not in out:
            out[pid] = row
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.check_cards", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cards")
    ap.add_argument("--labels", help="the writers' labels (detail_level, typo, brand_in_opening per card)")
    ap.add_argument("--catalog", help="catalog JSONL (default: as the evaluator resolves it)")
    args = ap.parse_args(argv)
    cards = read_jsonl(args.cards)
    problems = check(cards, catalog_rows_for(cards, resolve_catalog(args.catalog)))
    for sid, problem in problems:
        print(f"{sid}: {problem}")
    summary = f"{len(cards)} cards, {len(problems)} violations"
    if args.labels:
        labels = read_jsonl(args.labels)
        levels = Counter(str(x.get("detail_level")) for x in labels)
        summary += (f"; openings {dict(sorted(levels.items()))}, {sum(bool(x.get('typo')) for x in labels)} with a typo, "
                    f"{sum(bool(x.get('brand_in_opening')) for x in labels)} naming the brand")
    print(summary, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
