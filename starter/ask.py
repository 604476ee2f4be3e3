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

from operator import mul

from contest.rules import hit_reward
from starter.catalog import CatalogIndex
from starter.config import QUESTION_ATTRIBUTES, Tunables
from starter.posterior import Ranked
from starter.rank import DISCLOSED, Tracks
from starter.shopper_model import question_answers
from starter.trace import QuestionRow as QuestionValue

__all__ = ["QuestionValue", "separable", "value_questions"]


def value_questions(index: CatalogIndex, ranked: list[Ranked], tracks: Tracks, shown: set[int], turn: int,
                    cfg: Tunables) -> list[QuestionValue]:
    """Every question's value, best first (ties: concentration, then attribute order)."""
    rest: list[Ranked] = []
    covered = 0.0
    unshown = 1.0 - sum(_shown_probs(ranked, shown))
    enough = cfg.question_mass_covered * unshown
    limit = cfg.question_candidates
    for r in ranked:
        if r.idx in shown:
            continue
        rest.append(r)
        covered += r.prob
        # The far tail cannot change which candidate tops an answer group.
        if len(rest) >= limit or covered >= enough:
            break
    probs = [r.prob for r in rest]
    mass = sum(probs)
    if mass <= 0 or len(rest) <= 1:
        return []
    base = max(probs) / mass
    reward = hit_reward(1, turn + 1)
    products = index.products
    shares = [q / mass for q in probs]
    answers = [question_answers(products[r.idx], tracks[r.idx][DISCLOSED]) for r in rest]
    min_group_mass = cfg.min_group_mass
    out: list[QuestionValue] = []
    for k, attribute in enumerate(QUESTION_ATTRIBUTES):
        # Candidates that predict the same reply form one answer group (first-seen order).
        keys = [a[k] for a in answers]
        if keys.count(keys[0]) == len(keys):
            groups = [shares]
        else:
            by_answer: dict[tuple[str, ...], list[float]] = {}
            for key, q in zip(keys, shares):
                g = by_answer.get(key)
                if g is None:
                    by_answer[key] = [q]
                else:
                    g.append(q)
            groups = list(by_answer.values())
        sums = [sum(g) for g in groups]
        top1 = sum(map(max, groups))
        conc = sum(sum(map(mul, g, g)) / s for g, s in zip(groups, sums) if s > 0)
        real_groups = sum(map(min_group_mass.__le__, sums))
        out.append(QuestionValue(attribute, round((top1 - base) * reward, 6), round(top1, 6), round(conc, 6),
                                 real_groups))
    order = {a: k for k, a in enumerate(QUESTION_ATTRIBUTES)}
    out.sort(key=lambda q: (-q.value, -q.concentration, -q.groups, order[q.attribute]))
    return out


def _shown_probs(ranked: list[Ranked], shown: set[int]) -> list[float]:
    """The probabilities of the shown candidates, in ranked order."""
    out: list[float] = []
    if shown:
        for r in ranked:
            if r.idx in shown:
                out.append(r.prob)
                if len(out) == len(shown):
                    break
    return out


def separable(values: list[QuestionValue]) -> bool:
    """Whether some question still splits the remaining candidates."""
    return any(q.groups > 1 for q in values)
