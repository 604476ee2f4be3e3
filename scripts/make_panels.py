"""Held-out session panels in the exact format of the public set.

    python -m scripts.make_panels --panel popmatched      # -> data/panels/popmatched.jsonl
    python -m scripts.make_panels --all                   # all three panels
    python -m scripts.make_panels --panel uniform --out /tmp/u.jsonl --seed 7

Every row has the public set's fields, in its key order and JSON spelling
(`category_bucket`, `difficulty_bucket`, `ground_truth.parent_asin`,
`sample_id`, `scenario_type`, `user_profile`), one object a line.

Panels
------
- `popmatched` (800 sessions, ids `pop_0001`...): targets whose
  `rating_number` follows the public targets' distribution.  The public
  targets' review counts are cut into 20 quantile bins (10 public targets a
  bin; bin b holds the values in [cut_b, cut_b+1)); each bin gets
  800 * (public share of the bin) targets, drawn without replacement from the
  catalog products in the same range.  A bin that runs short gives all it
  has and its deficit moves down to the next lower bin (on the proxy only
  the bin [41,917, 52,150) does: 37 eligible products for 40, so the bin
  below gets 43).
- `uniform` (1,000 sessions, `uni_0001`...): targets drawn uniformly from the
  whole catalog, i.e. mostly the long tail (median about 77 reviews on the
  proxy, against about 6,600 for the public targets).
- `realrows` (`real_0001`...): every row of `catalog_subset.jsonl` that is
  not a public target (1,000 on the proxy), i.e. the real Amazon rows of the
  proxy catalog and none of its synthetic ones.

Rules shared by all panels
--------------------------
- Targets are never public-set targets, are unique within a panel, and are
  products of the catalog that the evaluator can play: a non-empty
  `parent_asin` without surrounding whitespace (recommendations are stripped,
  so such an id could never be hit) whose intent card and coarse category
  derive without error.
- Scenarios: 40 % buying, 40 % browsing, 15 % intent_override, 5 % boundary,
  exactly by count (largest remainder when N is not a multiple of 20), in a
  seeded random order.
- `user_profile`: a public row's profile, drawn with replacement (seeded), so
  profile frequencies follow the public set.
- `difficulty_bucket` is a function of the scenario alone, as in all 200
  public rows: buying -> easy, browsing -> medium, boundary -> medium,
  intent_override -> hard.
- `category_bucket` is `"clothing"` for every row.  All 200 public rows say
  `clothing` whatever the target's category path: women's and men's clothing
  (97 + 19 + 7 novelty), but also shoes (38), jewelry (11), watches (5),
  luggage and bags (11), even the one target whose top-level category is
  `Shoe, Jewelry & Watch Accessories`.  The bucket names the dataset
  (Amazon Reviews 2023 `Clothing_Shoes_and_Jewelry`), not the target's shelf.
  The script warns if the public set it reads breaks either rule.
- Deterministic: one `random.Random` seeded with the string
  `make_panels:<panel>:<seed>`, candidates taken in sorted order, no set or
  dict iteration order involved, so the bytes are the same on every run and
  for any PYTHONHASHSEED.
"""
from __future__ import annotations

import argparse
import bisect
import json
import random
import sys
from collections import Counter
from pathlib import Path

import contest as P
from evaluator.data import PROJECT_ROOT, SHARED_DIR, load_catalog, read_jsonl, resolve_catalog, resolve_dataset

PANELS: dict[str, dict] = {
    "popmatched": {"prefix": "pop", "size": 800},
    "uniform": {"prefix": "uni", "size": 1000},
    "realrows": {"prefix": "real", "size": None},  # all eligible real rows
}
DEFAULT_SEED = 2026
POP_BINS = 20
SCENARIO_WEIGHTS: tuple[tuple[str, int], ...] = (
    ("buying", 40), ("browsing", 40), ("intent_override", 15), ("boundary", 5),
)
DIFFICULTY = {"buying": "easy", "browsing": "medium", "intent_override": "hard", "boundary": "medium"}
CATEGORY_BUCKET = "clothing"
QUANTILES = (0.0, 0.10, 0.25, 0.50, 0.75, 0.90, 1.0)


def rating_number(p: dict) -> int:
    """The popularity signal; anything but a non-negative int counts as 0."""
    n = p.get("rating_number")
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else 0


def playable(pid: str, p: dict) -> bool:
    """A product the evaluator can use as a target without surprises."""
    if not isinstance(pid, str) or not pid or pid != pid.strip():
        return False
    try:
        P.intent_card(p)
        P.coarse_category(p.get("categories"))
    except Exception:
        return False
    return True


def scenario_counts(n: int) -> dict[str, int]:
    """40/40/15/5 of n, exact by largest remainder (ties in scenario order)."""
    total = sum(w for _, w in SCENARIO_WEIGHTS)
    base = {s: n * w // total for s, w in SCENARIO_WEIGHTS}
    left = n - sum(base.values())
    order = sorted(range(len(SCENARIO_WEIGHTS)),
                   key=lambda i: (-(n * SCENARIO_WEIGHTS[i][1] % total), i))
    for i in order[:left]:
        base[SCENARIO_WEIGHTS[i][0]] += 1
    return base


def candidate_pool(catalog: dict[str, dict], exclude: set[str]) -> list[str]:
    """Sorted ids of the catalog products that are not excluded (playability is checked on draw)."""
    return sorted(pid for pid in catalog if pid not in exclude)


def draw(ids: list[str], k: int, catalog: dict[str, dict], rng: random.Random) -> list[str]:
    """Up to k distinct playable ids, uniformly at random (seeded) from `ids`.

    The ids are shuffled and walked in order, so only the products actually
    drawn (plus the rare unplayable ones skipped) pay for the playability test.
    """
    order = list(ids)
    rng.shuffle(order)
    out: list[str] = []
    for pid in order:
        if len(out) >= k:
            break
        if playable(pid, catalog[pid]):
            out.append(pid)
    return out


def popmatched_targets(catalog: dict[str, dict], pool: list[str], public_targets: list[str],
                       size: int, rng: random.Random) -> list[str]:
    """Quantile-bin stratified sample matching the public targets' rating_number."""
    ref = sorted(rating_number(catalog[t]) for t in public_targets if t in catalog)
    if not ref:
        raise SystemExit("popmatched: no public target is in the catalog, nothing to match")
    m = len(ref)
    nbins = min(POP_BINS, m)
    cuts = sorted({ref[(i * m) // nbins] for i in range(1, nbins)})

    def bin_of(v: int) -> int:
        return bisect.bisect_right(cuts, v)

    nb = len(cuts) + 1
    ref_counts = Counter(bin_of(v) for v in ref)
    # largest-remainder allocation of `size` over the bins, proportional to the public counts
    quota = {b: size * ref_counts[b] // m for b in range(nb)}
    left = size - sum(quota.values())
    for b in sorted(range(nb), key=lambda b: (-(size * ref_counts[b] % m), b))[:left]:
        quota[b] += 1
    members: dict[int, list[str]] = {b: [] for b in range(nb)}
    for pid in pool:  # pool is sorted, so every bin list is sorted too
        members[bin_of(rating_number(catalog[pid]))].append(pid)
    chosen: list[str] = []
    deficit = 0
    for b in reversed(range(nb)):
        want = quota[b] + deficit
        taken = draw(members[b], want, catalog, rng)
        deficit = want - len(taken)
        chosen.extend(taken)
    if deficit:
        raise SystemExit(f"popmatched: catalog too small, {deficit} target(s) short")
    return chosen


def build_panel(name: str, catalog: dict[str, dict], public_rows: list[dict],
                subset_ids: list[str] | None = None, seed: int = DEFAULT_SEED) -> list[dict]:
    """The rows of one panel (deterministic for a given catalog, public set and seed)."""
    spec = PANELS[name]
    rng = random.Random(f"make_panels:{name}:{seed}")
    public_targets = [str(r["ground_truth"]["parent_asin"]) for r in public_rows]
    public_set = set(public_targets)
    if name == "realrows":
        if subset_ids is None:
            raise ValueError("realrows needs the ids of catalog_subset.jsonl")
        targets = []
        for pid in dict.fromkeys(subset_ids):  # file order, first occurrence
            if pid not in public_set and pid in catalog and playable(pid, catalog[pid]):
                targets.append(pid)
    else:
        pool = candidate_pool(catalog, public_set)
        if name == "popmatched":
            targets = popmatched_targets(catalog, pool, public_targets, spec["size"], rng)
        else:
            targets = draw(pool, spec["size"], catalog, rng)
            if len(targets) < spec["size"]:
                raise SystemExit(f"{name}: only {len(targets)} eligible products, {spec['size']} needed")
    rng.shuffle(targets)
    scenarios = [s for s, k in scenario_counts(len(targets)).items() for _ in range(k)]
    rng.shuffle(scenarios)
    profiles = [r["user_profile"] for r in public_rows]
    rows = []
    for i, (pid, scenario) in enumerate(zip(targets, scenarios), 1):
        rows.append({
            "category_bucket": CATEGORY_BUCKET,
            "difficulty_bucket": DIFFICULTY[scenario],
            "ground_truth": {"parent_asin": pid},
            "sample_id": f"{spec['prefix']}_{i:04d}",
            "scenario_type": scenario,
            "user_profile": rng.choice(profiles),
        })
    return rows


def render(rows: list[dict]) -> bytes:
    """The JSONL bytes, spelled like public_set.jsonl (sorted keys, ASCII, LF)."""
    return "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows).encode("utf-8")


def quantiles(values: list[int]) -> list[int]:
    v = sorted(values)
    return [v[int(q * (len(v) - 1))] for q in QUANTILES] if v else []


def check_public_rules(public_rows: list[dict]) -> list[str]:
    """Warnings when the public set breaks the bucket rules this script mirrors."""
    warnings = []
    buckets = Counter(r.get("category_bucket") for r in public_rows)
    if set(buckets) != {CATEGORY_BUCKET}:
        warnings.append(f"public category_bucket values {dict(buckets)} differ from {CATEGORY_BUCKET!r} alone")
    pairs = Counter((r.get("scenario_type"), r.get("difficulty_bucket")) for r in public_rows)
    odd = {k: v for k, v in pairs.items() if DIFFICULTY.get(k[0]) != k[1]}
    if odd:
        warnings.append(f"public scenario/difficulty pairs outside the rule: {odd}")
    return warnings


def summary_lines(name: str, rows: list[dict], catalog: dict[str, dict], public_rows: list[dict]) -> list[str]:
    counts = Counter(r["scenario_type"] for r in rows)
    mix = ", ".join(f"{s} {counts.get(s, 0)}" for s, _ in SCENARIO_WEIGHTS)
    tq = quantiles([rating_number(catalog[r["ground_truth"]["parent_asin"]]) for r in rows])
    pq = quantiles([rating_number(catalog[r["ground_truth"]["parent_asin"]]) for r in public_rows
                    if r["ground_truth"]["parent_asin"] in catalog])
    qs = "/".join(f"p{int(q * 100)}" for q in QUANTILES)
    return [
        f"{name}: {len(rows)} sessions ({mix})",
        f"  rating_number {qs}: targets {tq}",
        f"  {' ' * len('rating_number ' + qs)}  public  {pq}",
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.make_panels", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    which = ap.add_mutually_exclusive_group(required=True)
    which.add_argument("--panel", choices=sorted(PANELS), help="the panel to write")
    which.add_argument("--all", action="store_true", help="write all three panels")
    ap.add_argument("--catalog", help="catalog JSONL (default: $CATALOG_PATH, data/catalog.jsonl, "
                                      "../shared/techjam/catalog_proxy.jsonl)")
    ap.add_argument("--public", help="public set JSONL (default: data/public_set.jsonl, ../shared/techjam/public_set.jsonl)")
    ap.add_argument("--subset", default=str(SHARED_DIR / "catalog_subset.jsonl"),
                    help="the real rows, for --panel realrows (default %(default)s)")
    ap.add_argument("--out", help="output file (with --all: output directory); default data/panels/<name>.jsonl")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed (default %(default)s)")
    args = ap.parse_args(argv)

    try:
        catalog_path = resolve_catalog(args.catalog)
        public_path = resolve_dataset(args.public)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    names = sorted(PANELS, key=list(PANELS).index) if args.all else [args.panel]
    subset_ids = None
    if "realrows" in names:
        if not Path(args.subset).is_file():
            print(f"error: catalog subset not found: {args.subset}", file=sys.stderr)
            return 2
        subset_ids = [str(r.get("parent_asin")) for r in read_jsonl(args.subset)]
    catalog = load_catalog(catalog_path)
    public_rows = read_jsonl(public_path)
    for w in check_public_rules(public_rows):
        print(f"warning: {w}", file=sys.stderr)
    print(f"catalog {catalog_path} ({len(catalog)} products); public set {public_path} ({len(public_rows)} sessions);"
          f" seed {args.seed}")
    for name in names:
        if args.out and args.all:
            out = Path(args.out) / f"{name}.jsonl"
        elif args.out:
            out = Path(args.out)
        else:
            out = PROJECT_ROOT / "data" / "panels" / f"{name}.jsonl"
        rows = build_panel(name, catalog, public_rows, subset_ids, args.seed)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(render(rows))
        print("\n".join(summary_lines(name, rows, catalog, public_rows)))
        print(f"  wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
