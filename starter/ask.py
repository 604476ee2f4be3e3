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

from contest.messages import reveal_each
from contest.rules import hit_reward
from starter.catalog import CatalogIndex
from starter.config import QUESTION_ATTRIBUTES, Tunables
from starter.rank import Ranked, Tracks
from starter.trace import QuestionRow as QuestionValue

__all__ = ["QuestionValue", "separable", "value_questions"]


def value_questions(index: CatalogIndex, ranked: list[Ranked], tracks: Tracks, shown: set[int], turn: int,
                    cfg: Tunables) -> list[QuestionValue]:
    """Every question's value, best first (ties: concentration, then attribute order)."""
    rest: list[Ranked] = []
    covered = 0.0
    unshown = 1.0 - sum(r.prob for r in ranked if r.idx in shown)
    for r in ranked:
        if r.idx in shown:
            continue
        rest.append(r)
        covered += r.prob
        # The far tail cannot change which candidate tops an answer group.
        if len(rest) >= cfg.question_candidates or covered >= cfg.question_mass_covered * unshown:
            break
    mass = sum(r.prob for r in rest)
    if mass <= 0 or len(rest) <= 1:
        return []
    base = max(r.prob for r in rest) / mass
    reward = hit_reward(1, turn + 1)
    pending = []
    for r in rest:
        p = index.products[r.idx]
        pending.append((r.prob / mass, reveal_each(p.constraints, p.types, tracks[r.idx].disclosed,
                                                   QUESTION_ATTRIBUTES)))
    out: list[QuestionValue] = []
    for attribute in QUESTION_ATTRIBUTES:
        groups: dict[tuple[str, ...], list[float]] = {}
        for q, answers in pending:
            groups.setdefault(answers[attribute], []).append(q)
        top1 = sum(max(g) for g in groups.values())
        conc = sum(sum(x * x for x in g) / sum(g) for g in groups.values() if sum(g) > 0)
        real_groups = sum(1 for g in groups.values() if sum(g) >= cfg.min_group_mass)
        out.append(QuestionValue(attribute, round((top1 - base) * reward, 6), round(top1, 6), round(conc, 6),
                                 real_groups))
    order = {a: k for k, a in enumerate(QUESTION_ATTRIBUTES)}
    out.sort(key=lambda q: (-q.value, -q.concentration, -q.groups, order[q.attribute]))
    return out


def separable(values: list[QuestionValue]) -> bool:
    """Whether some question still splits the remaining candidates."""
    return any(q.groups > 1 for q in values)
