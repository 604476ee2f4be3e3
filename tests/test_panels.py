"""scripts/make_panels.py on the real shared data (skipped when ../shared/techjam is absent)."""
from __future__ import annotations

import bisect
import json
import os
import shutil
import subprocess
import sys
from collections import Counter

import pytest

from evaluator.data import PROJECT_ROOT, SHARED_DIR, load_catalog, read_jsonl
from evaluator.local_evaluator import check_targets
from scripts import make_panels as M

CATALOG = SHARED_DIR / "catalog_proxy.jsonl"
PUBLIC = SHARED_DIR / "public_set.jsonl"
SUBSET = SHARED_DIR / "catalog_subset.jsonl"
MIX = {"popmatched": (320, 320, 120, 40), "uniform": (400, 400, 150, 50), "realrows": (400, 400, 150, 50)}


@pytest.fixture(scope="module")
def data():
    missing = [p.name for p in (CATALOG, PUBLIC, SUBSET) if not p.is_file()]
    if missing:
        pytest.skip(f"shared TechJam data not found in {SHARED_DIR} (missing: {', '.join(missing)})")
    return {"catalog": load_catalog(CATALOG), "public": read_jsonl(PUBLIC),
            "subset": [r["parent_asin"] for r in read_jsonl(SUBSET)]}


@pytest.fixture(scope="module")
def panels(data):
    return {name: M.build_panel(name, data["catalog"], data["public"], data["subset"]) for name in M.PANELS}


def public_targets(data) -> set[str]:
    return {r["ground_truth"]["parent_asin"] for r in data["public"]}


def test_render_spells_rows_like_the_public_file(data):
    assert M.render(data["public"]) == PUBLIC.read_bytes()


def test_rows_have_the_public_format(data, panels):
    keys = set(data["public"][0])
    profiles = {json.dumps(r["user_profile"], sort_keys=True) for r in data["public"]}
    for name, rows in panels.items():
        prefix = M.PANELS[name]["prefix"]
        assert [r["sample_id"] for r in rows] == [f"{prefix}_{i:04d}" for i in range(1, len(rows) + 1)]
        for r in rows:
            assert set(r) == keys
            assert set(r["ground_truth"]) == {"parent_asin"}
            assert json.dumps(r["user_profile"], sort_keys=True) in profiles
            assert r["category_bucket"] == "clothing"
            assert r["difficulty_bucket"] == M.DIFFICULTY[r["scenario_type"]]
        lines = M.render(rows).decode("utf-8").splitlines()
        assert [json.loads(line) for line in lines] == rows


def test_bucket_rules_mirror_the_public_set(data):
    assert M.check_public_rules(data["public"]) == []
    derived = {r["scenario_type"]: r["difficulty_bucket"] for r in data["public"]}
    assert derived == M.DIFFICULTY
    assert {r["category_bucket"] for r in data["public"]} == {M.CATEGORY_BUCKET}
    odd = [dict(r) for r in data["public"][:3]]
    odd[0]["category_bucket"] = "shoes"
    odd[1]["difficulty_bucket"] = "hard" if odd[1]["scenario_type"] != "intent_override" else "easy"
    assert len(M.check_public_rules(odd)) == 2


def test_targets_unique_in_catalog_and_never_public(data, panels):
    public = public_targets(data)
    for name, rows in panels.items():
        targets = [r["ground_truth"]["parent_asin"] for r in rows]
        assert len(set(targets)) == len(targets), name
        assert not set(targets) & public, name
        assert all(t in data["catalog"] and M.playable(t, data["catalog"][t]) for t in targets), name
        check_targets(rows, data["catalog"])   # the evaluator accepts the panel


def test_sizes_and_exact_scenario_mix(data, panels):
    assert len(panels["popmatched"]) == 800
    assert len(panels["uniform"]) == 1000
    for name, rows in panels.items():
        counts = Counter(r["scenario_type"] for r in rows)
        assert tuple(counts[s] for s in ("buying", "browsing", "intent_override", "boundary")) == MIX[name]
        # shuffled, not in blocks
        assert len({r["scenario_type"] for r in rows[:60]}) >= 3


def test_scenario_counts_for_any_n():
    assert M.scenario_counts(800) == {"buying": 320, "browsing": 320, "intent_override": 120, "boundary": 40}
    for n in range(0, 121):
        c = M.scenario_counts(n)
        assert sum(c.values()) == n
        for s, w in M.SCENARIO_WEIGHTS:
            assert abs(c[s] - n * w / 100) < 1


def test_realrows_are_every_real_non_public_row(data, panels):
    expected = set(data["subset"]) - public_targets(data)
    assert {r["ground_truth"]["parent_asin"] for r in panels["realrows"]} == expected
    assert len(expected) == 1000


def test_popmatched_follows_the_public_popularity(data, panels):
    cat = data["catalog"]
    pub = sorted(M.rating_number(cat[t]) for t in public_targets(data))
    pop = sorted(M.rating_number(cat[r["ground_truth"]["parent_asin"]]) for r in panels["popmatched"])
    uni = sorted(M.rating_number(cat[r["ground_truth"]["parent_asin"]]) for r in panels["uniform"])

    def q(v, x):
        return v[int(x * (len(v) - 1))]
    for x in (0.1, 0.25, 0.5, 0.75, 0.9):
        assert 0.8 <= q(pop, x) / q(pub, x) <= 1.25, x
    assert q(uni, 0.5) * 10 < q(pub, 0.5)       # the uniform panel is the long tail
    # stratified: each public quantile bin (10 public targets) gets 40 panel targets; a bin with
    # fewer eligible products gives all it has and its deficit goes to the next lower bin
    cuts = sorted({pub[(i * len(pub)) // M.POP_BINS] for i in range(1, M.POP_BINS)})
    got = Counter(bisect.bisect_right(cuts, v) for v in pop)
    quota = Counter({b: 4 * n for b, n in Counter(bisect.bisect_right(cuts, v) for v in pub).items()})
    public = public_targets(data)
    eligible = Counter(bisect.bisect_right(cuts, M.rating_number(p)) for pid, p in cat.items() if pid not in public)
    assert len(quota) == M.POP_BINS and sum(got.values()) == 800
    carried = 0
    for b in sorted(quota, reverse=True):
        assert got[b] == min(quota[b] + carried, eligible[b]), b
        carried = quota[b] + carried - got[b]
    assert sum(abs(got[b] - quota[b]) for b in quota) <= 10


def test_cli_is_deterministic_for_any_hash_seed(tmp_path, data, panels):
    outs = []
    for hashseed in ("0", "4242"):
        out = tmp_path / f"h{hashseed}"
        env = {**os.environ, "PYTHONHASHSEED": hashseed}
        env.pop("CATALOG_PATH", None)
        proc = subprocess.run([sys.executable, "-m", "scripts.make_panels", "--all", "--out", str(out),
                               "--catalog", str(CATALOG), "--public", str(PUBLIC), "--subset", str(SUBSET)],
                              cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "popmatched: 800 sessions (buying 320, browsing 320, intent_override 120, boundary 40)" in proc.stdout
        outs.append({name: (out / f"{name}.jsonl").read_bytes() for name in M.PANELS})
    assert outs[0] == outs[1]
    assert outs[0] == {name: M.render(rows) for name, rows in panels.items()}
    for name in M.PANELS:   # another seed, another panel
        other = M.build_panel(name, data["catalog"], data["public"], data["subset"], seed=M.DEFAULT_SEED + 1)
        assert M.render(other) != outs[0][name]


def test_panel_output_is_git_ignored():
    git = shutil.which("git")
    if git is None or not (PROJECT_ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    proc = subprocess.run([git, "check-ignore", "-q", "data/panels/popmatched.jsonl"], cwd=PROJECT_ROOT)
    assert proc.returncode == 0
