"""Fit the people model: a conditional logit of the target against each turn's candidates, then trees on top.

    python -m scripts.fit_people         # -> starter/people/weights.json, trees.json, evaluation_results/people/fit.md
    python -m scripts.fit_people --check # refit and compare with the committed files (exit 1 if one differs)
    [--workers N]                        # processes that play the cards (default 2; the files do not change)

Data: the tune halves of every development card set at once (public targets,
long tail, terse, scripts), so that no single target distribution decides the
prior: the cards for public targets and the cards for the long tail weigh half
the likelihood each (`card_weights`), however many cards each has.
Each card is played with the agent (weights from the previous round), and
every people-path turn contributes its candidate pool's feature rows and the
target's row (a turn whose pool misses the target contributes nothing, and is
counted).  The weights maximise the summed log softmax probability of the
target (the model's fixed terms, `ranking.fixed_terms`, enter as offsets),
by Newton's method with a weak ridge (`RIDGE`, hand-set, for identifiability
of features that rarely vary).  Two rounds: the second plays with the first
round's weights, so the turns it learns from are the ones the fitted agent
meets.  Standard errors are the square roots of the inverse Hessian's
diagonal.  Then the trees that correct the logit (`scripts.fit_correction`).
Deterministic: the same cards and code give the same files.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from contest.jsonl import read_jsonl
from contest.paths import PROJECT_ROOT

PERSONAS = PROJECT_ROOT / "data" / "personas"
TUNE_SETS = ("tune", "longtail_tune", "terse_tune", "scripts_tune", "longtail2_tune", "terse2_tune", "scripts2_tune",
             "longtail3_tune", "terse3_tune", "scripts3_tune", "tersep_tune")
REPORT = PROJECT_ROOT / "evaluation_results" / "people" / "fit.md"
RIDGE = 0.01           # hand-set: a weak Gaussian prior on every weight, for features that rarely vary
ROUNDS = 2
# Fixed signs: agreement never lowers a candidate, a ruled-out word never raises it; popularity is free.
SIGNS = {"text": 1, "text_gap": 1, "type": 1, "category": 1, "details": 1, "description": 1, "last": 1,
         "opening_type": 1, "audience": 1, "negated": -1, "over_budget": -1, "under_budget": -1, "price_wish": -1,
         "colour": 1, "style": 1, "count": 1, "coverage": 1, "type_coverage": 1, "title_share": 1, "phrases": 1,
         "meaning": 1, "brand": 1}
DECIMALS = 6


@dataclass
class Turns:
    """Training turns: per turn, the pool's features, the shown offset, the target's row and the turn's weight
    in the likelihood (its card's)."""

    features: list[np.ndarray]
    offsets: list[np.ndarray]
    targets: list[int]
    missed: int = 0
    weights: list[float] = field(default_factory=list)


def live_agent(cards: int):
    """An agent that keeps `cards` sessions live, so that their states can be read after they are played."""
    from contest.paths import resolve_catalog
    from starter.agent import Agent
    saved = os.environ.get("AGENT_MAX_SESSIONS")
    os.environ["AGENT_MAX_SESSIONS"] = str(cards + 1)
    try:
        return Agent(str(resolve_catalog(None)))
    finally:
        if saved is None:
            os.environ.pop("AGENT_MAX_SESSIONS")
        else:
            os.environ["AGENT_MAX_SESSIONS"] = saved


def people_turn(agent, state, t: int):
    """Turn `t` of a played session as the people path computed it: (its candidate pool, the facts read so
    far), or None for a template turn."""
    from starter.people import ranking
    from starter.people.facts import conversation_facts, prices_shown
    from starter.reading.kinds import SessionPath
    trace = state.traces[t - 1]
    if trace.state is None or trace.state.path != SessionPath.PEOPLE:
        return None
    readings = state.readings[:t]
    brands = agent.pipeline.people.brands
    facts = conversation_facts(readings, brands, prices_shown(agent.index.products, state.shown[:t - 1]))
    return ranking.candidate_features(agent.index, readings, facts, agent.settings.people, brands,
                                      agent.pipeline.people.fits), facts


def card_weights(cards: list[dict]) -> list[float]:
    """Each card's weight in the fit: the cards for public-set targets weigh half of the whole and the cards
    for other targets (the long tail) the other half, each card alike within its half (1 each when the cards
    are all of one kind)."""
    from contest.paths import resolve_dataset
    public = {row["ground_truth"]["parent_asin"] for row in read_jsonl(resolve_dataset(None))}
    is_public = [c["ground_truth"]["parent_asin"] in public for c in cards]
    n_public = sum(is_public)
    if n_public in (0, len(cards)):
        return [1.0] * len(cards)
    half = len(cards) / 2
    return [half / n_public if p else half / (len(cards) - n_public) for p in is_public]


def collect(weights: np.ndarray, cards: list[dict], correction=None, workers: int = 1) -> Turns:
    """Play every card with `weights` (and the trees' `correction`, which then joins each turn's offsets) and
    read each people turn's pool as the agent saw it, each turn weighted by its card (`card_weights`).
    Under `workers` > 1 the cards are played in that many contiguous parts at once, one process and agent
    each, and the parts joined in card order: the same turns, in the same order, as one process plays."""
    parts = in_parts(_collect_part, cards, workers, weights, correction)
    out = Turns([], [], [])
    for part in parts:
        out.features += part.features
        out.offsets += part.offsets
        out.targets += part.targets
        out.weights += part.weights
        out.missed += part.missed
    return out


def in_parts(play, cards: list[dict], workers: int, *args) -> list:
    """`play(cards, their card weights, the first card's number, *args)` over `workers` contiguous parts of
    `cards`, each in a process of its own when there are several, the results in card order."""
    weights = card_weights(cards)
    n = max(1, min(workers, len(cards)))
    bounds = [len(cards) * k // n for k in range(n + 1)]
    jobs = [(cards[a:b], weights[a:b], a) for a, b in zip(bounds, bounds[1:])]
    if n == 1:
        return [play(*jobs[0], *args)]
    from concurrent.futures import ProcessPoolExecutor
    with ProcessPoolExecutor(max_workers=n) as pool:
        futures = [pool.submit(play, *job, *args) for job in jobs]
        return [f.result() for f in futures]


def _collect_part(cards: list[dict], weights_of_cards: list[float], first: int, weights: np.ndarray,
                  correction) -> Turns:
    """`collect` over one part of the cards, numbered from `first` (each part with an agent of its own)."""
    from evaluator.data import load_catalog_view
    from evaluator.local_evaluator import run_session
    from starter.people import ranking

    from contest.paths import resolve_catalog
    agent = live_agent(len(cards))
    settings = agent.settings.people
    agent.pipeline.people.weights = weights                   # the round's weights, this agent only
    agent.pipeline.people.correction = correction             # the fit's rounds: none, the trees come after
    view = load_catalog_view(resolve_catalog(None), {c["ground_truth"]["parent_asin"] for c in cards})
    out = Turns([], [], [])
    for k, (card, weight) in enumerate(zip(cards, weights_of_cards), first):
        run_session(agent, card, k, view)
        state = agent.sessions[f"session-{k:05d}-{card['sample_id']}"]
        target = agent.index.by_pid[card["ground_truth"]["parent_asin"]]
        for t in range(1, len(state.traces) + 1):
            got = people_turn(agent, state, t)
            if got is None:
                continue
            pool, facts = got
            where = np.flatnonzero(pool.ids == target)
            if not len(where):
                out.missed += 1
                continue
            shown = {i for s in state.shown[:t - 1] for i in s}
            out.features.append(pool.features)
            offsets = ranking.fixed_terms(agent.index, pool.ids, facts, shown, settings)
            out.offsets.append(offsets if correction is None else offsets + correction.score(pool.features))
            out.targets.append(int(where[0]))
            out.weights.append(weight)
    return out


def fit(turns: Turns, start: np.ndarray, signs: np.ndarray, ridge: float = RIDGE
        ) -> tuple[np.ndarray, np.ndarray, float]:
    """(weights, standard errors, log-likelihood) of the sign-constrained fit: every feature whose sign is
    fixed (+1: agreement never lowers a candidate; -1: never raises it) and whose free optimum breaks it is
    held at 0 and the rest refitted, until none does (an active-set loop; held weights report a standard
    error of 0)."""
    free = np.ones(len(start), dtype=bool)
    while True:
        w, se = _newton(turns, np.where(free, start, 0.0), free, ridge)
        broken = free & (signs * w < 0)
        if not broken.any():
            return w, se, log_likelihood(turns, w)
        free &= ~broken


def _newton(turns: Turns, start: np.ndarray, free: np.ndarray, ridge: float,
            steps: int = 50) -> tuple[np.ndarray, np.ndarray]:
    """Newton's method over the free weights of the ridge-penalised log-likelihood (the others stay 0)."""
    w = start.astype(np.float64).copy()
    d = len(w)
    idx = np.flatnonzero(free)
    current = _objective(turns, w, ridge)
    for _ in range(steps):
        grad = -ridge * w
        hess = -ridge * np.eye(d)
        for x, off, y, weight in zip(turns.features, turns.offsets, turns.targets, turns.weights):
            z = x @ w + off
            p = np.exp(z - z.max())
            p /= p.sum()
            mean = p @ x
            grad += weight * (x[y] - mean)
            centred = x - mean
            hess -= weight * ((centred * p[:, None]).T @ centred)
        sub = np.ix_(idx, idx)
        step = np.linalg.solve(hess[sub], grad[idx])
        # Damped: halve the step until the penalised log-likelihood does not fall (a separable feature,
        # such as a ruled-out word no target holds, would otherwise overshoot by orders of magnitude).
        for _ in range(40):
            trial = w.copy()
            trial[idx] = w[idx] - step
            value = _objective(turns, trial, ridge)
            if value >= current - 1e-9:
                break
            step = step / 2
        w, current = trial, value        # the adopted weights' objective, not computed again
        if float(np.max(np.abs(step))) < 1e-10:
            break
    se = np.zeros(d)
    se[idx] = np.sqrt(np.diag(np.linalg.inv(-hess[np.ix_(idx, idx)])))
    return w, se


def _objective(turns: Turns, w: np.ndarray, ridge: float) -> float:
    """The ridge-penalised log-likelihood Newton's method climbs."""
    return log_likelihood(turns, w) - 0.5 * ridge * float(w @ w)


def log_likelihood(turns: Turns, w: np.ndarray) -> float:
    """The weighted log-likelihood of the targets (each turn by its card's weight)."""
    total = 0.0
    for x, off, y, weight in zip(turns.features, turns.offsets, turns.targets, turns.weights):
        z = x @ w + off
        top = z.max()
        total += weight * float(z[y] - top - np.log(np.exp(z - top).sum()))
    return total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.fit_people", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="refit and compare with the committed weights file")
    ap.add_argument("--out", type=Path, help="weights file to write (default: the agent's)")
    ap.add_argument("--trees-out", type=Path, help="correction file to write (default: the agent's)")
    ap.add_argument("--workers", type=int, default=2,
                    help="processes that play the cards (the files do not depend on it; default 2)")
    args = ap.parse_args(argv)
    from starter.people.correction import TREES_FILE
    from starter.people.features import FEATURES
    from starter.people.ranking import WEIGHTS_FILE

    cards = [c for name in TUNE_SETS for c in read_jsonl(PERSONAS / f"{name}.jsonl")]
    w = _start(FEATURES)
    if not _names_match(WEIGHTS_FILE, FEATURES):
        if args.check:
            print("DIFFERS from the committed weights (they name other features)")
            return 1
        # The agent the fit plays with must load a weights file; round one replaces these anyway.
        WEIGHTS_FILE.write_text(json.dumps({"weights": dict(zip(FEATURES, w.tolist()))}) + "\n", encoding="utf-8")
        print(f"{WEIGHTS_FILE} named other features: started from the hand-set score", file=sys.stderr)
    if not _trees_match(TREES_FILE, FEATURES) and not args.check:
        # The agents the fit plays with load a correction; the logit's rounds play without it anyway.
        from scripts.fit_correction import trees_text
        TREES_FILE.write_text(trees_text([], FEATURES, 0, 0), encoding="utf-8")
    history = []
    for rnd in range(1, ROUNDS + 1):
        turns = collect(w, cards, workers=args.workers)
        w, se, ll = fit(turns, w, np.array([SIGNS.get(f, 0) for f in FEATURES], dtype=np.float64))
        w = np.round(w, DECIMALS)
        history.append((rnd, len(turns.targets), turns.missed, ll))
        print(f"round {rnd}: {len(turns.targets)} turns, {turns.missed} without the target, "
              f"log-likelihood {ll:.3f}", file=sys.stderr)
    data = {"model": "conditional logit of the target against each people turn's candidates",
            "fitted_by": "python -m scripts.fit_people",
            "data": {"sets": list(TUNE_SETS), "cards": len(cards), "turns": len(turns.targets),
                     "turns_without_target": turns.missed},
            "weights": {f: float(v) for f, v in zip(FEATURES, w)},
            "standard_errors": {f: round(float(v), DECIMALS) for f, v in zip(FEATURES, se)},
            "signs": {f: SIGNS.get(f, 0) for f in FEATURES}}
    text = json.dumps(data, indent=1) + "\n"
    trees, trees_summary = correction(cards, w, FEATURES, args.workers)
    outputs = {args.out or WEIGHTS_FILE: text, args.trees_out or TREES_FILE: trees}
    if args.check:
        same = all(path.is_file() and path.read_text(encoding="utf-8") == new for path, new in outputs.items())
        print("same as the committed weights and trees" if same else "DIFFERS from the committed weights or trees")
        return 0 if same else 1
    for path, new in outputs.items():
        path.write_text(new, encoding="utf-8")
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(report(data, history) + trees_summary, encoding="utf-8")
    print(f"wrote {', '.join(map(str, outputs))} and {REPORT}", file=sys.stderr)
    return 0


def correction(cards: list[dict], weights: np.ndarray, features: tuple[str, ...], workers: int = 1
               ) -> tuple[str, str]:
    """The trees fitted on top of the logit `weights` (`scripts.fit_correction`): the file's text and a
    paragraph for the report (the cards played by `workers` processes, as in `collect`)."""
    from scripts import fit_correction
    parts = in_parts(_rows_part, cards, workers, weights)
    x, labels, init, rows = (np.concatenate([p[k] for p in parts]) for k in (0, 1, 3, 4))
    groups = [g for p in parts for g in p[2]]
    trees = fit_correction.fit_trees(x, labels, groups, init, [SIGNS.get(f, 0) for f in features], rows)
    print(f"correction: {len(trees)} trees over {len(groups)} turns, {len(labels)} rows", file=sys.stderr)
    text = fit_correction.trees_text(trees, features, len(groups), len(labels))
    summary = (f"\nCorrection (`starter/people/trees.json`, `scripts.fit_correction`): {len(trees)} trees of at most "
               f"{fit_correction.PARAMS['num_leaves']} leaves, fitted on top of these weights over {len(groups)} "
               f"turns ({len(labels)} candidate rows) of the tune cards played for all ten turns.\n")
    return text, summary


def _rows_part(cards: list[dict], weights_of_cards: list[float], first: int, weights: np.ndarray):
    """`scripts.fit_correction.training_rows` over one part of the cards (an agent of its own)."""
    from scripts import fit_correction
    return fit_correction.training_rows(live_agent(len(cards)), cards, weights, weights_of_cards)


def _names_match(path: Path, features: tuple[str, ...]) -> bool:
    """Does the weights file name exactly these features?"""
    named = _field(path, "weights")
    return named is not None and set(named) == set(features)


def _trees_match(path: Path, features: tuple[str, ...]) -> bool:
    """Is there a correction file over exactly these features?"""
    return _field(path, "features") == list(features)


def _field(path: Path, key: str):
    """A top-level field of a JSON file, None when the file is missing, unreadable or without it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))[key]
    except (OSError, ValueError, KeyError):
        return None


def _start(features: tuple[str, ...]) -> np.ndarray:
    """Round one plays with the earlier hand-set score, expressed in these features."""
    hand = {"text": 5.0, "audience": 0.5, "negated": -1.0, "over_budget": -2.0, "under_budget": -2.0,
            "reviews": 0.2}
    return np.array([hand.get(f, 0.0) for f in features], dtype=np.float64)


def report(data: dict, history: list[tuple[int, int, int, float]]) -> str:
    lines = ["# People model: fitted weights", "",
             f"`python -m scripts.fit_people` on the tune halves {', '.join(data['data']['sets'])} "
             f"({data['data']['cards']} cards).", "",
             "| round | turns with the target in the pool | turns without | log-likelihood |", "|---|---|---|---|"]
    lines += [f"| {r} | {n} | {m} | {ll:.3f} |" for r, n, m, ll in history]
    lines += ["", "| feature | weight | standard error | z |", "|---|---|---|---|"]
    for f, w in data["weights"].items():
        se = data["standard_errors"][f]
        z = f"{w / se:.1f}" if se else "held at 0 (its free optimum had the wrong sign)"
        lines.append(f"| {f} | {w:.4f} | {se:.4f} | {z} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
