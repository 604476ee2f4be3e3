"""How much the people path's question could still win, and whether anything the agent sees says when.

    python -m scripts.question_bound greedy --sets longtail_confirm terse_confirm [--plan=-,budget] [--workers 2]
    python -m scripts.question_bound improve --sets longtail_tune ... --out ROWS.jsonl [--max-turn 5] [--workers 2]
    python -m scripts.question_bound policy --rows ROWS.jsonl [--ridge 10]

The people path asks "anything else?" (`other`) every turn; the persona shopper (PERSONAS.md) then volunteers
the card's details in the writer's order.  Asking an attribute instead only changes which of the card's
answers comes when.  `greedy` plays each persona card with an oracle that, at every turn without a hit, tries
the agent's own question and every question whose answer the card holds unused, and asks the one whose answer
ranks the target best next turn: a bound on what question choice could win, since it reads the card.  `--plan`
plays a fixed plan instead (the attribute asked in the answer to turns 1, 2, ...; "-" and every turn after the
plan: the agent's own question).  Each is compared with the agent as it is (its own question every turn).

`improve` measures the one step a policy would improve on: on the agent's own way through each card, at every
people turn before the hit, the session's final reward when that turn asks each attribute (a no-preference reply
included) and the agent's own question ever after, with what the agent could know then (the facts said, how
sure its ranking is, how far apart the prices of its first candidates lie).  `policy` fits, on the rows of one
group of halves, a ridge regression of each question's gain over `other` (the people path's own) on those
features, asks the best predicted gain where it is above zero, and reports the gain that choice earns on every
group: a question rule from what the agent sees is worth building only where it earns on the halves it was not
fitted on.
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

from contest.jsonl import read_jsonl
from contest.persona import ANSWER_ATTRIBUTES, VOLUNTEER_ORDER, PersonaCustomer, is_script_card
from contest.rules import MAX_TURNS, TOP_K
from scripts.fit_people import PERSONAS, live_agent, people_turn
from scripts.people_replay import half_group, shown_result

OPTIONS: tuple[str, ...] = ("other",) + VOLUNTEER_ORDER
FEATURES: tuple[str, ...] = ("turn", "budget_said", "audience_said", "colour_said", "material_said", "brand_said",
                             "top1", "entropy", "price_spread", "log_pool")
HEAD = 30                      # the first candidates whose probabilities and prices describe the ranking


def _replayed(agent, sid: str, card: dict, messages: list[str]) -> dict:
    """The response to the last of `messages`, played from the start in a fresh session `sid`."""
    agent.reset(sid, card.get("user_profile") or {})
    resp: dict = {}
    for t, message in enumerate(messages, 1):
        resp = agent.respond(sid, message, t, TOP_K)
    return resp


def _hit(agent, resp: dict, target: int, turn: int) -> tuple[float, int | None, int | None]:
    """(reward, turn, rank) of a response's list (a miss: turn None)."""
    return shown_result([agent.index.by_pid[r["parent_asin"]] for r in resp.get("recommendations", [])], target, turn)


def _ranked(agent, sid: str, turn: int):
    """The people path's ranking of turn `turn` of a live session, nothing shown, and the facts it read (None
    on the template path)."""
    from starter.people.ranking import ranked_pool
    got = people_turn(agent, agent.sessions[sid], turn)
    if got is None:
        return None
    pool, facts = got
    people = agent.pipeline.people
    ranked = ranked_pool(agent.index, pool, facts, set(), agent.settings.people, people.weights, people.correction)
    return ranked, facts


def _next_turn_key(agent, sid: str, resp: dict, target: int, turn: int) -> tuple[int, float]:
    """How well a turn's answer ranks the target (smaller is better): a hit by its reward, else its rank."""
    reward, hit_turn, _ = _hit(agent, resp, target, turn)
    if hit_turn is not None:
        return 0, -reward
    got = _ranked(agent, sid, turn)
    if got is None:
        return 1, float(10 * len(agent.index.products))
    ranked = got[0]
    order, _ = ranked.head(len(ranked))
    where = np.flatnonzero(order == target)
    return 1, float(where[0] + 1 if len(where) else len(agent.index.products))


def answerable(customer: PersonaCustomer, own: str | None = "other") -> list[str | None]:
    """The agent's `own` question, then `other` and every attribute whose answer the card holds unused, in the
    volunteering order."""
    held = ["other"] + [a for a in VOLUNTEER_ORDER if a not in customer.used_answers
                        and isinstance(customer.answers.get(a), str) and customer.answers[a].strip()]
    return [own] + [a for a in held if a != own]


def greedy_ask(agent, card: dict, customer: PersonaCustomer, messages: list[str], turn: int, target: int,
               own: str | None = "other") -> str | None:
    """The question whose answer ranks the target best at turn `turn` + 1 (of equals, the first of
    `answerable`, so the agent's `own` wins a tie)."""
    best: tuple[tuple[int, float], str | None] | None = None
    for ask in answerable(customer, own):
        reply = copy.deepcopy(customer).reply(ask, turn + 1)
        sid = f"question-bound-branch-{card['sample_id']}"
        resp = _replayed(agent, sid, card, messages + [reply])
        key = _next_turn_key(agent, sid, resp, target, turn + 1)
        agent.close_session(sid)
        if best is None or key < best[0]:
            best = (key, ask)
    assert best is not None
    return best[1]


def play(agent, card: dict, plan: list[str] | None = None) -> dict:
    """One persona card played with the greedy oracle's questions (or the fixed `plan`; `["-"]`: the agent's
    own questions, the agent as it is): its reward, turn, rank and the questions asked."""
    target = agent.index.by_pid[card["ground_truth"]["parent_asin"]]
    customer = PersonaCustomer.from_card(card)
    messages, asks, own = [customer.opening()], [], []
    sid = f"question-bound-{card['sample_id']}"       # the main line, live; each branch plays in its own session
    agent.reset(sid, card.get("user_profile") or {})
    result: tuple[float, int | None, int | None] = (0.0, None, None)
    for turn in range(1, MAX_TURNS + 1):
        resp = agent.respond(sid, messages[-1], turn, TOP_K)
        result = _hit(agent, resp, target, turn)
        if result[1] is not None or turn == MAX_TURNS:
            break
        ask = resp.get("ask_attribute")
        own.append(ask)
        if plan is None:
            ask = greedy_ask(agent, card, customer, messages, turn, target, ask)
        elif turn <= len(plan) and plan[turn - 1] != "-":
            ask = plan[turn - 1]
        asks.append(ask)
        messages.append(customer.reply(ask, turn + 1))
    agent.close_session(sid)
    reward, turn_found, rank = result
    return {"sample_id": card["sample_id"], "reward": reward, "turn": turn_found, "rank": rank, "asks": asks,
            "own": own}


def state_features(agent, sid: str, turn: int) -> dict[str, float] | None:
    """What the agent could know at turn `turn` of a live session (None on the template path): the facts
    said, how sure its ranking is (the first candidate's share and the entropy of the first `HEAD`), and how far
    apart their prices lie (the probability-weighted spread of log price)."""
    got = _ranked(agent, sid, turn)
    if got is None:
        return None
    ranked, facts = got
    state = agent.sessions[sid]
    order, prob = ranked.head(min(HEAD, len(ranked)))
    p = np.asarray(prob, dtype=float) / max(float(np.sum(prob)), 1e-12)
    prices = np.array([agent.index.products[i].price or np.nan for i in order], dtype=float)
    ok = np.isfinite(prices) & (prices > 0)
    spread = 0.0
    if ok.sum() >= 2:
        logs, w = np.log(prices[ok]), p[ok] / p[ok].sum()
        spread = math.sqrt(max(0.0, float(w @ (logs - w @ logs) ** 2)))
    free = [r for r in state.readings if not r.template]
    return {"turn": float(min(turn, 5)), "budget_said": float(facts.budget is not None),
            "audience_said": float(bool(facts.audiences or facts.not_for)),
            "colour_said": float(any(r.colors for r in free)), "material_said": float(any(r.materials for r in free)),
            "brand_said": float(bool(facts.brands)), "top1": float(p[0]),
            "entropy": float(-(p * np.log(np.maximum(p, 1e-12))).sum()), "price_spread": spread,
            "log_pool": math.log1p(len(ranked))}


def _rollout(agent, card: dict, customer: PersonaCustomer, messages: list[str], ask: str, target: int) -> float:
    """The final reward when the turn after `messages` asks `ask` and every later turn the agent's own."""
    sid = f"question-bound-rollout-{card['sample_id']}"
    _replayed(agent, sid, card, messages)
    customer = copy.deepcopy(customer)
    reward = 0.0
    for turn in range(len(messages) + 1, MAX_TURNS + 1):
        resp = agent.respond(sid, customer.reply(ask, turn), turn, TOP_K)
        reward, found, _ = _hit(agent, resp, target, turn)
        if found is not None:
            break
        ask = resp.get("ask_attribute")
    agent.close_session(sid)
    return reward


def improvement_rows(agent, card: dict, max_turn: int = 5) -> list[dict]:
    """On the agent's own way through `card` (its own question every turn), each people turn up to `max_turn`
    without a hit (where its own question is `other`): the state's features and the final reward of asking each
    of `OPTIONS` there."""
    target = agent.index.by_pid[card["ground_truth"]["parent_asin"]]
    customer = PersonaCustomer.from_card(card)
    messages: list[str] = [customer.opening()]
    sid = f"question-bound-{card['sample_id']}"
    agent.reset(sid, card.get("user_profile") or {})
    rows = []
    for turn in range(1, min(max_turn, MAX_TURNS - 1) + 1):
        resp = agent.respond(sid, messages[-1], turn, TOP_K)
        if _hit(agent, resp, target, turn)[1] is not None:
            break
        features = state_features(agent, sid, turn)
        if features is not None:
            rewards = {a: _rollout(agent, card, customer, messages, a, target) for a in OPTIONS}
            rows.append({"sample_id": card["sample_id"], "turn": turn, "features": features, "rewards": rewards})
        messages.append(customer.reply(resp.get("ask_attribute"), turn + 1))
    agent.close_session(sid)
    return rows


def policy_value(rows: list[dict], train: str, ridge: float = 10.0) -> dict[str, dict[str, float]]:
    """Fit each question's gain over `other` on the rows of group `train` (standardised features, `ridge`), ask
    the best predicted gain where it is positive, and give, for every group, the gain that earns (summed over its
    halves: each half's change of score) and how many turns asked something else than `other`."""
    def design(rs: list[dict]) -> np.ndarray:
        return np.array([[r["features"][f] for f in FEATURES] for r in rs], dtype=float)

    def gains(rs: list[dict]) -> np.ndarray:
        return np.array([[r["rewards"][a] - r["rewards"]["other"] for a in OPTIONS[1:]] for r in rs], dtype=float)

    fitted = [r for r in rows if half_group(r["set"]) == train]
    x = design(fitted)
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = np.hstack([np.ones((len(x), 1)), (x - mean) / scale])
    coef = np.linalg.solve(z.T @ z + ridge * np.eye(z.shape[1]), z.T @ gains(fitted))
    out: dict[str, dict[str, float]] = {}
    for name in sorted({half_group(r["set"]) for r in rows}):
        rs = [r for r in rows if half_group(r["set"]) == name]
        zs = np.hstack([np.ones((len(rs), 1)), (design(rs) - mean) / scale])
        predicted, earned = zs @ coef, gains(rs)
        asks = predicted.max(axis=1) > 0
        chosen = earned[np.arange(len(rs)), predicted.argmax(axis=1)]
        out[name] = {"rows": len(rs), "asked": int(asks.sum()),
                     "gain": round(sum(float(chosen[k]) / rs[k]["cards"] for k in range(len(rs)) if asks[k]), 4),
                     "oracle": round(sum(float(max(0.0, earned[k].max())) / rs[k]["cards"] for k in range(len(rs))), 4)}
    return out


_WORKER: dict = {}


def _job(job: tuple[str, str, int, dict, list[str] | None, int]):
    """One card's work in a worker process, which builds its agent once."""
    command, name, n, card, plan, max_turn = job
    agent = _WORKER.get("agent") or _WORKER.setdefault("agent", live_agent(4))
    if command == "improve":
        return name, [dict(row, set=name, cards=n) for row in improvement_rows(agent, card, max_turn)]
    return name, (play(agent, card, ["-"]), play(agent, card, plan))


def _run(jobs: list, workers: int) -> list:
    from tqdm import tqdm
    bar = tqdm(total=len(jobs), unit="card", file=sys.stderr, disable=not sys.stderr.isatty())
    out = []
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for got in pool.map(_job, jobs, chunksize=1):
                out.append(got)
                bar.update()
    else:
        for job in jobs:
            out.append(_job(job))
            bar.update()
    bar.close()
    return out


def _cards(sets: list[str]) -> list[tuple[str, int, dict]]:
    out = []
    for name in sets:
        cards = [c for c in read_jsonl(PERSONAS / f"{name}.jsonl") if not is_script_card(c)]
        out += [(name, len(cards), c) for c in cards]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.question_bound", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["greedy", "improve", "policy"])
    ap.add_argument("--sets", nargs="+", default=[], help="persona card sets under data/personas/")
    ap.add_argument("--plan", help="a fixed plan instead of the oracle (greedy): e.g. budget,-,category")
    ap.add_argument("--out", type=Path, help="the rows file to write (improve)")
    ap.add_argument("--rows", type=Path, help="the rows file to read (policy)")
    ap.add_argument("--max-turn", type=int, default=5, help="the last turn a question is measured after (improve)")
    ap.add_argument("--ridge", type=float, default=10.0, help="the policy fit's ridge (policy)")
    ap.add_argument("--workers", type=int, default=1, help="processes (greedy, improve)")
    args = ap.parse_args(argv)
    if args.command == "policy":
        if args.rows is None:
            ap.error("policy needs --rows")
        rows = read_jsonl(args.rows)
        for train in ("tune", "confirm"):
            print(f"fitted on {train}:", json.dumps(policy_value(rows, train, args.ridge)))
        return 0
    if not args.sets or (args.command == "improve" and args.out is None):
        ap.error(f"{args.command} needs --sets" + (" and --out" if args.command == "improve" else ""))
    plan = args.plan.split(",") if args.plan else None
    bad = [a for a in plan or [] if a != "-" and a not in ANSWER_ATTRIBUTES]
    if bad:
        ap.error(f"unknown attributes in --plan: {bad}")
    done = _run([(args.command, name, n, card, plan, args.max_turn) for name, n, card in _cards(args.sets)],
                args.workers)
    if args.command == "improve":
        args.out.write_text("".join(json.dumps(row) + "\n" for _, rows in done for row in rows))
        print(f"{sum(len(rows) for _, rows in done)} rows -> {args.out}")
        return 0
    _report(done, "plan " + args.plan if plan else "greedy oracle")
    return 0


def _report(done: list, label: str) -> None:
    """Each set's score as the agent asks and as `label` asks, and the sums of the changes by group."""
    sums: dict[str, float] = {}
    for name in dict.fromkeys(name for name, _ in done):
        pairs = [p for n, p in done if n == name]
        base = sum(d["reward"] for d, _ in pairs) / len(pairs)
        score = sum(o["reward"] for _, o in pairs) / len(pairs)
        sums[half_group(name)] = sums.get(half_group(name), 0.0) + score - base
        print(f"{name:20s} the agent {base:.6f}  {label} {score:.6f}  {score - base:+.4f}")
    print("sum of changes: " + ", ".join(f"{g} {v:+.4f}" for g, v in sums.items()))
    turns = [(a, o) for _, (_, played) in done for a, o in zip(played["asks"], played["own"])]
    other = Counter(a for a, o in turns if a != o)
    print(f"questions other than the agent's own: {sum(other.values())} of {len(turns)} turns ("
          + ", ".join(f"{a} {n}" for a, n in other.most_common()) + ")")


if __name__ == "__main__":
    raise SystemExit(main())
