"""How far refitting the people model's trees moves the measures, and where the committed fit lies among the refits.

    python -m scripts.refit_spread --pools P [--fits 6] [--workers 2] [--out FILE] [--param KEY=VALUE ...]
                                   [--rounds N]

`P` holds pools recorded by `python -m scripts.people_replay record` (the tune halves of
`scripts.fit_people.TUNE_SETS` among them).  The trees that correct the fitted logit
(`starter.people.correction`) are fitted `--fits` times on the recorded tune halves: fit 0 on the cards as
they are, fit k on the cards each weighted again by a Poisson(1) draw (seed k: a bootstrap of the cards that
keeps every turn of a card together).  Every recorded set is then replayed with each fit, with their average
(the bag) and with the committed trees, by the agent's own ranking and commit rule
(`scripts.people_replay`).  The report gives, per group of halves (tune, confirm, each wave never fitted on,
others), the change against the committed trees of the session scores summed over the group's halves and of the mean
reciprocal rank per turn (turns 1-6), for each fit, for their mean and standard deviation, and for the bag.

Why: a session turns on the few turns where its target first reaches the top, so trees refitted on slightly
other data move a group's sum of session scores by a few hundredths.  A change judged against one refit
judges that refit's draw; its spread says how large a change must be to be one.  The committed trees are
fitted on the tune cards played without any correction (`scripts.fit_people`); the pools here were played with
it, so fit 0 differs from them where what was shown changes what a later turn reads (the prices shown).
"""
from __future__ import annotations

import argparse
import pickle
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from contest.jsonl import read_jsonl
from scripts import fit_correction
from scripts.fit_people import PERSONAS, SIGNS, TUNE_SETS, card_weights, live_agent
from scripts.people_replay import HELD_OUT_WAVES, half_group

# Report groups in order: the fitted sets' halves, each wave never fitted on, then the rest (`half_group`).
GROUPS = (("tune", "tune halves"), ("confirm", "confirm halves"), *((w, w) for w in HELD_OUT_WAVES.values()),
          ("other", "others"))
TURNS = 6


def multipliers(sample_ids: list[str], seed: int) -> list[float]:
    """Each card's bootstrap weight: 1 for every card under seed 0, else a Poisson(1) draw per card, drawn in the
    order of the sorted sample ids (so a card's draw does not depend on the order it is read in)."""
    if seed == 0:
        return [1.0] * len(sample_ids)
    draws = np.random.default_rng(seed).poisson(1.0, len(sample_ids))
    of = dict(zip(sorted(sample_ids), draws.tolist()))
    return [float(of[s]) for s in sample_ids]


def _load(path: Path) -> list:
    """Recorded sessions (`scripts.people_replay.Session`: the pickle imports that module by name)."""
    return pickle.loads(path.read_bytes())


def fit_one(job: tuple[Path, int, dict, int]) -> list[dict]:
    """The trees fitted on the tune halves of `pools` with the cards weighted by `multipliers(seed)` on top of
    the committed logit (a process of its own under --workers)."""
    from starter.people.features import FEATURES
    from starter.people.ranking import load_weights
    pools, seed, overrides, rounds = job
    agent = live_agent(0)
    cards = [c for name in TUNE_SETS for c in read_jsonl(PERSONAS / f"{name}.jsonl")]
    base = dict(zip((c["sample_id"] for c in cards), card_weights(cards)))
    sessions = [s for name in TUNE_SETS for s in _load(pools / f"{name}.pkl")]
    ids = [s.sample_id for s in sessions]
    weight = [base[i] * m for i, m in zip(ids, multipliers(ids, seed))]
    x, labels, groups, init, rows = fit_correction.session_rows(agent.index, sessions, load_weights(),
                                                                agent.settings.people, weight)
    return fit_correction.fit_trees(x, labels, groups, init, [SIGNS.get(f, 0) for f in FEATURES], rows,
                                    overrides, rounds)


def parse_params(items: list[str]) -> dict[str, float]:
    """{key: number} of "KEY=VALUE" items, each key one of `fit_correction.PARAMS` (a misspelt key would be
    passed to LightGBM and silently ignored)."""
    out: dict[str, float] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or key not in fit_correction.PARAMS:
            raise ValueError(f"--param {item!r}: expected KEY=VALUE with KEY one of {sorted(fit_correction.PARAMS)}")
        number = float(value)
        out[key] = int(number) if number.is_integer() else number
    return out


def bagged(fits: list[list[dict]]) -> list[dict]:
    """One correction that scores the mean of the fits: every tree of every fit, its leaves divided by their number."""
    return [{**t, "leaf": [v / len(fits) for v in t["leaf"]]} for trees in fits for t in trees]


def measures(index, settings, sessions: list, correction) -> tuple[float, float]:
    """(the sessions' TechnicalScore, the mean reciprocal rank over their people turns 1..TURNS) under the
    committed logit and `correction`."""
    from scripts.people_replay import replay, summary, turn_quality
    from starter.people.ranking import load_weights
    weights = load_weights()
    score = summary([replay(index, s, weights, settings, correction) for s in sessions])["score"]
    return score, turn_quality(index, sessions, weights, settings, TURNS, correction)["mrr"]


def evaluate(pools: Path, corrections: dict[str, object]) -> dict[str, dict[str, tuple[float, float]]]:
    """{set: {name: measures}} of every recorded set under each named correction."""
    from tqdm import tqdm
    agent = live_agent(0)
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for path in tqdm(sorted(pools.glob("*.pkl")), unit="set", file=sys.stderr):
        sessions = _load(path)
        out[path.stem] = {name: measures(agent.index, agent.settings, sessions, c) for name, c in corrections.items()}
    return out


def changes(table: dict[str, dict[str, tuple[float, float]]], name: str) -> dict[str, tuple[float, float]]:
    """Per group: (the sum over its halves of the session score's change, the mean over its halves of the
    per-turn MRR's change), correction `name` against the committed one."""
    out = {}
    for group, _ in GROUPS:
        sets = [s for s in table if half_group(s) == group]
        if sets:
            out[group] = (sum(table[s][name][0] - table[s]["committed"][0] for s in sets),
                          sum(table[s][name][1] - table[s]["committed"][1] for s in sets) / len(sets))
    return out


def report(table: dict[str, dict[str, tuple[float, float]]], fits: int, command: str) -> str:
    """The report's text: one line per fit, their mean and standard deviation, and the bag."""
    groups = [g for g, _ in GROUPS if any(half_group(s) == g for s in table)]
    head = " | ".join(f"{dict(GROUPS)[g]}: sessions, MRR per turn" for g in groups)
    lines = [command, "", f"changes against the committed trees; {head}", ""]
    rows = {f"fit {k}": changes(table, f"fit {k}") for k in range(fits)}
    for name, got in rows.items():
        lines.append(f"{name:>10}  " + "  ".join(f"{got[g][0]:+.4f} {got[g][1]:+.4f}" for g in groups))
    stacked = np.array([[v for g in groups for v in got[g]] for got in rows.values()])
    lines.append(f"{'mean':>10}  " + "  ".join(f"{a:+.4f} {b:+.4f}" for a, b in stacked.mean(0).reshape(-1, 2)))
    if fits > 1:
        sd = stacked.std(0, ddof=1).reshape(-1, 2)
        lines.append(f"{'sd':>10}  " + "  ".join(f"{a:7.4f} {b:7.4f}" for a, b in sd))
    bag = changes(table, "bag")
    lines.append(f"{'bag':>10}  " + "  ".join(f"{bag[g][0]:+.4f} {bag[g][1]:+.4f}" for g in groups))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.refit_spread", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pools", type=Path, required=True, help="folder of pools recorded by people_replay record")
    ap.add_argument("--fits", type=int, default=6, help="refits: fit 0 on the cards as they are, then bootstraps")
    ap.add_argument("--workers", type=int, default=1, help="refits at once, one process each")
    ap.add_argument("--out", type=Path, help="also write the report here")
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="refit with this LightGBM parameter in place of fit_correction.PARAMS' (a number)")
    ap.add_argument("--rounds", type=int, default=None, help="refit with this many trees (default: ROUNDS)")
    args = ap.parse_args(argv)
    try:
        overrides = parse_params(args.param)
    except ValueError as e:
        ap.error(str(e))
    missing = [n for n in TUNE_SETS if not (args.pools / f"{n}.pkl").is_file()]
    if missing or args.fits < 1:
        ap.error(f"--pools lacks the tune halves {missing}" if missing else "--fits must be at least 1")
    from tqdm import tqdm

    from starter.people.correction import from_trees, load_correction
    rounds = args.rounds or fit_correction.ROUNDS
    jobs = [(args.pools, k, overrides, rounds) for k in range(args.fits)]
    with ProcessPoolExecutor(max_workers=max(1, args.workers)) as pool:
        fits = list(tqdm(pool.map(fit_one, jobs), total=len(jobs), unit="fit", file=sys.stderr))
    corrections = {"committed": load_correction(), "bag": from_trees(bagged(fits))}
    corrections.update({f"fit {k}": from_trees(t) for k, t in enumerate(fits)})
    text = report(evaluate(args.pools, corrections), args.fits, "python -m scripts.refit_spread " + " ".join(
        argv if argv is not None else sys.argv[1:]))
    print(text, end="")
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
