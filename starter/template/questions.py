"""Choose the question: the attribute whose answer is worth the most.

For each legal attribute, every competitive candidate predicts the reply the
shopper would give if it were the target (the contest's reveal rule: the next
undisclosed values of that type, or "no additional preference"); candidates
that predict the same reply stay together.  The value of a question is the
expected gain in the probability of naming the target at rank 1 next turn
(the mass of the best candidate of each answer group, summed, minus the best
mass without asking), priced in TechnicalScore; a question worth less than
nothing is not asked.
"""
from __future__ import annotations

import numpy as np

from contest.rules import hit_reward
from starter.index.arrays import groups_in_order
from starter.index.card_arrays import QUESTION_COLUMNS
from starter.index.catalog import CatalogIndex
from starter.settings import QUESTION_ATTRIBUTES, QuestionSettings
from starter.template.posterior import Ranked, RankedList
from starter.template.tracks import TrackTable
from starter.conversation.trace import QuestionRow

__all__ = ["QuestionRow", "separable", "value_questions"]


def value_questions(index: CatalogIndex, ranked: list[Ranked], tracks: TrackTable, shown: set[int], turn: int,
                    cfg: QuestionSettings) -> list[QuestionRow]:
    """Every question's value, best first (ties: concentration, then attribute order).

    Over arrays, with the floats of the per-group Python sums it replaced: each group's sums run over
    its candidates in ranked order and the per-question sums over its groups in first-seen order
    (`np.bincount` adds in input order)."""
    unshown = 1.0 - sum(_shown_probs(ranked, shown))
    enough = cfg.question_mass_covered * unshown
    limit = cfg.question_candidates
    ids, probs, rows = _leading(ranked, shown, limit, tracks)
    # The far tail cannot change which candidate tops an answer group: the first `limit`, or fewer
    # once they cover `enough` of the mass (the running sum, in ranked order).
    reached = int(np.searchsorted(np.cumsum(probs), enough))       # the first running sum >= enough
    take = min(len(ids), limit, reached + 1)
    ids, probs, rows = ids[:take], probs[:take], rows[:take]
    prob_list = probs.tolist()
    mass = sum(prob_list)
    if mass <= 0 or take <= 1:
        return []
    base = max(prob_list) / mass
    reward = hit_reward(1, turn + 1)
    shares = probs / mass
    # Candidates that predict the same reply to a question form one answer group.
    cards = index.cards
    _, revealed = cards.revealed(ids, tracks.disclosed[rows], QUESTION_COLUMNS)
    codes = cards.pair_codes(revealed).T                 # (question, candidate)
    n_q = len(QUESTION_ATTRIBUTES)
    span = (cards.value_count + 1) ** 2
    keys = (np.arange(n_q, dtype=np.int64)[:, None] * span + codes).ravel()
    groups, first, member = groups_in_order(keys)
    weights = np.concatenate([shares] * n_q)
    sums = np.bincount(member, weights=weights, minlength=len(groups))
    squares = np.bincount(member, weights=weights * weights, minlength=len(groups))
    tops = np.zeros(len(groups), dtype=np.float64)
    np.maximum.at(tops, member, weights)
    seen = np.argsort(first, kind="stable")             # groups by question, then first seen
    question = (groups // span)[seen]
    top1 = np.bincount(question, weights=tops[seen], minlength=n_q).tolist()
    ratio = np.divide(squares, sums, out=np.zeros(len(groups), dtype=np.float64), where=sums > 0)
    conc = np.bincount(question, weights=ratio[seen], minlength=n_q).tolist()
    real_groups = np.bincount(question, weights=(sums >= cfg.min_group_mass)[seen], minlength=n_q).astype(int).tolist()
    out = [QuestionRow(attribute, round((top1[k] - base) * reward, 6), round(top1[k], 6), round(conc[k], 6),
                         real_groups[k]) for k, attribute in enumerate(QUESTION_ATTRIBUTES)]
    order = {a: k for k, a in enumerate(QUESTION_ATTRIBUTES)}
    out.sort(key=lambda q: (-q.value, -q.concentration, -q.groups, order[q.attribute]))
    return out


def _leading(ranked: list[Ranked], shown: set[int], limit: int, tracks: TrackTable | None = None
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ids, probabilities, rows in `tracks`) of the first `limit` candidates not shown, best first."""
    want = limit + len(shown)
    rows = None
    if isinstance(ranked, RankedList):
        ids, probs = ranked.head(want)
        if ranked.track_rows is not None:
            rows = ranked.track_rows[:want]
    else:
        first = ranked[:want]
        ids = np.asarray([r.idx for r in first], dtype=np.int64)
        probs = np.asarray([r.prob for r in first], dtype=np.float64)
    if rows is None:
        rows = tracks.rows_of(ids) if tracks is not None else np.zeros(len(ids), dtype=np.int64)
    if shown:
        keep = np.ones(len(ids), dtype=bool)
        for i in shown:           # one or none: the candidate the turn will show first
            keep &= ids != i
        ids, probs, rows = ids[keep], probs[keep], rows[keep]
    return ids[:limit], probs[:limit], rows[:limit]


def _shown_probs(ranked: list[Ranked], shown: set[int]) -> list[float]:
    """The probabilities of the shown candidates, in ranked order (the shown are among the first)."""
    if not shown:
        return []
    for scope in (len(shown), len(ranked)):          # the shown are the first, as a rule: look there first
        ids, probs, _ = _leading(ranked, set(), scope)
        at = np.zeros(len(ids), dtype=bool)
        for i in shown:
            at |= ids == i
        if int(at.sum()) == len(shown) or scope == len(ranked):
            return probs[at].tolist()
    return []


def separable(values: list[QuestionRow]) -> bool:
    """Whether some question still splits the remaining candidates."""
    return any(q.groups > 1 for q in values)
