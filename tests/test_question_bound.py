"""The question bound (`scripts.question_bound`): its default play is the agent; the oracle's question is
never worse next turn than `other`; the one-step rows continue the default way; the policy check asks where
its features say a question gains, and nowhere else."""
from __future__ import annotations

import numpy as np

from contest.jsonl import read_jsonl
from contest.persona import PersonaCustomer
from evaluator.data import load_catalog_view
from evaluator.local_evaluator import run_session
from scripts import question_bound as qb

# longtail_0072 is found at turn 3 asking "anything else?" and at turn 2 asking what it is for; terse2_0034 only
# once the agent's own questions leave "anything else?" (on the template path, after the shopper runs out).
CARDS = [("longtail_tune", 35), ("confirm", 0), ("terse_confirm", 5), ("terse2_tune", 16)]


def _card(name: str, k: int) -> dict:
    return read_jsonl(qb.PERSONAS / f"{name}.jsonl")[k]


def test_the_default_play_is_the_agent(proxy_agent, proxy_catalog) -> None:
    cards = [_card(name, k) for name, k in CARDS]
    view = load_catalog_view(proxy_catalog, {c["ground_truth"]["parent_asin"] for c in cards})
    for k, card in enumerate(cards):
        played = run_session(proxy_agent, card, 9100 + k, view)
        proxy_agent.close_session(f"session-{9100 + k:05d}-{card['sample_id']}")
        mine = qb.play(proxy_agent, card, ["-"])
        assert (mine["turn"], mine["rank"]) == (played["turn"], played["rank"]), card["sample_id"]


def test_the_oracle_question_is_never_worse_next_turn(proxy_agent) -> None:
    card = _card("longtail_tune", 35)
    target = proxy_agent.index.by_pid[card["ground_truth"]["parent_asin"]]
    customer = PersonaCustomer.from_card(card)
    messages = [customer.opening()]
    ask = qb.greedy_ask(proxy_agent, card, customer, messages, 1, target)
    keys = {}
    for a in ("other", ask):
        sid = f"qb-test-{a}"
        resp = qb._replayed(proxy_agent, sid, card, messages + [PersonaCustomer.from_card(card).reply(a, 2)])
        keys[a] = qb._next_turn_key(proxy_agent, sid, resp, target, 2)
        proxy_agent.close_session(sid)
    assert keys[ask] <= keys["other"]
    assert ask != "other" and keys[ask] < keys["other"]          # here another question does find it sooner
    bound, default = qb.play(proxy_agent, card), qb.play(proxy_agent, card, ["-"])
    assert bound["reward"] > default["reward"] and bound["asks"][0] == ask


def test_only_answers_the_card_holds_unused_are_tried() -> None:
    card = {"opening": "shoes", "answers": {"color": None, "budget": "under 40", "style": " ", "brand": "Nike"},
            "other": []}
    customer = PersonaCustomer.from_card(card)
    assert qb.answerable(customer) == ["other", "budget", "brand"]
    assert qb.answerable(customer, "color") == ["color", "other", "budget", "brand"]     # the agent's own first
    customer.reply("budget", 2)
    assert qb.answerable(customer) == ["other", "brand"]


def test_the_rows_continue_the_default_way(proxy_agent) -> None:
    card = _card("longtail_tune", 35)
    rows = qb.improvement_rows(proxy_agent, card, max_turn=2)
    default = qb.play(proxy_agent, card, ["-"])
    assert [r["turn"] for r in rows] == [1, 2]
    assert all(r["rewards"]["other"] == default["reward"] for r in rows)
    assert set(rows[0]["features"]) == set(qb.FEATURES)
    assert max(rows[0]["rewards"].values()) > default["reward"]


def _rows(name: str, n: int, rng: np.random.Generator) -> list[dict]:
    """Synthetic rows where asking the budget gains exactly when no budget was said, and any other question loses."""
    rows = []
    for k in range(n):
        said = float(k % 2)
        features = {f: float(rng.normal()) for f in qb.FEATURES} | {"budget_said": said}
        rewards = {a: 0.45 for a in qb.OPTIONS} | {"other": 0.5, "budget": 0.4 if said else 0.8, "color": 0.2}
        rows.append({"set": name, "cards": n, "features": features, "rewards": rewards})
    return rows


def test_the_policy_check_asks_where_the_features_say_it_gains() -> None:
    rng = np.random.default_rng(7)
    rows = _rows("longtail_tune", 40, rng) + _rows("longtail_confirm", 40, rng)
    value = qb.policy_value(rows, "tune", ridge=1e-6)          # no shrinkage: the rule is exactly linear
    for g in ("tune", "confirm"):
        assert value[g]["asked"] == 20 and value[g]["gain"] == value[g]["oracle"] == 0.15
    flat = [dict(r, rewards={a: 0.5 for a in qb.OPTIONS}) for r in rows]
    assert qb.policy_value(flat, "tune")["confirm"]["asked"] == 0
    assert qb.policy_value(rows, "tune")["confirm"]["gain"] > 0.1           # the default ridge keeps the sign
