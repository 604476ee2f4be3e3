"""Choose the question: the attribute whose answer is worth the most.

For each legal attribute, every competitive candidate predicts the reply the
shopper would give if it were the target (the next undisclosed values of that
type, or "no additional preference"); candidates that predict the same reply
stay together.  The value of a question is the expected gain in the
probability of naming the target at rank 1 next turn (the mass of the best
candidate of each answer group, summed, minus the best mass without asking),
priced in TechnicalScore; a question worth less than nothing is not asked.
"""
from __future__ import annotations

from dataclasses import dataclass

from starter import commit as COMMIT
from starter.catalog import CatalogIndex
from starter.config import QUESTION_ATTRIBUTES
from starter.rank import Ranked, Track

# Questions are valued over the best candidates covering this share of the
# posterior (at most MAX_SCORED of them): the far tail cannot change which
# candidate tops an answer group.
MAX_SCORED = 1500
MASS_COVERED = 1.0 - 1e-5


@dataclass(frozen=True)
class QuestionValue:
    attribute: str
    value: float          # expected gain in TechnicalScore
    top1_mass: float      # P(target is the best of its answer group)
    concentration: float  # expected sum of squared in-group probabilities (tie-break)
    groups: int


def value_questions(index: CatalogIndex, ranked: list[Ranked], tracks: dict[int, Track],
                    shown: set[int], turn: int, min_group_mass: float = 1e-3) -> list[QuestionValue]:
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
        if len(rest) >= MAX_SCORED or covered >= MASS_COVERED * unshown:
            break
    mass = sum(r.prob for r in rest)
    if mass <= 0 or len(rest) <= 1:
        return []
    base = max(r.prob for r in rest) / mass
    reward = COMMIT.reward(1, turn + 1)
    # Each candidate's undisclosed (value, type) pairs, computed once: the
    # answer to attribute A is the first two of type A (any type for `other`),
    # exactly as shopper_model.answer_values, which the tests pin it to.
    pending = []
    for r in rest:
        p = index.products[r.idx]
        disclosed = tracks[r.idx].disclosed
        by_type: dict[str, list[str]] = {}
        undisclosed: list[str] = []
        for v, t in zip(p.constraints, p.types):
            if v not in disclosed:
                undisclosed.append(v)
                by_type.setdefault(t, []).append(v)
        answers = {a: tuple(by_type.get(a, ())[:2]) for a in QUESTION_ATTRIBUTES if a != "other"}
        answers["other"] = tuple(undisclosed[:2])
        pending.append((r.prob / mass, answers))
    out: list[QuestionValue] = []
    for attribute in QUESTION_ATTRIBUTES:
        groups: dict[tuple[str, ...], list[float]] = {}
        for q, answers in pending:
            groups.setdefault(answers[attribute], []).append(q)
        top1 = sum(max(g) for g in groups.values())
        conc = sum(sum(x * x for x in g) / sum(g) for g in groups.values() if sum(g) > 0)
        real_groups = sum(1 for g in groups.values() if sum(g) >= min_group_mass)
        out.append(QuestionValue(attribute, round((top1 - base) * reward, 6), round(top1, 6), round(conc, 6),
                                 real_groups))
    order = {a: k for k, a in enumerate(QUESTION_ATTRIBUTES)}
    out.sort(key=lambda q: (-q.value, -q.concentration, -q.groups, order[q.attribute]))
    return out


def separable(values: list[QuestionValue]) -> bool:
    """Whether some question still splits the remaining candidates."""
    return any(q.groups > 1 for q in values)
