"""Derive a larger catalog from the proxy: `python -m scripts.scale_catalog --rows 1000000 --out data/catalog_1m.jsonl`.

For benchmarking an agent's construction time, memory and latency on a catalog
many times larger than the 50,000-row one.  The output is deterministic: the
same arguments give a byte-identical file under any PYTHONHASHSEED and any
`--workers`.

What it writes:
- every source row, verbatim (the same line text, in the same relative order),
  spread through the file by a seeded random merge, so the public targets are
  still there under their own ids;
- `rows - len(source)` new rows, each a variant of one source row (its "base")
  kept on the base's category path, or occasionally on an audience sibling of
  it (Women / Men / Girls / Boys) that already exists in the catalog, so new
  rows fall on existing shelves and those shelves grow.  A variant: another or
  the same brand; title words recombined with a donor row of the same path
  (or shelf) and a new variant suffix (colour, pack, size); the row's first
  colour word and first material word swapped both ways in every text field
  (title, features, description, details), and text taken from a donor has
  the donor's first colour / material mapped onto the row's, so title,
  bullets and details mostly agree; dimension / weight numbers scaled; new
  model number and listing date; marketing bullets recombined with the
  donors' bullets, spliced sentence-wise and reworded (short spec bullets
  such as "Imported" or "100% Cotton" repeat, as in real listings); price
  within +-30% (null stays null, a string stays as it is); heavy-tailed
  rating_number drawn from the shelf's own counts.
- New ids look real ("B0" + 8 upper-case alphanumerics), are unique by
  construction (a seeded permutation of the row number) and never equal a
  source id.

Protected rows: the targets of `--protect` (default: the public set, looked
up like the evaluator does; `--protect none` to switch off) are never used as a
base or a donor, nor are rows that share a distinctive title / feature /
description string with a target (a string found in at most 5 source rows:
the proxy's near-clone siblings).  Their text is therefore not multiplied, and
the targets stay as findable as the larger shelves allow.

Memory: the source is held as one bytes buffer (about the input size) plus
small per-row arrays; rows are parsed on demand and the output is streamed
(through `<out>.tmp`, renamed at the end).  The summary's distinct-feature
count keeps one 8-byte hash per feature string (about 45 MB at 1M rows).
`--workers 2` forks two generating processes that share the source buffer.
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import json
import math
import os
import random
import re
import statistics
import sys
import time
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from datetime import date
from pathlib import Path

from contest.card import coarse_category, searchable_text
from contest.paths import resolve_catalog, resolve_dataset

FIELDS = ("parent_asin", "title", "features", "description", "price", "categories", "details",
          "average_rating", "rating_number", "store")
DEFAULT_SEED = 20260
CHUNK = 2000                 # new rows per work unit (and per progress update)
PROTECT_MAX_ROWS = 5         # a target string found in at most this many source rows is "distinctive"

# The benchmark's vocabularies (PROTOCOL.md, intent card): the first material and colour words of a row.
MATERIALS = ("cotton", "polyester", "nylon", "leather", "wool", "spandex", "silk", "rayon", "fabric")
COLOURS = ("black", "white", "blue", "red", "pink", "green", "brown", "gray", "grey", "purple", "yellow", "orange")


def _word_pattern(words: Iterable[str], flags: int = re.IGNORECASE) -> re.Pattern:
    r"""`\b(w1|w2|...)\b` with the alternatives folded into a trie (several times faster than a plain list)."""
    trie: dict = {}
    for w in words:
        t = trie
        for ch in (w.lower() if flags & re.IGNORECASE else w):
            t = t.setdefault(ch, {})
        t[""] = {}

    def build(t: dict) -> str:
        alts = [re.escape(ch) + build(sub) for ch, sub in sorted(t.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return "(?:" + body + ")?" if "" in t else body

    return re.compile(r"\b(" + build(trie) + r")\b", flags)


MATERIAL_RE = _word_pattern(MATERIALS)
COLOUR_RE = _word_pattern(COLOURS)
# Swapping matches the lower / Capitalised / UPPER forms case-sensitively (several times faster than re.I;
# every material / colour word of the proxy is in one of these forms).
SWAP_RE = _word_pattern([f for w in MATERIALS + COLOURS for f in (w, w.capitalize(), w.upper())], flags=0)
_DIGIT_RE = re.compile(r"\d")

AUDIENCES = ("Women", "Men", "Girls", "Boys")
# Word forms by slot (possessive plural, plural without apostrophe, plural, possessive singular,
# singular, polite plural); a form found in a text becomes the same slot of the new audience.
_AUDIENCE_FORMS = {
    "Women": ("Women's", "Womens", "Women", "Woman's", "Woman", "Ladies"),
    "Men": ("Men's", "Mens", "Men", "Man's", "Man", "Gentlemen"),
    "Girls": ("Girls'", "Girls", "Girls", "Girl's", "Girl", "Girls"),
    "Boys": ("Boys'", "Boys", "Boys", "Boy's", "Boy", "Boys"),
}
_AUDIENCE_SLOT = {a: {f.lower(): k for k, f in reversed(list(enumerate(forms))) if not (a in ("Girls", "Boys") and k == 5)}
                  for a, forms in _AUDIENCE_FORMS.items()}
for _a in ("Girls", "Boys"):
    _AUDIENCE_SLOT[_a][_a.lower()] = 2      # plain "Girls" / "Boys" is the plural slot
_AUDIENCE_RE = {a: re.compile(r"(?<![\w'])(" + "|".join(re.escape(f) for f in sorted(slots, key=len, reverse=True))
                              + r")(?![\w'])", re.IGNORECASE)
                for a, slots in _AUDIENCE_SLOT.items()}

# Rewording of marketing bullets: words of a group replace each other.  None of them is a
# material or colour word, so rewording never changes which material / colour a row has.
_SYNONYM_GROUPS = (
    ("comfortable", "comfy", "cozy"), ("durable", "sturdy", "long-lasting"), ("perfect", "ideal", "great"),
    ("stylish", "fashionable", "trendy"), ("easy", "simple", "effortless"), ("classic", "timeless", "traditional"),
    ("cute", "adorable", "lovely"), ("elegant", "graceful", "chic"), ("unique", "distinctive", "special"),
    ("premium", "superior", "top-grade"), ("casual", "everyday", "relaxed"), ("beautiful", "gorgeous", "pretty"),
    ("excellent", "superb", "outstanding"), ("breathable", "airy", "ventilated"), ("flexible", "supple", "bendy"),
    ("warm", "toasty", "snug"), ("lightweight", "featherlight", "light"), ("stretchy", "elastic", "springy"),
    ("provides", "offers", "gives"), ("ensures", "guarantees", "assures"), ("occasions", "events", "outings"),
    ("gift", "present", "surprise"), ("beautifully", "gracefully", "nicely"), ("soft", "plush", "silky-soft"),
    ("convenient", "handy", "practical"), ("design", "look", "styling"), ("ultra", "extra", "super"),
    ("favorite", "go-to", "beloved"), ("versatile", "adaptable", "multi-purpose"), ("secure", "safe", "firm"),
)
_SYNONYMS = {w: tuple(x for x in g if x != w) for g in _SYNONYM_GROUPS for w in g}
# Case-sensitive over the lower / Capitalised / UPPER forms: much faster than re.I (a mixed-case word is left alone).
_SYNONYM_RE = _word_pattern([f for w in _SYNONYMS for f in (w, w[:1].upper() + w[1:], w.upper())], flags=0)

_UNIT_NUMBER_RE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?=\s?(?:\"|''|inch(?:es)?\b|cm\b|mm\b|oz\b|ounces?\b"
                             r"|lbs?\b|pounds?\b|ft\b|feet\b|kg\b|g\b))", re.IGNORECASE)
_NUMBER_RE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.])")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\u3010])")
_HEADER_RE = re.compile(r"^(\u3010[^\u3011]{1,40}\u3011\s*:?\s*|[^\s:][^:.!?]{0,38}:\s+)")
_DATE_RE = re.compile(r"^(January|February|March|April|May|June|July|August|September|October|November|December)"
                      r" (\d{1,2}), (\d{4})$")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_FIRST_DATE, _LAST_DATE = date(2005, 1, 1).toordinal(), date(2023, 9, 30).toordinal()   # listing dates kept in range
_SIZE_WORDS = ("Small", "Medium", "Large", "X-Large", "XX-Large", "3X-Large", "One Size", "Plus Size", "Petite")
_PACKS = (2, 2, 2, 3, 3, 4, 5, 6, 8, 10)
_ID_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ID_SPACE = 36 ** 7          # the last 7 characters of a new id
_ID_STRIDE = 1 << 33         # row j tries tails perm(j), perm(j + stride), ... (distinct for distinct j)
_SPEC_MAX_LEN = 50           # leading bullets this short are spec bullets (composition, origin, closure, care)


# --------------------------------------------------------------------------- helpers

def _first(regex: re.Pattern, p: dict) -> str | None:
    m = regex.search(searchable_text(p))
    return m.group(1).lower() if m else None


def _match_case(src: str, word: str) -> str:
    if src.isupper() and len(src) > 1:
        return word.upper()
    if src[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _fmt_number(value: float, like: str) -> str:
    """`value` written with as many decimals as `like` has."""
    if "." in like:
        decimals = len(like.split(".", 1)[1])
        return f"{max(value, 10 ** -decimals):.{decimals}f}"
    return str(max(1, round(value)))


def _hash8(s: str) -> int:
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little")


def _base36(x: int, width: int) -> str:
    out = []
    for _ in range(width):
        x, d = divmod(x, 36)
        out.append(_ID_ALPHABET[d])
    return "".join(reversed(out))


# --------------------------------------------------------------------------- the source catalog

class Source:
    """The source catalog, held compactly: all lines in one bytes buffer plus per-row arrays."""

    def __init__(self, path: Path, protect_ids: set[str], progress: bool = False) -> None:
        # The file as it is, and where each non-blank line starts / ends (its newline included).
        self.buf = path.read_bytes()
        self.starts, self.ends = array("q"), array("q")
        pos, size = 0, len(self.buf)
        while pos < size:
            end = self.buf.find(b"\n", pos)
            end = size if end < 0 else end + 1
            if self.buf[pos:end].strip():
                self.starts.append(pos)
                self.ends.append(end)
            pos = end
        n = len(self.starts)

        shelves: dict[str, int] = {}
        paths: dict[tuple[str, ...], int] = {}
        self.shelf_of = array("i", bytes(4 * n))
        self.path_of = array("i", bytes(4 * n))
        self.rating = array("q", bytes(8 * n))
        self.feature_hashes = array("Q")     # of every source feature string, for the summary
        self.ids: set[str] = set()
        stores: set[str] = set()
        colour_of: list[str | None] = [None] * n
        material_of: list[str | None] = [None] * n
        counts: Counter = Counter()          # text hash -> source rows holding that text
        protected_rows: list[int] = []
        third_chars: Counter = Counter()
        colour_names: set[str] = set()
        for i in self._progress(range(n), progress, "reading source"):
            row = self.row(i)
            pid = str(row.get("parent_asin"))
            if pid in self.ids:
                raise ValueError(f"{path}: duplicate parent_asin {pid!r}")
            self.ids.add(pid)
            if len(pid) == 10 and pid.startswith("B0"):
                third_chars[pid[2]] += 1
            cats = row.get("categories") if isinstance(row.get("categories"), list) else []
            key = tuple(str(c) for c in cats)
            self.path_of[i] = paths.setdefault(key, len(paths))
            self.shelf_of[i] = shelves.setdefault(coarse_category(cats), len(shelves))
            rn = row.get("rating_number")
            self.rating[i] = rn if isinstance(rn, int) and not isinstance(rn, bool) and rn > 0 else 1
            if isinstance(row.get("store"), str):
                stores.add(row["store"])
            colour_of[i] = _first(COLOUR_RE, row)
            material_of[i] = _first(MATERIAL_RE, row)
            details = row.get("details") if isinstance(row.get("details"), dict) else {}
            if isinstance(details.get("Color"), str) and 0 < len(details["Color"]) <= 20:
                colour_names.add(details["Color"])
            counts.update({_hash8(t) for t in self._texts(row)})
            feats = row.get("features") if isinstance(row.get("features"), list) else []
            self.feature_hashes.extend(_hash8(str(f)) for f in feats if f)
            if pid in protect_ids:
                protected_rows.append(i)

        self.n = n
        self.shelves = list(shelves)
        self.paths = [list(p) for p in paths]
        self.path_shelf = array("i", (shelves[coarse_category(list(p))] for p in paths))
        self.single_word_stores = sorted(s for s in stores if s.isalpha() and 5 <= len(s) <= 12)
        # Third characters of real-looking ids ("B07...", "B0B..."), as often as the source has them.
        self.third_chars = "".join(sorted(third_chars.elements())) or "0123456789BC"
        self.colour_names = sorted(colour_names)
        self.max_rating = max(self.rating) if n else 1

        # Rows never used as base or donor: the protected targets and rows sharing distinctive text with them.
        distinctive = {h for i in protected_rows for h in map(_hash8, self._texts(self.row(i)))
                       if counts[h] <= PROTECT_MAX_ROWS}
        self.excluded = bytearray(n)
        for i in protected_rows:
            self.excluded[i] = 1
        if distinctive:
            for i in range(n):
                if not self.excluded[i] and any(_hash8(t) in distinctive for t in self._texts(self.row(i))):
                    self.excluded[i] = 1
        self.protected = len(protected_rows)
        del counts, distinctive

        self.eligible = array("i", (i for i in range(n) if not self.excluded[i]))
        by_shelf: list[list[int]] = [[] for _ in shelves]
        by_path: list[list[int]] = [[] for _ in paths]
        for i in self.eligible:
            by_shelf[self.shelf_of[i]].append(i)
            by_path[self.path_of[i]].append(i)
        self.by_shelf = [array("i", rows) for rows in by_shelf]
        self.by_path = [array("i", rows) for rows in by_path]
        # The shelf's own colour / material words, as often as its rows have them (first word of a row).
        self.shelf_colours: list[list[str]] = [[] for _ in shelves]
        self.shelf_materials: list[list[str]] = [[] for _ in shelves]
        for i in self.eligible:
            s = self.shelf_of[i]
            if colour_of[i]:
                self.shelf_colours[s].append(colour_of[i])
            if material_of[i] and material_of[i] != "fabric":
                self.shelf_materials[s].append(material_of[i])
        self.all_colours = sorted(c for c in colour_of if c)
        # First colour / material word of every row (index into COLOURS / MATERIALS, 255: none).
        self.colour_of = bytes(COLOURS.index(c) if c else 255 for c in colour_of)
        self.material_of = bytes(MATERIALS.index(m) if m else 255 for m in material_of)
        # Colour names (details "Color" values) by the colour word they start with.
        self.colour_names_by = {c: [x for x in self.colour_names if (m := COLOUR_RE.search(x)) and m.group(1).lower() == c]
                                for c in COLOURS}
        # Audience siblings: the same path with Women / Men / Girls / Boys exchanged, if that path exists.
        self.siblings: list[list[tuple[int, str, str]]] = []
        for p in paths:
            sib = []
            for k, part in enumerate(p):
                if part in AUDIENCES:
                    for other in AUDIENCES:
                        q = p[:k] + (other,) + p[k + 1:]
                        if other != part and q in paths and by_path[paths[q]]:
                            sib.append((paths[q], part, other))
                    break
            self.siblings.append(sib)

    @staticmethod
    def _progress(it: Iterable, on: bool, desc: str) -> Iterable:
        if not on:
            return it
        from tqdm import tqdm
        return tqdm(it, desc=desc, unit="row", file=sys.stderr, mininterval=1.0)

    @staticmethod
    def _texts(row: dict) -> list[str]:
        out = [str(row.get("title") or "")]
        for name in ("features", "description"):
            v = row.get(name)
            if isinstance(v, list):
                out.extend(str(x) for x in v if x)
        return [s for s in out if s]

    def line(self, i: int) -> bytes:
        """Row i's line exactly as in the file (a newline added if the file's last line lacks one)."""
        line = self.buf[self.starts[i]:self.ends[i]]
        return line if line.endswith(b"\n") else line + b"\n"

    def row(self, i: int) -> dict:
        return json.loads(self.buf[self.starts[i]:self.ends[i]])


# --------------------------------------------------------------------------- new ids

class IdMaker:
    """New parent_asins: "B0" + a third character as in the source + a 7-character tail.

    The tail is a seeded permutation of the row number (affine map, digit reversal, affine map,
    all bijections of [0, 36**7)), so tails, and therefore ids, of different rows never repeat;
    a tail that would give a source id is skipped by moving to `j + stride`.
    """

    def __init__(self, seed: int, third_chars: str, existing: set[str]) -> None:
        rng = random.Random(f"ids:{seed}")
        self.a = self._unit(rng)
        self.b = rng.randrange(_ID_SPACE)
        self.c = self._unit(rng)
        self.d = rng.randrange(_ID_SPACE)
        self.third = third_chars
        self.existing = existing

    @staticmethod
    def _unit(rng: random.Random) -> int:
        while True:
            a = rng.randrange(_ID_SPACE // 3, _ID_SPACE)
            if a % 2 and a % 3:
                return a

    def _tail(self, x: int) -> str:
        x = (self.a * x + self.b) % _ID_SPACE
        x = int(_base36(x, 7)[::-1], 36)
        return _base36((self.c * x + self.d) % _ID_SPACE, 7)

    def make(self, j: int, rng: random.Random) -> str:
        third = self.third[rng.randrange(len(self.third))]
        t = 0
        while True:
            pid = "B0" + third + self._tail(j + t * _ID_STRIDE)
            if pid not in self.existing:
                return pid
            t += 1


# --------------------------------------------------------------------------- one new row

class Variant:
    """Builds new row j, deterministically from (seed, j)."""

    def __init__(self, src: Source, seed: int, p_audience: float = 0.08) -> None:
        self.src = src
        self.seed = seed
        self.p_audience = p_audience
        self.ids = IdMaker(seed, src.third_chars, src.ids)

    def build(self, j: int) -> tuple[str, int, list[str]]:
        """The JSON line of new row j, its shelf index and its feature strings."""
        src = self.src
        rng = random.Random(self.seed * 1_000_000_007 + j)
        base_i = src.eligible[rng.randrange(len(src.eligible))]
        base = src.row(base_i)
        path_i = src.path_of[base_i]

        # Category path: the base's, or now and then an existing audience sibling of it.
        audience_map: tuple[str, str] | None = None
        sibs = src.siblings[path_i]
        if sibs and rng.random() < self.p_audience:
            path_i, old_aud, new_aud = sibs[rng.randrange(len(sibs))]
            audience_map = (old_aud, new_aud)
        shelf_i = src.path_shelf[path_i]
        pool = src.by_path[path_i] if len(src.by_path[path_i]) >= 2 else src.by_shelf[shelf_i]
        if not pool:
            pool = array("i", [base_i])
        donor_is = [pool[rng.randrange(len(pool))] for _ in range(2)]
        donors = [src.row(i) for i in donor_is]

        # Brand: mostly the base's (a sibling listing), else a shelf neighbour's or a made-up one.
        old_store = base.get("store") if isinstance(base.get("store"), str) else None
        new_store = old_store
        if old_store:
            r = rng.random()
            if r < 0.25:
                d_store = donors[0].get("store")
                if isinstance(d_store, str) and d_store:
                    new_store = d_store
            elif r < 0.35 and len(src.single_word_stores) >= 2:
                new_store = self._new_brand(rng)

        # One colour and one material word swapped both ways, in every text field.
        swap: dict[str, str] = {}
        colour = COLOURS[src.colour_of[base_i]] if src.colour_of[base_i] != 255 else None
        material = MATERIALS[src.material_of[base_i]] if src.material_of[base_i] != 255 else None
        if colour and rng.random() < 0.6:
            choices = src.shelf_colours[shelf_i] if rng.random() < 0.7 and src.shelf_colours[shelf_i] else src.all_colours
            new = choices[rng.randrange(len(choices))] if choices else colour
            if new not in (colour, {"gray": "grey", "grey": "gray"}.get(colour)):
                swap[colour], swap[new] = new, colour
                colour = new
        if material and material != "fabric" and rng.random() < 0.35:
            choices = src.shelf_materials[shelf_i]
            new = choices[rng.randrange(len(choices))] if choices else material
            if new != material and new not in swap:
                swap[material], swap[new] = new, material
                material = new
        scale = math.exp(rng.uniform(-0.2, 0.2))   # one size factor for the whole row

        # Whose text a piece is (0: the base, 1 and 2: the donors): its brand, and its colour / material
        # swap, which for a donor's text maps the donor's own first colour / material onto the row's.
        owners = [(old_store, swap)]
        for d_i, d in zip(donor_is, donors):
            d_swap: dict[str, str] = {}
            d_col = COLOURS[src.colour_of[d_i]] if src.colour_of[d_i] != 255 else None
            d_mat = MATERIALS[src.material_of[d_i]] if src.material_of[d_i] != 255 else None
            if colour and d_col and d_col != colour:
                d_swap[d_col], d_swap[colour] = colour, d_col
            if material and d_mat and "fabric" not in (d_mat, material) and d_mat != material:
                d_swap[d_mat], d_swap[material] = material, d_mat
            owners.append((d.get("store") if isinstance(d.get("store"), str) else None, d_swap))

        def vary(text: str, owner: int = 0, dims: bool = False) -> str:
            if not text:
                return text
            store, sw = owners[owner]
            if store and new_store and store != new_store and store in text:
                text = text.replace(store, new_store)
            if audience_map:
                text = self._audience(text, *audience_map)
            if sw:
                text = SWAP_RE.sub(lambda m: _match_case(m.group(1), sw[m.group(1).lower()])
                                   if m.group(1).lower() in sw else m.group(1), text)
            if not _DIGIT_RE.search(text):
                return text
            regex = _NUMBER_RE if dims else _UNIT_NUMBER_RE
            return regex.sub(lambda m: _fmt_number(float(m.group(1)) * scale, m.group(1)), text)

        # Title: the base's brand and head, a donor's tail, a variant suffix (written for the row's
        # colour after the swap, so not swapped again).
        head, tail, kept_suffix, new_suffix, colour_name = self._title(rng, base, donors[0], old_store, colour)
        head = vary(head)
        if tail:
            # The donor's words, its colour / material now the row's: drop those the head already has.
            seen = {w.lower() for w in head.split()}
            tail = " ".join(w for w in vary(tail, 1).split() if not (w.lower() in seen and SWAP_RE.fullmatch(w)))
        title = head + (" " + tail if tail else "") + vary(kept_suffix) + new_suffix

        features = self._features(rng, base, donors, vary)
        description = self._description(rng, base, donors[0], vary)
        details = self._details(rng, base, vary, colour_name)

        row = {
            "parent_asin": self.ids.make(j, rng),
            "title": title,
            "features": features,
            "description": description,
            "price": self._price(rng, base.get("price")),
            "categories": src.paths[path_i],
            "details": details,
            "average_rating": self._rating(rng, base.get("average_rating")),
            "rating_number": self._rating_number(rng, shelf_i),
            "store": new_store if old_store else base.get("store"),
        }
        return json.dumps(row, ensure_ascii=False) + "\n", shelf_i, features

    # ---- parts

    def _new_brand(self, rng: random.Random) -> str:
        names = self.src.single_word_stores
        a, b = names[rng.randrange(len(names))], names[rng.randrange(len(names))]
        name = a[:rng.randint(2, 4)] + b[-rng.randint(2, 4):].lower()
        return name.upper() if a.isupper() else name[:1].upper() + name[1:].lower()

    @staticmethod
    def _audience(text: str, old: str, new: str) -> str:
        slots, new_forms = _AUDIENCE_SLOT[old], _AUDIENCE_FORMS[new]
        return _AUDIENCE_RE[old].sub(lambda m: _match_case(m.group(1), new_forms[slots[m.group(1).lower()]]), text)

    @staticmethod
    def _split_title(title: str, store: str | None) -> tuple[list[str], list[str], str]:
        """(brand words, core words, variant suffix) of a title."""
        brand: list[str] = []
        if store and title.startswith(store + " "):
            brand, title = store.split(), title[len(store) + 1:]
        suffix = ""
        for sep in (" - ", ", "):
            k = title.rfind(sep)
            if k > 0 and len(title[k + len(sep):].split()) <= 3:
                title, suffix = title[:k], title[k:]
                break
        return brand, title.split(), suffix

    def _title(self, rng: random.Random, base: dict, donor: dict, store: str | None,
               colour: str | None) -> tuple[str, str, str, str, str | None]:
        """(base head, donor tail, kept base suffix: all still to vary; new suffix, its colour name)."""
        brand, core, suffix = self._split_title(str(base.get("title") or ""), store)
        d_store = donor.get("store") if isinstance(donor.get("store"), str) else None
        _, d_core, _ = self._split_title(str(donor.get("title") or ""), d_store)
        tail: list[str] = []
        r = rng.random()
        if r < 0.55 and len(core) >= 2 and d_core:
            # Head of the base, tail of the donor (which holds the product noun).
            a = rng.randint(1, len(core) - 1)
            b = rng.randint(len(d_core) // 2, len(d_core) - 1)
            seen = {w.lower() for w in core[:a]}
            core, tail = core[:a], [w for w in d_core[b:] if w.lower() not in seen or not w[:1].isalpha()]
        elif r < 0.8 and len(core) >= 2 and d_core:
            # One descriptive word of the donor inserted into the base title.
            words = [w for w in d_core if w.isalpha() and w[:1].isupper() and w.lower() not in {c.lower() for c in core}]
            if words:
                core.insert(rng.randint(1, len(core) - 1), words[rng.randrange(len(words))])
        elif len(core) >= 4:
            # One word dropped (never the first or the last, the noun).
            del core[rng.randint(1, len(core) - 2)]
        head, tail_text = " ".join(brand + core), " ".join(tail)
        r = rng.random()
        if r < 0.35:
            return head, tail_text, suffix, "", None    # the base's own suffix
        if r < 0.55:
            return head, tail_text, "", "", None
        kind = rng.random()
        if kind < 0.6 and self.src.colour_names:
            # A colour name holding the row's colour word (after the swap), or any if the row has none.
            names = self.src.colour_names
            fitting = (self.src.colour_names_by[colour] or [colour.capitalize()]) if colour else names
            name = fitting[rng.randrange(len(fitting))]
            return head, tail_text, "", " - " + name, name
        if kind < 0.85:
            return head, tail_text, "", f", {_PACKS[rng.randrange(len(_PACKS))]} Pack", None
        return head, tail_text, "", ", " + _SIZE_WORDS[rng.randrange(len(_SIZE_WORDS))], None

    @staticmethod
    def _split_bullets(features: object) -> tuple[list[str], list[str]]:
        feats = [str(f) for f in features if f] if isinstance(features, list) else []
        k = 0
        while k < len(feats) and len(feats[k]) <= _SPEC_MAX_LEN:
            k += 1
        return feats[:k], feats[k:]

    def _features(self, rng: random.Random, base: dict, donors: list[dict], vary) -> list[str]:
        spec, market = self._split_bullets(base.get("features"))
        if not spec and not market:
            return []
        d_spec: list[tuple[str, int]] = []
        pool: list[tuple[str, int]] = []          # (bullet, owner: 1 or 2, the donor it comes from)
        for owner, d in enumerate(donors, 1):
            ds, dm = self._split_bullets(d.get("features"))
            d_spec.extend((b, owner) for b in ds)
            pool.extend((b, owner) for b in dm)
        # Spec bullets: a closure / sole / care bullet now and then taken from a donor with the same last word.
        specs = [(s, 0) for s in spec]
        for k, s in enumerate(spec):
            if rng.random() < 0.3:
                last = s.rsplit(" ", 1)[-1].lower()
                same = [d for d in d_spec if d[0].rsplit(" ", 1)[-1].lower() == last and d[0] != s]
                if same:
                    specs[k] = same[rng.randrange(len(same))]
        out = [vary(s, owner) for s, owner in specs]
        # Marketing bullets: the base's, some exchanged for donors', then spliced and reworded.
        n = len(market)
        if n:
            n = max(1, min(10, n + rng.choice((-1, 0, 0, 1))))
        elif rng.random() < 0.15 and pool:
            n = 1
        owned: list[tuple[str, int]] = [(m, 0) for m in market]
        rng.shuffle(owned)
        chosen = []
        for k in range(n):
            if (k >= len(owned) or rng.random() < 0.35) and pool:
                chosen.append(pool[rng.randrange(len(pool))])
            elif k < len(owned):
                chosen.append(owned[k])
        # Spliced-in sentences come from the donors' bullets (the base's own would repeat within the row).
        sentences = [b for b, _ in pool] or [b for b, _ in owned]
        for text, owner in chosen:
            if len(text) > _SPEC_MAX_LEN:
                text = self._reword(rng, text, sentences)
            out.append(vary(text, owner))
        return list(dict.fromkeys(out))

    @staticmethod
    def _reword(rng: random.Random, text: str, others: list[str]) -> str:
        changed = False
        if rng.random() < 0.55 and others:
            m = _HEADER_RE.match(text)
            header, body = (m.group(1), text[m.end():]) if m else ("", text)
            sents = _SENTENCE_RE.split(body)
            other = others[rng.randrange(len(others))]
            om = _HEADER_RE.match(other)
            o_sents = _SENTENCE_RE.split(other[om.end():] if om else other)
            extra = o_sents[rng.randrange(len(o_sents))]
            if extra and extra not in sents:
                if len(sents) > 1 and rng.random() < 0.6:
                    sents[rng.randrange(len(sents))] = extra
                elif len(body) + len(extra) < 600:
                    if sents[-1] and sents[-1][-1:] not in ".!?":
                        sents[-1] += "."
                    sents.append(extra)
                else:
                    sents[-1] = extra
                text = header + " ".join(s for s in sents if s)
                changed = True
        if rng.random() < (0.5 if changed else 0.85):
            hits = list(_SYNONYM_RE.finditer(text))
            if hits:
                picked = sorted(rng.sample(range(len(hits)), min(len(hits), rng.randint(1, 2))), reverse=True)
                for k in picked:
                    m = hits[k]
                    alts = _SYNONYMS[m.group(1).lower()]
                    text = text[:m.start()] + _match_case(m.group(1), alts[rng.randrange(len(alts))]) + text[m.end():]
        return text

    def _description(self, rng: random.Random, base: dict, donor: dict, vary) -> list[str]:
        desc = base.get("description") if isinstance(base.get("description"), list) else []
        owner = 0
        if desc and rng.random() < 0.25 and isinstance(donor.get("description"), list) and donor["description"]:
            desc, owner = donor["description"], 1
        texts = [str(d) for d in desc if d]
        out = []
        for k, d in enumerate(texts):
            if rng.random() < 0.5:
                d = self._reword(rng, d, texts[:k] + texts[k + 1:] or [d])
            out.append(vary(d, owner))
        return out

    def _details(self, rng: random.Random, base: dict, vary, colour_name: str | None) -> dict:
        details = base.get("details") if isinstance(base.get("details"), dict) else {}
        out: dict[str, object] = {}
        for key, value in details.items():
            if not isinstance(value, str):
                out[key] = value
                continue
            if key in ("Item model number", "Part Number"):
                value = "".join(rng.choice("0123456789") if ch.isdigit()
                                else rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ") if ch.isupper()
                                else ch for ch in value)
            elif key == "Date First Available":
                m = _DATE_RE.match(value)
                shift = rng.randint(-540, 540)
                try:
                    d = date(int(m.group(3)), _MONTHS.index(m.group(1)) + 1, int(m.group(2))) if m else None
                except ValueError:
                    d = None
                if d is not None:
                    d = date.fromordinal(min(_LAST_DATE, max(_FIRST_DATE, d.toordinal() + shift)))
                    value = f"{_MONTHS[d.month - 1]} {d.day}, {d.year}"
            elif key == "Color" and colour_name:
                out[key] = colour_name              # the title's new colour suffix
                continue
            out[key] = vary(value, dims=("Dimensions" in key or "Weight" in key))
        return out

    @staticmethod
    def _price(rng: random.Random, price: object) -> object:
        if not isinstance(price, (int, float)) or isinstance(price, bool):
            return price                            # null stays null; a string ("—") stays as it is
        p = float(price) * rng.uniform(0.7, 1.3)
        r = rng.random()
        if r < 0.5 and p >= 2:
            return round(math.floor(p) + 0.99, 2) if math.floor(p) + 0.99 <= float(price) * 1.3 else round(p, 2)
        if r < 0.65:
            return float(max(1, round(p)))
        return max(0.5, round(p, 2))

    @staticmethod
    def _rating(rng: random.Random, avg: object) -> float:
        base = float(avg) if isinstance(avg, (int, float)) and not isinstance(avg, bool) else 4.3
        return round(min(5.0, max(1.0, base + rng.gauss(0, 0.15))), 1)

    def _rating_number(self, rng: random.Random, shelf_i: int) -> int:
        # Heavy-tailed: a shelf neighbour's count times a log-normal factor.
        rows = self.src.by_shelf[shelf_i]
        donor = self.src.rating[rows[rng.randrange(len(rows))]] if rows else 1
        return max(1, min(int(self.src.max_rating * 1.5), round(donor * rng.lognormvariate(0, 0.8))))


# --------------------------------------------------------------------------- driving

_WORKER: Variant | None = None


def _init_worker(variant: Variant) -> None:
    global _WORKER
    _WORKER = variant


def _build_chunk(span: tuple[int, int]) -> tuple[list[bytes], list[int], array]:
    """New rows [start, stop): their lines, shelves and feature-string hashes."""
    assert _WORKER is not None
    lines, shelves, hashes = [], [], array("Q")
    for j in range(*span):
        line, shelf, feats = _WORKER.build(j)
        lines.append(line.encode("utf-8"))
        shelves.append(shelf)
        hashes.extend(_hash8(f) for f in feats)
    return lines, shelves, hashes


def _chunks(total: int) -> Iterator[tuple[int, int]]:
    for start in range(0, total, CHUNK):
        yield start, min(total, start + CHUNK)


def generate(src: Source, rows: int, out: Path, seed: int, workers: int = 1, progress: bool = True,
             p_audience: float = 0.08) -> dict:
    """Write the scaled catalog to `out` (via a temporary file) and return its summary."""
    n_new = rows - src.n
    variant = Variant(src, seed, p_audience)
    shelf_counts = Counter(src.shelf_of)
    new_hashes = [array("Q") for _ in range(64)]    # the new rows' feature-string hashes, by low bits
    n_new_feats = 0

    if workers > 1 and n_new > CHUNK:
        import multiprocessing as mp
        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
        gc.freeze()     # forked workers then share the source pages instead of copying them on the first GC pass
        pool = ctx.Pool(workers, initializer=_init_worker, initargs=(variant,))
        results = pool.imap(_build_chunk, _chunks(n_new), chunksize=1)
    else:
        pool = None
        _init_worker(variant)
        results = map(_build_chunk, _chunks(n_new))

    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=rows, desc=f"writing {out.name}", unit="row", unit_scale=True, file=sys.stderr,
                   mininterval=1.0, smoothing=0.1)
    tmp = out.with_name(out.name + ".tmp")
    merge = random.Random(f"merge:{seed}")
    left_orig, left_new = src.n, n_new
    next_orig = 0
    try:
        with open(tmp, "wb") as fh:
            for new_lines, chunk_shelves, chunk_hashes in results:
                n_chunk = len(new_lines)
                shelf_counts.update(chunk_shelves)
                for h in chunk_hashes:
                    new_hashes[h & 63].append(h)
                n_new_feats += len(chunk_hashes)
                # Seeded random merge: at each slot, an original with probability (originals left / slots left).
                k = 0
                parts = []
                while k < n_chunk:
                    if left_orig and merge.random() * (left_orig + left_new) < left_orig:
                        parts.append(src.line(next_orig))
                        next_orig += 1
                        left_orig -= 1
                    else:
                        parts.append(new_lines[k])
                        k += 1
                        left_new -= 1
                fh.write(b"".join(parts))
                if bar:
                    bar.update(len(parts))
            tail = [src.line(i) for i in range(next_orig, src.n)]
            fh.write(b"".join(tail))
            if bar:
                bar.update(len(tail))
        if pool is not None:
            pool.close()
            pool.join()
    except BaseException:
        if pool is not None:
            pool.terminate()
        tmp.unlink(missing_ok=True)
        raise
    finally:
        if bar:
            bar.close()
    os.replace(tmp, out)

    # Distinct feature strings, bucket by bucket (one set of a 64th of the hashes at a time).
    orig_hashes = [array("Q") for _ in range(64)]
    for h in src.feature_hashes:
        orig_hashes[h & 63].append(h)
    distinct_new = distinct_all = 0
    for b_new, b_orig in zip(new_hashes, orig_hashes):
        seen = set(b_new)
        distinct_new += len(seen)
        seen.update(b_orig)
        distinct_all += len(seen)
    n_feats = n_new_feats + len(src.feature_hashes)
    sizes = sorted(shelf_counts.values())
    return {
        "rows": rows,
        "source_rows": src.n,
        "new_rows": n_new,
        "protected_targets": src.protected,
        "excluded_from_bases": len(src.excluded) - len(src.eligible),
        "distinct_shelves": len(shelf_counts),
        "source_shelves": len(src.shelves),
        "median_shelf_size": statistics.median(sizes) if sizes else 0,
        "max_shelf_size": sizes[-1] if sizes else 0,
        "feature_strings": n_feats,
        "distinct_feature_share": round(distinct_all / n_feats, 4) if n_feats else 0.0,
        "distinct_feature_share_new_rows": round(distinct_new / n_new_feats, 4) if n_new_feats else 0.0,
        "file_bytes": out.stat().st_size,
    }


def _protect_ids(arg: str | None) -> tuple[set[str], str]:
    if arg is not None and arg.lower() == "none":
        return set(), "none"
    try:
        path = resolve_dataset(arg)
    except FileNotFoundError:
        if arg:
            raise
        return set(), "none (no public set found)"
    ids = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                gt = row.get("ground_truth") if isinstance(row, dict) else None
                pid = gt.get("parent_asin") if isinstance(gt, dict) else (row.get("parent_asin") if isinstance(row, dict) else None)
                if pid:
                    ids.add(str(pid))
    return ids, str(path)


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{n} B"
        n /= 1024
    return str(n)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.scale_catalog", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, required=True, help="rows in the output (at least the source's)")
    ap.add_argument("--out", required=True, help="output JSONL (e.g. data/catalog_1m.jsonl; data/*.jsonl is git-ignored)")
    ap.add_argument("--catalog", help="source catalog (default: $CATALOG_PATH, data/catalog.jsonl, "
                                      "../shared/techjam/catalog_proxy.jsonl)")
    ap.add_argument("--protect", help="sessions whose ground_truth.parent_asin rows are never varied "
                                      "(default: data/public_set.jsonl, ../shared/techjam/public_set.jsonl; 'none')")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed (default %(default)s)")
    ap.add_argument("--workers", type=int, default=1,
                    help="processes generating rows (default 1; the output does not depend on it)")
    ap.add_argument("--audience-share", type=float, default=0.08,
                    help="share of new rows moved to an existing audience sibling path (default %(default)s)")
    ap.add_argument("--no-progress", action="store_true", help="no tqdm progress bars")
    args = ap.parse_args(argv)

    try:
        catalog_path = resolve_catalog(args.catalog)
        protect, protect_from = _protect_ids(args.protect)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    if out.resolve() == catalog_path.resolve():
        print("error: --out is the source catalog", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    src = Source(catalog_path, protect, progress=not args.no_progress)
    if args.rows < src.n:
        print(f"error: --rows {args.rows} is below the source's {src.n} rows (all source rows are kept)",
              file=sys.stderr)
        return 2
    if not len(src.eligible) and args.rows > src.n:
        print("error: no source row may be varied (all are protected)", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    summary = generate(src, args.rows, out, args.seed, workers=max(1, args.workers),
                       progress=not args.no_progress, p_audience=args.audience_share)
    summary["seconds"] = round(time.perf_counter() - t0, 1)
    print(f"source {catalog_path} ({src.n} rows); protected targets from {protect_from}; seed {args.seed}")
    print(f"wrote {out}")
    width = max(len(k) for k in summary)
    for k, v in summary.items():
        shown = f"{v}  ({_size(v)})" if k == "file_bytes" else v
        print(f"  {k:<{width}}  {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
