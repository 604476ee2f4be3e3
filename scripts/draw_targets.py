"""Draw development targets for cards and scripts by a seeded rule (PERSONAS.md "Which targets").

    python -m scripts.draw_targets            # -> data/personas/targets.json

Long-tail targets are synthetic rows of the proxy catalog (rows whose
`parent_asin` is not in `catalog_subset.jsonl`), drawn uniformly, without
regard to popularity: the real non-public rows are never drawn (they are
reserved for held-out measurement).  Public targets for scripts are drawn from
the public set.  Every draw is `random.Random(SEED + name)` over sorted ids, so
the same files give the same targets.

Sets written (ids only; the rows stay in the catalog):
- `longtail_persona`: 100 synthetic rows for PERSONAS.md-style cards;
- `longtail_terse`: 100 more for terse phone-style cards;
- `script_synthetic`: 100 more for scripted conversations;
- `script_public`: 100 public-set targets for scripted conversations;
- a second wave written later by other writers (`longtail2_persona`,
  `longtail2_terse`, `script2_synthetic`: 100 synthetic rows each, and
  `script2_public`: the 100 public targets `script_public` left);
- a third wave by others again (`longtail3_persona`, `longtail3_terse`,
  `script3_synthetic`: 100 synthetic rows each);
- a fourth wave (`longtail4_persona`, `longtail4_terse`, `script4_synthetic`:
  100 synthetic rows each);
- `terse_public`: every public-set target, for terse phone-style cards (real
  rows, where every earlier terse set is synthetic), in a seeded order;
- a fifth wave of short openings that name only the kind of product
  (`script5_synthetic`, `terse5_synthetic`: 50 synthetic rows each;
  `script5_public`, `terse5_public`: 50 public targets each, each drawn alone,
  so they may share targets with each other and with earlier sets);
- a sixth wave (`longtail6_persona`, `longtail6_terse`, `script6_synthetic`: 100 synthetic rows each);
- a seventh wave (`longtail7_persona`, `longtail7_terse`, `script7_synthetic`: 100 synthetic rows each);
- an eighth wave (`longtail8_persona`, `longtail8_terse`, `script8_synthetic`: 100 synthetic rows each);
- a ninth wave (`longtail9_persona`, `longtail9_terse`, `script9_synthetic`: 100 synthetic rows each);
- a tenth wave (`longtail10_persona`, `longtail10_terse`, `script10_synthetic`: 100 synthetic rows each).
The synthetic sets are disjoint; each wave's sets follow the earlier ones in
the same shuffled order, so adding a wave leaves the earlier draws as they were.
"""
from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from contest.jsonl import iter_jsonl, read_jsonl
from contest.paths import PROJECT_ROOT, resolve_catalog, resolve_dataset

SEED = "longtail-targets-2026"
SYNTHETIC_SETS: tuple[tuple[str, int], ...] = (("longtail_persona", 100), ("longtail_terse", 100),
                                               ("script_synthetic", 100), ("longtail2_persona", 100),
                                               ("longtail2_terse", 100), ("script2_synthetic", 100),
                                               ("longtail3_persona", 100), ("longtail3_terse", 100),
                                               ("script3_synthetic", 100), ("longtail4_persona", 100),
                                               ("longtail4_terse", 100), ("script4_synthetic", 100),
                                               ("script5_synthetic", 50), ("terse5_synthetic", 50),
                                               ("longtail6_persona", 100), ("longtail6_terse", 100),
                                               ("script6_synthetic", 100), ("longtail7_persona", 100),
                                               ("longtail7_terse", 100), ("script7_synthetic", 100),
                                               ("longtail8_persona", 100), ("longtail8_terse", 100),
                                               ("script8_synthetic", 100), ("longtail9_persona", 100),
                                               ("longtail9_terse", 100), ("script9_synthetic", 100),
                                               ("longtail10_persona", 100), ("longtail10_terse", 100),
                                               ("script10_synthetic", 100))
PUBLIC_SETS: tuple[tuple[str, int], ...] = (("script_public", 100),)
PUBLIC_REST = "script2_public"          # the public targets no earlier public set drew
PUBLIC_ALL = ("terse_public",)           # every public target, each set in its own seeded order
PUBLIC_MORE: tuple[tuple[str, int], ...] = (("script5_public", 50), ("terse5_public", 50))  # drawn each alone
OUT = PROJECT_ROOT / "data" / "personas" / "targets.json"


def subset_path(catalog: Path) -> Path:
    """`catalog_subset.jsonl` beside the catalog, else beside the shared files."""
    for candidate in (catalog.parent / "catalog_subset.jsonl",
                      PROJECT_ROOT.parent / "shared" / "techjam" / "catalog_subset.jsonl"):
        if candidate.exists():
            return candidate
    raise FileNotFoundError("catalog_subset.jsonl not found beside the catalog or in ../shared/techjam/")


def draw(synthetic: list[str], public: list[str]) -> dict[str, list[str]]:
    """Each set's targets, in draw order; synthetic sets disjoint."""
    out: dict[str, list[str]] = {}
    pool = sorted(synthetic)
    random.Random(SEED).shuffle(pool)
    start = 0
    for name, n in SYNTHETIC_SETS:
        out[name] = pool[start:start + n]
        start += n
    ids = sorted(set(public))
    for name, n in PUBLIC_SETS:
        out[name] = random.Random(SEED + name).sample(ids, n)
    drawn = {i for name, _ in PUBLIC_SETS for i in out[name]}
    out[PUBLIC_REST] = [i for i in ids if i not in drawn]
    random.Random(SEED + PUBLIC_REST).shuffle(out[PUBLIC_REST])
    for name, n in PUBLIC_MORE:
        out[name] = random.Random(SEED + name).sample(ids, n)
    for name in PUBLIC_ALL:
        out[name] = list(ids)
        random.Random(SEED + name).shuffle(out[name])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.draw_targets", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--catalog")
    ap.add_argument("--dataset")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    catalog = resolve_catalog(args.catalog)
    real = {row["parent_asin"] for row in iter_jsonl(subset_path(catalog))}
    synthetic = [row["parent_asin"] for row in iter_jsonl(catalog) if row.get("parent_asin") not in real]
    public = [row["ground_truth"]["parent_asin"] for row in read_jsonl(resolve_dataset(args.dataset))]
    sets = draw(synthetic, public)
    Path(args.out).write_text(json.dumps({"seed": SEED, **sets}, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: " + ", ".join(f"{k} {len(v)}" for k, v in sets.items()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
