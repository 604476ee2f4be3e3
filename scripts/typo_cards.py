"""Persona cards as typed on a phone: a seeded copy of card sets with typing noise, for a robustness check.

    python -m scripts.typo_cards --out /tmp/typo [--rate 0.12] SET [SET ...]
    python -m evaluator.local_evaluator --dataset /tmp/typo/SET.jsonl --workers 2 --output OUT.json

Every line a shopper says (the opening, the answers, the other details, a script's lines) is lower-cased, loses
its apostrophes and its final full stop, a few words become chat shortenings ("for" -> "4", "with" -> "w",
"please" -> "pls"), and each word of four letters or more gets a keyboard slip with probability `--rate`: a key
next to the one meant, a letter missed, two swapped or one doubled, never the first letter.  Everything else of a
card (its target, its moves) is kept.  The noise is seeded by the card's sample_id, so the copy is the same on
every machine; the copies are never development cards of their own (nothing is tuned on them).
"""
from __future__ import annotations

import argparse
import json
import random
import re
import zlib
from pathlib import Path

from contest.jsonl import read_jsonl
from contest.paths import PROJECT_ROOT

PERSONAS = PROJECT_ROOT / "data" / "personas"
# The letter keys by row, as a grid: a key's neighbours are the keys around it (hand-set geometry).
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_SHORT = {"for": "4", "you": "u", "with": "w", "please": "pls", "thanks": "thx", "something": "smth",
          "really": "rly", "about": "bout", "probably": "prob", "because": "bc", "and": "n"}
SHORTEN_RATE = 0.3          # hand-set: the share of the shortenable words written short
RATE = 0.12                 # hand-set: a slip in about one word of eight of four letters or more


def _neighbours() -> dict[str, list[str]]:
    near: dict[str, list[str]] = {}
    for r, row in enumerate(_ROWS):
        for c, key in enumerate(row):
            near[key] = sorted(_ROWS[rr][cc] for rr in (r - 1, r, r + 1) for cc in (c - 1, c, c + 1)
                               if 0 <= rr < len(_ROWS) and 0 <= cc < len(_ROWS[rr]) and (rr, cc) != (r, c))
    return near


NEIGHBOURS = _neighbours()


def slip(word: str, rng: random.Random) -> str:
    """One keyboard slip inside `word` (at least four letters; the first letter stays)."""
    kind, k = rng.randrange(4), rng.randrange(1, len(word) - 1)
    if kind == 0 and word[k] in NEIGHBOURS:
        return word[:k] + rng.choice(NEIGHBOURS[word[k]]) + word[k + 1:]
    if kind == 1:
        return word[:k] + word[k + 1:]
    if kind == 2:
        return word[:k] + word[k + 1] + word[k] + word[k + 2:]
    return word[:k] + word[k] + word[k:]


def typed(text: str, rng: random.Random, rate: float) -> str:
    """`text` as typed on a phone (see the module's doc)."""
    out = []
    for part in re.split(r"(\W+)", text.lower().replace("'", "").replace("\u2019", "")):
        if part.isalpha():
            if part in _SHORT and rng.random() < SHORTEN_RATE:
                part = _SHORT[part]
            elif len(part) >= 4 and rng.random() < rate:
                part = slip(part, rng)
        out.append(part)
    return "".join(out).rstrip(".!")


def typed_card(card: dict, rate: float) -> dict:
    """A copy of `card` whose every shopper line is typed with noise (seeded by its sample_id)."""
    rng = random.Random(zlib.crc32(str(card.get("sample_id", "")).encode()))
    out = json.loads(json.dumps(card))
    if isinstance(out.get("script"), list):
        out["script"] = [typed(m, rng, rate) if isinstance(m, str) else m for m in out["script"]]
    if isinstance(out.get("opening"), str):
        out["opening"] = typed(out["opening"], rng, rate)
    if isinstance(out.get("answers"), dict):
        out["answers"] = {k: typed(v, rng, rate) if isinstance(v, str) else v for k, v in out["answers"].items()}
    if isinstance(out.get("other"), list):
        out["other"] = [typed(m, rng, rate) if isinstance(m, str) else m for m in out["other"]]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.typo_cards", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="+", help="card sets under data/personas/")
    ap.add_argument("--out", type=Path, required=True, help="folder for the typed copies (SET.jsonl each)")
    ap.add_argument("--rate", type=float, default=RATE, help="chance of a slip in a word of four letters or more")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.sets:
        rows = [typed_card(card, args.rate) for card in read_jsonl(PERSONAS / f"{name}.jsonl")]
        (args.out / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
