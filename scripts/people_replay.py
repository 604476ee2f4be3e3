"""Replay people sessions offline: record every turn's candidate pool once, then score other weights or
commit rules in seconds instead of replaying the agent.

    python -m scripts.people_replay record --sets confirm longtail_confirm --out /tmp/pools [--workers 2]
    python -m scripts.people_replay score --pools /tmp/pools [--weights FILE [--trees FILE]] [--insurance-turn N]
                                          [--best-length]
    python -m scripts.people_replay turns --pools /tmp/pools [--weights FILE] [--logit-only] [--turns 6]

`record` plays each card of the named sets (`data/personas/<set>.jsonl`) for all ten turns with the agent,
whatever it shows (the shopper's rules of PERSONAS.md; the people path asks "anything else?", so the
messages do not depend on the ranking), and keeps, for every people turn, the pool as the agent computed
it, the facts read so far, whether the shopper had run out of things to say, and from which turn on the
lists shown still count (an override of the whole wish makes earlier ones prove nothing); for a template
turn, the list the agent showed.  `score` re-ranks each people turn with the given weights through the
agent's own functions (`starter.people.ranking.ranked_pool`, `starter.template.commit.decide`) until the
target is shown, giving each session's reward, turn and rank.  `--best-length` adds the best any rule for
how many products to show could do on the same way through each session (the lists shown before are the
rule's; at the one turn that earns most, the list reaches down to the target): the part of the loss a
commit rule could still win.

`turns` measures the ranking itself, turn by turn, over every recorded people turn up to `--turns`
(nothing shown counts against a candidate, so every turn of every card is measured the same way): how
often the target is in the pool, first, in the first ten, its mean reciprocal rank and its mean log
probability.  A session's score turns on the few turns where its target first reaches the top, so a
50-card half moves by about 0.01 whenever weights are refitted; six turns a card are ten times the
observations, and tell a change in how the words are read from the noise of a refit.

With the agent's own weights and settings the replay is the agent (a test checks it card by card).  With
other weights it is an approximation where the list shown changes what a later turn computes: the
template path's lists and the prices shown ("cheaper", "pricier") are the recording's.
"""
from __future__ import annotations

import argparse
import pickle
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from contest.jsonl import read_jsonl
from contest.rules import MAX_TURNS, TOP_K, hit_reward
from scripts.fit_people import PERSONAS, live_agent, people_turn
from starter.people.facts import Facts
from starter.people.features import Pool


@dataclass
class Turn:
    """One recorded turn: a people turn's pool and the facts read so far (whether the shopper had run out
    of things to say; from which turn on the lists shown still count), or the list a template turn showed."""

    number: int
    pool: Pool | None = None
    facts: Facts | None = None
    run_out: bool = False
    counts_from: int = 1               # the first turn whose list still proves something (after an override)
    shown: list[int] = field(default_factory=list)


@dataclass
class Session:
    sample_id: str
    target: int
    turns: list[Turn]


def record(agent, cards: list[dict], progress: bool = False) -> list[Session]:
    """Every card played for all ten turns with `agent`, each turn recorded (see the module's doc)."""
    from tqdm import tqdm

    from contest.persona import PersonaCustomer, ScriptedCustomer, is_script_card
    tqdm.monitor_interval = 0                   # no thread left behind for a later fork (see the evaluator)
    out = []
    for k, card in enumerate(tqdm(cards, unit="card", file=sys.stderr, disable=not (progress and sys.stderr.isatty()))):
        sid = f"replay-{k:05d}-{card['sample_id']}"
        agent.reset(sid, card.get("user_profile") or {})
        customer = (ScriptedCustomer if is_script_card(card) else PersonaCustomer).from_card(card)
        message = customer.opening()
        turns = []
        for t in range(1, MAX_TURNS + 1):
            resp = agent.respond(sid, message, t, TOP_K)
            turns.append(_recorded(agent, sid, t, resp))
            message = customer.reply(resp.get("ask_attribute"), t + 1)
        agent.close_session(sid)
        out.append(Session(card["sample_id"], agent.index.by_pid[card["ground_truth"]["parent_asin"]], turns))
    return out


def _recorded(agent, sid: str, t: int, resp: dict) -> Turn:
    """Turn `t` of a live session: the pool the people path ranked, as `scripts.fit_people` reads it."""
    from starter.people.play import has_run_out
    state = agent.sessions[sid]
    got = people_turn(agent, state, t)
    if got is None:
        return Turn(t, shown=[agent.index.by_pid[r["parent_asin"]] for r in resp["recommendations"]])
    pool, facts = got
    # The lists the ranking just penalised as shown: the latest ones back to the last the reducer forgot
    # (an override of the whole wish makes what was shown before it prove nothing).
    remembered = set(state.doubtful) | set(state.excluded)
    counts_from = t
    while counts_from > 1 and remembered.issuperset(state.shown[counts_from - 2]):
        counts_from -= 1
    return Turn(t, pool, facts, has_run_out(state.readings[t - 1], t), counts_from)


def replay(index, session: Session, weights: np.ndarray, settings, correction=None, best_length: bool = False
           ) -> tuple[float, int | None, int | None]:
    """(reward, turn, rank) of one recorded session re-ranked with `weights` and the trees' `correction` under
    the agent's commit rule.  With `best_length`, the best the list length alone could have done instead: on
    the commit rule's own way through the session (the lists it showed before), the one people turn whose
    list, made as long as the target's rank there (at most ten), earns the most (a template turn's list is the
    recording's).  Its gap to the rule's reward is what any rule for how many to show could still win; the
    rest is the ranking's."""
    from starter.people.ranking import ranked_pool
    from starter.template import commit, posterior
    lists: list[list[int]] = []
    best: tuple[float, int | None, int | None] = (0.0, None, None)
    for turn in session.turns:
        if turn.pool is None:
            recs = turn.shown
        else:
            shown = {i for recs in lists[turn.counts_from - 1:] for i in recs}
            ranked = ranked_pool(index, turn.pool, turn.facts, shown, settings.people, weights, correction)
            decision = commit.decide(posterior.horizon_probs(ranked), turn.number, not turn.run_out, False,
                                     settings.commit.people_insurance_turn)
            recs = [r.idx for r in ranked[:min(decision.count, TOP_K)]]
            if best_length:
                best = max(best, shown_result(ranked.head(TOP_K)[0].tolist(), session.target, turn.number),
                           key=_reward)
        if session.target in recs:
            rank = recs.index(session.target) + 1
            return max(best, (hit_reward(rank, turn.number), turn.number, rank), key=_reward)
        lists.append(recs)
    return best


def _reward(result: tuple[float, int | None, int | None]) -> float:
    """What `max` compares results by: the reward alone, so that of equal rewards the earlier turn's stays."""
    return result[0]


def shown_result(first: list[int], target: int, number: int) -> tuple[float, int | None, int | None]:
    """(reward, turn, rank) of a turn that shows the `first` candidates up to the target (nothing: 0)."""
    if target not in first:
        return 0.0, None, None
    rank = first.index(target) + 1
    return hit_reward(rank, number), number, rank


# The probability a target outside the pool is given in `turn_quality`'s mean log probability.
MISSING_PROB = 1e-4


def turn_quality(index, sessions: list[Session], weights: np.ndarray, settings, turns: int = 6,
                 correction=None) -> dict[str, float]:
    """The ranking's quality over the people turns 1..`turns` of recorded sessions, nothing shown (see the
    module's doc); a target outside the pool counts as never ranked, with probability `MISSING_PROB`."""
    from starter.people.ranking import ranked_pool
    n = in_pool = first = ten = 0
    reciprocal = log_p = 0.0
    for session in sessions:
        for turn in (t for t in session.turns[:turns] if t.pool is not None):
            n += 1
            where = np.flatnonzero(turn.pool.ids == session.target)
            if not len(where):
                log_p += float(np.log(MISSING_PROB))
                continue
            ranked = ranked_pool(index, turn.pool, turn.facts, set(), settings.people, weights, correction)
            order, prob = ranked.head(len(ranked))
            at = int(np.flatnonzero(order == session.target)[0])
            rank = at + 1                                    # as the agent orders ties
            in_pool += 1
            first += rank == 1
            ten += rank <= TOP_K
            reciprocal += 1.0 / rank
            log_p += float(np.log(max(prob[at], MISSING_PROB)))
    m = max(1, n)
    return {"turns": n, "in_pool": round(in_pool / m, 4), "first": round(first / m, 4), "top10": round(ten / m, 4),
            "mrr": round(reciprocal / m, 4), "log_p": round(log_p / m, 4)}


# Waves of cards the people model is never fitted on (`scripts.fit_people.TUNE_SETS` holds none of their halves).
HELD_OUT_WAVES = {"4": "fourth wave", "5": "fifth wave", "6": "sixth wave", "7": "seventh wave", "8": "eighth wave",
                  "9": "ninth wave", "10": "tenth wave"}


def half_group(name: str) -> str:
    """The group of a recorded card set: a half of a wave never fitted on (`HELD_OUT_WAVES`), a tune half, a
    confirm half, or other (a set not split into halves)."""
    wave = re.search(r"(\d+)_(?:tune|confirm)$", name)
    if wave and wave.group(1) in HELD_OUT_WAVES:
        return HELD_OUT_WAVES[wave.group(1)]
    if name == "tune" or name.endswith("_tune"):
        return "tune"
    if name == "confirm" or name.endswith("_confirm"):
        return "confirm"
    return "other"


def summary(results: list[tuple[float, int | None, int | None]]) -> dict[str, float]:
    """TechnicalScore and its parts over replayed sessions (a miss counts turn 11)."""
    n = max(1, len(results))
    hit = sum(r[1] is not None for r in results) / n
    mrr = sum(1.0 / r[2] for r in results if r[2]) / n
    mttc = sum(r[1] if r[1] else MAX_TURNS + 1 for r in results) / n
    return {"sessions": len(results), "score": round(sum(r[0] for r in results) / n, 6), "hit": round(hit, 4),
            "mrr": round(mrr, 4), "mttc": round(mttc, 3)}


def _record_set(job: tuple[str, Path]) -> str:
    """Record one card set into `<out>/<set>.pkl` (a process of its own under --workers)."""
    # Through the module's own name: records made by `python -m` would otherwise pickle as `__main__.Session`.
    from scripts.people_replay import record as record_cards
    name, out = job
    cards = read_jsonl(PERSONAS / f"{name}.jsonl")
    sessions = record_cards(live_agent(len(cards)), cards, progress=True)
    (out / f"{name}.pkl").write_bytes(pickle.dumps(sessions))
    return f"{name}: {len(sessions)} sessions recorded"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.people_replay", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["record", "score", "turns"])
    ap.add_argument("--sets", nargs="+", default=[], help="card sets under data/personas/ (record)")
    ap.add_argument("--out", type=Path, help="folder for the recorded pools (record)")
    ap.add_argument("--pools", type=Path, help="folder of recorded pools (score)")
    ap.add_argument("--weights", type=Path, help="a weights file (score; default: the agent's)")
    ap.add_argument("--trees", type=Path, help="a correction file (default: the agent's, without --weights)")
    ap.add_argument("--logit-only", action="store_true", help="no correction: the weights alone")
    ap.add_argument("--insurance-turn", type=int, help="the people path's insurance turn (score)")
    ap.add_argument("--workers", type=int, default=1, help="sets recorded at once, one process each (record)")
    ap.add_argument("--turns", type=int, default=6, help="people turns measured per card (turns)")
    ap.add_argument("--best-length", action="store_true",
                    help="also the best any list length could do on the commit rule's way (score)")
    args = ap.parse_args(argv)
    if args.command == "record":
        if not args.sets or args.out is None:
            ap.error("record needs --sets and --out")
        args.out.mkdir(parents=True, exist_ok=True)
        jobs = [(name, args.out) for name in args.sets]
        if args.workers > 1:
            from concurrent.futures import ProcessPoolExecutor
            with ProcessPoolExecutor(max_workers=args.workers) as pool:
                done = list(pool.map(_record_set, jobs))
        else:
            done = [_record_set(job) for job in jobs]
        for line in done:
            print(line, file=sys.stderr)
        return 0
    if args.pools is None:
        ap.error(f"{args.command} needs --pools")
    return _score(args)


def _score(args: argparse.Namespace) -> int:
    import dataclasses

    from starter.people.correction import TREES_FILE, load_correction
    from starter.people.ranking import WEIGHTS_FILE, load_weights
    agent = live_agent(0)
    settings = agent.settings
    if args.insurance_turn is not None:
        settings = dataclasses.replace(settings, commit=dataclasses.replace(
            settings.commit, people_insurance_turn=args.insurance_turn))
    weights = load_weights(args.weights or WEIGHTS_FILE)
    # The committed trees correct the committed weights; other weights are scored alone unless --trees says.
    trees = args.trees or (None if args.weights or args.logit_only else TREES_FILE)
    correction = load_correction(trees) if trees is not None else None
    for path in sorted(args.pools.glob("*.pkl")):
        sessions = pickle.loads(path.read_bytes())
        if args.command == "turns":
            print(path.stem, turn_quality(agent.index, sessions, weights, settings, args.turns, correction))
        else:
            print(path.stem, summary([replay(agent.index, s, weights, settings, correction) for s in sessions]))
            if args.best_length:
                best = [replay(agent.index, s, weights, settings, correction, best_length=True) for s in sessions]
                print(path.stem, "best list length", summary(best))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
