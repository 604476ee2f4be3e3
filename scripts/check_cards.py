"""Check persona cards against PERSONAS.md's format and writing rules.

    python -m scripts.check_cards data/personas/wording2.jsonl [--labels LABELS] [--catalog PATH]

Per card: the JSON shape (sample id, ground truth, an opening, the nine
attribute answers as strings or null, one to three `other` details), an
opening of 5-30 words, no prices with cents, URLs or product ids, a target
that is in the catalog, and the copy rule: no run of four consecutive words
of the card (opening, answers, details) that is also a run of the product's
title, features or description.  Prints every violation, one a line, and a
summary (with `--labels`, the writers' detail levels, typos and brands); exits
1 when there is any violation.  A scripted conversation (a non-empty `script`)
is checked for 4-7 lines, a known move label per line and at least two moves
besides `describe`, with the same text and copy rules.  Cards are checked, never edited.
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
MOVES = ("describe", "correct", "change", "negate", "cheaper", "pricier", "reject", "smalltalk", "question")
OPENING_WORDS = (5, 30)              # PERSONAS.md; terse phone-style cards open with 2-10 words
TERSE_OPENING_WORDS = (2, 10)
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
    if is_script(card):
        return [t for t in card["script"] if isinstance(t, str)]
    texts = [card.get("opening")]
    answers = card.get("answers")
    if isinstance(answers, dict):
        texts += list(answers.values())
    other = card.get("other")
    if isinstance(other, list):
        texts += other
    return [t for t in texts if isinstance(t, str)]


def is_script(card: object) -> bool:
    """A scripted conversation (PERSONAS.md): a card with a non-empty `script` list."""
    return isinstance(card, dict) and isinstance(card.get("script"), list) and bool(card["script"])


def script_problems(card: dict) -> list[str]:
    """A script's shape: 4-7 lines of chat, a known move label per line, two moves besides `describe`."""
    out = []
    lines, moves = card["script"], card.get("moves")
    if not 4 <= len(lines) <= 7:
        out.append(f"script of {len(lines)} lines (4-7)")
    if not all(isinstance(x, str) and x.strip() for x in lines):
        out.append("script lines must be non-empty strings")
    if not isinstance(moves, list) or len(moves) != len(lines):
        out.append("moves must label every script line")
    else:
        unknown = sorted({str(m) for m in moves} - set(MOVES))
        if unknown:
            out.append(f"unknown moves {unknown}")
        if sum(m != "describe" for m in moves) < 2:
            out.append("fewer than two moves other than describe")
    return out


def shape_problems(card: object, opening_words: tuple[int, int] = OPENING_WORDS) -> list[str]:
    """What is wrong with a card's JSON shape and its texts (catalog aside)."""
    if not isinstance(card, dict):
        return ["not a JSON object"]
    out = []
    if not isinstance(card.get("sample_id"), str) or not card["sample_id"]:
        out.append("no sample_id")
    gt = card.get("ground_truth")
    if not isinstance(gt, dict) or not isinstance(gt.get("parent_asin"), str):
        out.append("no ground_truth.parent_asin")
    if is_script(card):
        return out + script_problems(card) + text_problems(card)
    opening = card.get("opening")
    if not isinstance(opening, str):
        out.append("no opening")
    elif not opening_words[0] <= len(opening.split()) <= opening_words[1]:
        out.append(f"opening of {len(opening.split())} words ({opening_words[0]}-{opening_words[1]})")
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
    return out + text_problems(card)


def text_problems(card: dict) -> list[str]:
    """Prices with cents, URLs and product ids anywhere in the card's texts."""
    out = []
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


def check(cards: list[dict], catalog_rows: dict[str, dict],
          opening_words: tuple[int, int] = OPENING_WORDS) -> list[tuple[str, str]]:
    """(sample id, problem) for every violation."""
    problems: list[tuple[str, str]] = []
    seen: Counter[str] = Counter(str(c.get("sample_id")) if isinstance(c, dict) else "?" for c in cards)
    problems += [(sid, f"sample_id used {n} times") for sid, n in seen.items() if n > 1]
    for card in cards:
        sid = str(card.get("sample_id")) if isinstance(card, dict) else "?"
        problems += [(sid, p) for p in shape_problems(card, opening_words)]
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
    ap.add_argument("--terse", action="store_true", help="terse phone-style cards: openings of 2-10 words")
    args = ap.parse_args(argv)
    cards = read_jsonl(args.cards)
    problems = check(cards, catalog_rows_for(cards, resolve_catalog(args.catalog)),
                     TERSE_OPENING_WORDS if args.terse else OPENING_WORDS)
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
