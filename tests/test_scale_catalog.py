"""scripts/scale_catalog.py on a small synthetic catalog written in a tmp dir.

Checks: byte-identical output for the same arguments (in-process, under other
PYTHONHASHSEEDs, with two worker processes), the row count, unique and
real-looking new ids, every source line kept verbatim and in order, the
official schema and field order, new rows on existing shelves (which grow),
protected targets' text never reused, varied values.
"""
from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from scripts import scale_catalog as S

ROOT = Path(__file__).resolve().parent.parent
ID_RE = re.compile(r"B0[0-9A-Z]{8}")
TOP = "Clothing, Shoes & Jewelry"
PATHS = [
    [TOP, "Women", "Clothing", "Tops, Tees & Blouses", "T-Shirts"],
    [TOP, "Men", "Clothing", "Tops, Tees & Blouses", "T-Shirts"],
    [TOP, "Women", "Shoes", "Boots", "Chelsea"],
    [TOP, "Men", "Shoes", "Boots", "Chelsea"],
    [TOP, "Sport Specific Clothing", "Yoga", "Women"],
    [TOP, "Sport Specific Clothing", "Yoga", "Men"],
    [TOP, "Girls", "Clothing", "Dresses"],
    [TOP, "Luggage & Travel Gear", "Backpacks"],
]
NOUNS = ["Tee", "Tee", "Chelsea Boot", "Chelsea Boot", "Yoga Pants", "Yoga Shorts", "Dress", "Backpack"]
AUDIENCE = {"Women": "Women's", "Men": "Men's", "Girls": "Girls'"}
COLOURS = ["Black", "White", "Blue", "Red", "Green", "Navy"]
MATERIALS = ["Cotton", "Polyester", "Leather", "Nylon"]
ADJECTIVES = ["Classic", "Casual", "Lightweight", "Slim Fit", "Vintage", "Soft", "Waterproof", "Everyday"]
BULLETS = [
    "Comfortable fit: a relaxed cut that is easy to wear all day. Durable stitching keeps it looking new.",
    "Perfect gift: a stylish choice for birthdays and holidays. Our customers love the classic look.",
    "Breathable and soft: keeps you cool in summer and warm in winter. Machine washable for easy care.",
    "Versatile design: pairs well with jeans, shorts or skirts. Great for work, travel and everyday outings.",
    "Size note: measures 12 inches across and weighs 8 oz. Please check the size chart before ordering.",
    "Premium quality: made with care by a small team. We offer a 30-day return if it is not perfect for you.",
]


def synthetic_rows(n: int = 48) -> list[dict]:
    """A few dozen rows on 8 paths (7 shelves), each internally consistent in colour and material."""
    rng = random.Random(7)
    rows = []
    for i in range(n):
        k = i % len(PATHS)
        path = PATHS[k]
        audience = next((a for a in AUDIENCE if a in path), None)
        colour, material = rng.choice(COLOURS), rng.choice(MATERIALS)
        brand = f"Brand{chr(65 + i % 9)}co"
        title = " ".join(x for x in (brand, AUDIENCE.get(audience, ""), rng.choice(ADJECTIVES), material,
                                     NOUNS[k]) if x) + f" - {colour}"
        features = [f"100% {material}", "Imported", rng.choice(["Zipper closure", "Pull On closure"])]
        features += rng.sample(BULLETS, rng.randint(0, 3))
        price = None if i % 7 == 3 else ("—" if i == 5 else round(rng.uniform(9, 120), 2))
        rows.append({
            "parent_asin": f"B07TEST{i:03d}",
            "title": title,
            "features": features,
            "description": [f"The {brand} {NOUNS[k].lower()} in {colour.lower()} {material.lower()}."] if i % 2 else [],
            "price": price,
            "categories": path,
            "details": {"Package Dimensions": f"{rng.randint(5, 15)}.5 x 8.25 x 1.1 inches; 7.5 Ounces",
                        "Item model number": f"MX{rng.randint(100, 999)}", "Department": audience or "Unisex",
                        "Date First Available": "March 4, 2020", "Color": colour, "Manufacturer": brand},
            "average_rating": round(rng.uniform(3.5, 5.0), 1),
            "rating_number": int(rng.paretovariate(0.8) * 10),
            "store": brand,
        })
    # A protected target with a distinctive bullet, and a near-clone sharing it.
    rows[9]["features"].append("Hand-stitched by Marta in Porto using reclaimed sailcloth from 1970s regattas")
    rows[17]["features"].append("Hand-stitched by Marta in Porto using reclaimed sailcloth from 1970s regattas")
    return rows


@pytest.fixture()
def source(tmp_path: Path) -> Path:
    path = tmp_path / "source.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in synthetic_rows()), encoding="utf-8")
    return path


@pytest.fixture()
def protect(tmp_path: Path) -> Path:
    path = tmp_path / "public.jsonl"
    path.write_text(json.dumps({"sample_id": "s1", "ground_truth": {"parent_asin": "B07TEST009"}}) + "\n",
                    encoding="utf-8")
    return path


def run_main(source: Path, out: Path, rows: int, *extra: str, protect: str = "none") -> int:
    return S.main(["--catalog", str(source), "--out", str(out), "--rows", str(rows), "--protect", protect,
                   "--no-progress", *extra])


def run_subprocess(source: Path, out: Path, rows: int, hashseed: str, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    env.pop("CATALOG_PATH", None)
    return subprocess.run([sys.executable, "-m", "scripts.scale_catalog", "--catalog", str(source), "--out", str(out),
                           "--rows", str(rows), "--protect", "none", "--no-progress", *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


def read(path: Path) -> tuple[list[str], list[dict]]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return lines, [json.loads(x) for x in lines]


def new_rows(source: Path, lines: list[str], rows: list[dict]) -> list[dict]:
    """The output rows that are not source lines copied verbatim (the derived ones)."""
    src_lines = set(source.read_text(encoding="utf-8").splitlines(keepends=True))
    return [r for line, r in zip(lines, rows) if line not in src_lines]


def test_deterministic_across_runs_hash_seeds_and_workers(source: Path, tmp_path: Path, capsys) -> None:
    rows = 2600                                 # 2552 new rows: two work chunks, so --workers 2 really splits
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert run_main(source, a, rows) == 0
    assert run_main(source, b, rows) == 0
    assert a.read_bytes() == b.read_bytes()
    for seed, extra in (("0", ()), ("4242", ()), ("99", ("--workers", "2"))):
        c = tmp_path / f"c{seed}.jsonl"
        proc = run_subprocess(source, c, rows, seed, *extra)
        assert proc.returncode == 0, proc.stderr
        assert c.read_bytes() == a.read_bytes(), f"PYTHONHASHSEED={seed} {extra} differs"
    # Another seed gives another catalog, with the same originals.
    d = tmp_path / "d.jsonl"
    assert run_main(source, d, rows, "--seed", "5") == 0
    assert d.read_bytes() != a.read_bytes()
    assert set(source.read_text(encoding="utf-8").splitlines()) <= set(d.read_text(encoding="utf-8").splitlines())
    capsys.readouterr()


def test_rows_ids_originals_and_schema(source: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.jsonl"
    assert run_main(source, out, 1000) == 0
    summary = capsys.readouterr().out
    lines, rows = read(out)
    src_lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) == 1000

    # Unique ids; new ones look real and never reuse a source id.
    ids = [r["parent_asin"] for r in rows]
    assert len(set(ids)) == len(ids)
    src_ids = {json.loads(x)["parent_asin"] for x in src_lines}
    new = new_rows(source, lines, rows)
    assert len(new) == 1000 - len(src_lines)
    assert all(ID_RE.fullmatch(r["parent_asin"]) and r["parent_asin"] not in src_ids for r in new)

    # Every source line verbatim, in the source's order, spread through the file (not all at one end).
    positions = [lines.index(x) for x in src_lines]
    assert positions == sorted(positions)
    assert positions[0] < 500 < positions[-1]

    # The official schema and field order, with the official types.
    for r in new:
        assert tuple(r) == S.FIELDS
        assert isinstance(r["title"], str) and r["title"]
        assert isinstance(r["features"], list) and all(isinstance(f, str) and f for f in r["features"])
        assert isinstance(r["description"], list) and all(isinstance(d, str) for d in r["description"])
        assert r["price"] is None or r["price"] == "—" or (isinstance(r["price"], float) and r["price"] > 0)
        assert isinstance(r["categories"], list) and all(isinstance(c, str) for c in r["categories"])
        assert isinstance(r["details"], dict) and all(isinstance(k, str) and isinstance(v, str)
                                                      for k, v in r["details"].items())
        assert isinstance(r["average_rating"], float) and 1.0 <= r["average_rating"] <= 5.0
        assert isinstance(r["rating_number"], int) and r["rating_number"] >= 1
        assert isinstance(r["store"], str)

    for key in ("rows", "distinct_shelves", "median_shelf_size", "max_shelf_size", "distinct_feature_share",
                "file_bytes"):
        assert re.search(rf"^\s+{key}\s+\S", summary, re.MULTILINE), key
    assert re.search(r"^\s+rows\s+1000$", summary, re.MULTILINE)
    assert re.search(rf"^\s+file_bytes\s+{out.stat().st_size}\b", summary, re.MULTILINE)


def test_shelves_grow_on_existing_paths(source: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.jsonl"
    assert run_main(source, out, 2000) == 0
    capsys.readouterr()
    _, rows = read(out)
    src_rows = synthetic_rows()
    src_shelves = Counter(S.coarse_category(r["categories"]) for r in src_rows)
    src_paths = {tuple(r["categories"]) for r in src_rows}
    shelves = Counter(S.coarse_category(r["categories"]) for r in rows)
    on_source = sum(1 for r in rows if S.coarse_category(r["categories"]) in src_shelves)
    assert on_source / len(rows) >= 0.95
    assert all(tuple(r["categories"]) in src_paths for r in rows)
    assert set(shelves) == set(src_shelves)
    for shelf, n in src_shelves.items():        # every shelf grows, roughly in proportion (2000 / 48 ~ 42x)
        assert shelves[shelf] >= 10 * n, shelf


def test_audience_variants_move_to_existing_siblings(source: Path, tmp_path: Path, capsys) -> None:
    # Every new row whose path has an audience sibling moves to it: Women <-> Men here (Girls has none).
    out = tmp_path / "out.jsonl"
    assert run_main(source, out, 1000, "--audience-share", "1") == 0
    capsys.readouterr()
    lines, rows = read(out)
    new = new_rows(source, lines, rows)
    src_paths = {tuple(p) for p in PATHS}
    assert all(tuple(r["categories"]) in src_paths for r in new)
    checked = 0
    for r in new:
        audience = next((a for a in ("Women", "Men", "Girls") if a in r["categories"]), None)
        if audience is None:
            continue
        checked += 1
        other = {"Women": "Men's", "Men": "Women's", "Girls": "Boys'"}[audience]
        assert r["details"]["Department"] == audience
        assert AUDIENCE[audience] in r["title"] and other not in r["title"], (r["categories"], r["title"])
    assert checked > len(new) / 2
    # The Yoga shelves are "Yoga Women" / "Yoga Men": moving a row there changes its shelf, to an existing one.
    assert {S.coarse_category(r["categories"]) for r in new} == {S.coarse_category(p) for p in PATHS}
    # Women's yoga rows are "Yoga Pants", men's "Yoga Shorts": moved rows keep their base's words.
    moved = [r for r in new if r["categories"] == PATHS[5] and "Pants" in r["title"]]
    assert len(moved) > 20
    out0 = tmp_path / "out0.jsonl"
    assert run_main(source, out0, 1000, "--audience-share", "0") == 0
    capsys.readouterr()
    _, rows0 = read(out0)
    assert not [r for r in rows0 if r["categories"] == PATHS[5] and "Pants" in r["title"]]


def test_values_vary_and_stay_consistent(source: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.jsonl"
    assert run_main(source, out, 1500) == 0
    capsys.readouterr()
    lines, rows = read(out)
    src_rows = synthetic_rows()
    new = new_rows(source, lines, rows)

    # Titles, feature lists and model numbers are mostly new; a few exact repeats are realistic.
    src_titles = {r["title"] for r in src_rows}
    src_feature_lists = {tuple(r["features"]) for r in src_rows}
    assert sum(r["title"] not in src_titles for r in new) / len(new) >= 0.7
    assert sum(tuple(r["features"]) not in src_feature_lists for r in new) / len(new) >= 0.5
    assert len({r["title"] for r in new}) / len(new) >= 0.5
    src_bullets = {f for r in src_rows for f in r["features"]}
    new_bullets = [f for r in new for f in r["features"] if len(f) > 50]
    assert sum(f not in src_bullets for f in new_bullets) / len(new_bullets) >= 0.5

    # Prices: nulls kept (about the source's share), the string price kept as is, numbers spread out.
    src_null = sum(r["price"] is None for r in src_rows) / len(src_rows)
    new_null = sum(r["price"] is None for r in new) / len(new)
    assert abs(new_null - src_null) < 0.06
    numbers = [r["price"] for r in new if isinstance(r["price"], float)]
    lo, hi = min(r["price"] for r in src_rows if isinstance(r["price"], float)), max(
        r["price"] for r in src_rows if isinstance(r["price"], float))
    assert all(0.7 * lo - 0.01 <= p <= 1.3 * hi + 0.01 for p in numbers)
    assert len(set(numbers)) > len(numbers) / 3

    # rating_number: heavy-tailed (the top 1% hold far more than 1% of all ratings).
    counts = sorted((r["rating_number"] for r in new), reverse=True)
    assert sum(counts[: len(counts) // 100]) > 0.05 * sum(counts)

    # Colour / material words are swapped in every field at once: the composition bullet keeps
    # naming the title's material, and the details' colour names the title's colour.
    mat_re = re.compile(r"\b(cotton|polyester|leather|nylon)\b", re.IGNORECASE)
    agree = total = 0
    for r in new:
        t = mat_re.search(r["title"])
        comp = next((f for f in r["features"] if f.startswith("100% ")), None)
        if t and comp:
            total += 1
            agree += t.group(1).lower() == comp[5:].lower()
    assert total and agree / total >= 0.8
    col_re = re.compile(r"\b(black|white|blue|red|green)\b", re.IGNORECASE)
    named = [r for r in new if " - " in r["title"] and col_re.search(r["title"].rsplit(" - ", 1)[1])]
    assert len(named) > len(new) / 5
    assert sum(r["title"].rsplit(" - ", 1)[1] == r["details"]["Color"] for r in named) / len(named) >= 0.95
    # ... and no title names the same material twice after the swap.
    assert not [r["title"] for r in new
                if len({m.lower() for m in mat_re.findall(r["title"])}) < len(mat_re.findall(r["title"]))]


def test_protected_targets_are_not_reused(source: Path, protect: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "out.jsonl"
    assert run_main(source, out, 1500, protect=str(protect)) == 0
    summary = capsys.readouterr().out
    assert re.search(r"^\s+protected_targets\s+1$", summary, re.MULTILINE)
    assert re.search(r"^\s+excluded_from_bases\s+2$", summary, re.MULTILINE)   # the target and its near-clone
    lines, rows = read(out)
    new = new_rows(source, lines, rows)
    target = synthetic_rows()[9]
    assert any(r["parent_asin"] == target["parent_asin"] for r in rows)
    for r in new:
        assert r["title"] != target["title"]
        assert not any("Marta in Porto" in f for f in r["features"])


def test_errors(source: Path, tmp_path: Path, capsys) -> None:
    assert run_main(source, tmp_path / "x.jsonl", 10) == 2                 # fewer rows than the source
    assert "below the source" in capsys.readouterr().err
    assert run_main(tmp_path / "missing.jsonl", tmp_path / "x.jsonl", 100) == 2
    assert "not found" in capsys.readouterr().err
    assert not (tmp_path / "x.jsonl").exists()
    # Exactly the source's size: the source itself.
    out = tmp_path / "same.jsonl"
    assert run_main(source, out, 48) == 0
    assert out.read_bytes() == source.read_bytes()


def test_ids_are_a_permutation() -> None:
    maker = S.IdMaker(1, "0789BC", existing=set())
    rng = random.Random(0)
    ids = [maker.make(j, rng) for j in range(20000)]
    assert len(set(ids)) == len(ids)
    assert all(ID_RE.fullmatch(x) for x in ids)
    # A tail that would repeat a source id moves on to another tail.
    taken = maker.make(5, random.Random(3))
    again = S.IdMaker(1, taken[2], existing={taken})
    assert again.make(5, random.Random(3)) != taken
