"""Fit the people model's correction: shallow trees on top of the fitted logit (`starter.people.correction`).

Called by `scripts.fit_people` once the logit's weights are fitted.  Data: every tune card played for all ten
turns with those weights (`scripts.people_replay.record`: the people path asks "anything else?", so what the
shopper says does not depend on the ranking), and every people turn whose pool holds the target, the target
labelled 1 and the rest 0, each row weighted by its card (`scripts.fit_people.card_weights`).  LightGBM's
lambdarank (truncated at 20) fits trees starting from the logit's score (its `init_score`: the features times
the weights plus the fixed terms, nothing shown), each tree monotone in every feature whose sign the logit
fixes (`SIGNS`), so a fact that agrees never lowers a candidate.  The configuration is the one two-fold
cross-validation inside the tune halves chose among corrections of the logit
(evaluation_results/people/ranker_trial_2026-12-03.md: 7 leaves, 100 trees at 0.05), each leaf capped (see
`PARAMS`).  Deterministic: one thread, no sampling, LightGBM's `deterministic` mode.
"""
from __future__ import annotations

import json

import numpy as np

# hand-set: chosen by two-fold cross-validation inside the tune halves (the trial named above); and a cap on
# every leaf (learning_rate x max_delta_step = 0.5 logit, above every leaf of the unweighted fits, at most 0.36):
# with rows weighted by card, a leaf of few rows with almost no curvature otherwise reached -61 logits.
PARAMS = {"objective": "lambdarank", "lambdarank_truncation_level": 20, "num_leaves": 7, "learning_rate": 0.05,
          "min_data_in_leaf": 50, "max_delta_step": 10.0, "deterministic": True, "force_row_wise": True,
          "num_threads": 1, "seed": 1, "verbose": -1}
ROUNDS = 100


def training_rows(agent, cards: list[dict], weights: np.ndarray, card_weights: list[float]
                  ) -> tuple[np.ndarray, np.ndarray, list[int], np.ndarray, np.ndarray]:
    """(feature rows, labels, group sizes, the logit's score, each row's weight: its card's) of every people
    turn of every card whose pool holds the target, played for all ten turns with `weights` and no correction."""
    from scripts.people_replay import record
    agent.pipeline.people.weights, agent.pipeline.people.correction = weights, None
    return session_rows(agent.index, record(agent, cards), weights, agent.settings.people, card_weights)


def session_rows(index, sessions: list, weights: np.ndarray, settings, card_weights: list[float]
                 ) -> tuple[np.ndarray, np.ndarray, list[int], np.ndarray, np.ndarray]:
    """`training_rows` of recorded sessions (`scripts.people_replay.Session`, one weight each; a session of
    weight 0 gives no rows)."""
    from starter.people.ranking import pool_score
    xs, labels, groups, init, row_weights = [], [], [], [], []
    for session, card_weight in zip(sessions, card_weights):
        if card_weight == 0:
            continue
        for turn in session.turns:
            if turn.pool is None:
                continue
            where = np.flatnonzero(turn.pool.ids == session.target)
            if not len(where):
                continue
            label = np.zeros(len(turn.pool.ids))
            label[where[0]] = 1.0
            xs.append(turn.pool.features)
            labels.append(label)
            groups.append(len(label))
            init.append(pool_score(index, turn.pool, turn.facts, set(), settings, weights))
            row_weights.append(np.full(len(label), card_weight))
    return np.vstack(xs), np.concatenate(labels), groups, np.concatenate(init), np.concatenate(row_weights)


def fit_trees(x: np.ndarray, labels: np.ndarray, groups: list[int], init: np.ndarray,
              monotone: list[int], row_weights: np.ndarray | None = None, overrides: dict | None = None,
              rounds: int = ROUNDS) -> list[dict]:
    """The trees LightGBM fits on top of `init` (each row weighted by `row_weights`, its card's weight in the
    fit), as {"feature", "threshold", "left", "right", "leaf"} lists; `overrides` replace entries of `PARAMS`
    (a trial of another configuration, `scripts.refit_spread --param`)."""
    import lightgbm
    data = lightgbm.Dataset(x, labels, weight=row_weights, group=groups, init_score=init)
    params = {**PARAMS, **(overrides or {}), "monotone_constraints": monotone}
    booster = lightgbm.train(params, data, num_boost_round=rounds)
    return [tree_lists(t["tree_structure"]) for t in booster.dump_model()["tree_info"]]


def tree_lists(root: dict) -> dict:
    """One dumped LightGBM tree as lists: inner nodes by their split index (the root is 0), a child below 0
    the leaf ~child; a row goes left when its value is at most the threshold."""
    inner: dict[int, tuple[int, float, int, int]] = {}
    leaves: dict[int, float] = {}

    def walk(node: dict) -> int:
        if "split_index" not in node:
            k = int(node.get("leaf_index", 0))
            leaves[k] = float(node["leaf_value"])
            return ~k
        if node["decision_type"] != "<=" or node.get("missing_type", "None") != "None":
            raise ValueError(f"unsupported split {node['decision_type']!r} / {node.get('missing_type')!r}")
        k = int(node["split_index"])
        inner[k] = (int(node["split_feature"]), float(node["threshold"]),
                    walk(node["left_child"]), walk(node["right_child"]))
        return k

    walk(root)
    order = sorted(inner)
    return {"feature": [inner[k][0] for k in order], "threshold": [inner[k][1] for k in order],
            "left": [inner[k][2] for k in order], "right": [inner[k][3] for k in order],
            "leaf": [leaves[k] for k in sorted(leaves)]}


def trees_text(trees: list[dict], features: tuple[str, ...], turns: int, rows: int) -> str:
    """The correction's file: what it is, how it was fitted, and one tree a line."""
    head = {"model": "trees added to the people logit's score (starter.people.correction)",
            "fitted_by": "python -m scripts.fit_people", "params": {**PARAMS, "rounds": ROUNDS},
            "data": {"turns": turns, "rows": rows}, "features": list(features)}
    lines = json.dumps(head, indent=1)[:-2]
    body = ",\n".join("  " + json.dumps(t, separators=(",", ":")) for t in trees)
    return lines + ',\n "trees": [\n' + body + "\n ]\n}\n"
