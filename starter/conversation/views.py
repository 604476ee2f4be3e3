"""The trace's views of what a turn read and decided, made from the state and the reading."""
from __future__ import annotations

from typing import Any, Sequence

from starter.conversation import trace
from starter.conversation.state import SessionState
from starter.index.catalog import CatalogIndex, Product
from starter.reading.understand import Reading, Understanding
from starter.template.posterior import Ranked

TRACE_ROWS = 20          # candidates a turn's trace shows


def recommendations(index: CatalogIndex, ranked: Sequence[Ranked], count: int) -> list[dict[str, Any]]:
    """The contract's list: the first `count` candidates with their probabilities."""
    return [{"parent_asin": index.products[r.idx].pid, "score": round(r.prob, 6)} for r in ranked[:count]]


def candidate_rows(products: Sequence[Product], first: list[Ranked],
                   scenarios: list[str]) -> tuple[trace.CandidateRow, ...]:
    """The trace's rows of the leading candidates (called when the trace is read)."""
    return tuple(trace.CandidateRow(p.pid, p.title[:120], p.shelf, p.price, p.rating_number, round(r.prob, 6),
                                    r.exact, round(r.log_prior, 4), round(r.loglik, 4), scenario)
                 for r, scenario in zip(first, scenarios) for p in (products[r.idx],))


def grounded_row(g: Any) -> trace.ConstraintRow:
    return trace.ConstraintRow(g.attribute, g.value, g.source, round(g.confidence, 3), g.negated, g.evidence,
                               tuple(g.clue_matches[:3]))


def understanding_rows(understanding: Understanding | None
                       ) -> tuple[list[trace.ConstraintRow], list[trace.RejectionRow]]:
    """The constraints understanding accepted and rejected, as trace rows."""
    if understanding is None:
        return [], []
    return ([grounded_row(g) for g in understanding.accepted],
            [trace.RejectionRow(r.value, r.reason, r.attribute, r.source) for r in understanding.rejected])


def understood(state: SessionState, accepted: Sequence[trace.ConstraintRow]) -> tuple[str, ...]:
    """What the template path took from the shopper so far, in their words ("black · not leather · under $50"):
    the constraints accepted on the turns since the last override ("ignore my earlier preference") and on this
    one (`accepted`), each once, in the order said."""
    since = state.override_turn or 1
    rows = [r for t in state.traces if t.turn >= since for r in t.accepted] + list(accepted)
    labels: dict[str, str] = {}
    for r in rows:
        label = f"not {r.value}" if r.negated else r.value
        labels.setdefault(label.casefold(), label)
    return tuple(labels.values())


def parsed(reading: Reading) -> trace.ParsedView:
    obs = reading.obs
    return trace.ParsedView(obs.kind, reading.kind, obs.template, obs.category, obs.value_text, obs.attribute,
                            tuple(obs.facts.keywords[:30]), tuple(obs.facts.materials), tuple(obs.facts.colors),
                            tuple(reading.negated), obs.facts.budget_max, obs.text[:500] if obs.typed else None)


def understanding_view(u: Understanding | None) -> trace.UnderstandingView | None:
    if u is None:
        return None
    return trace.UnderstandingView(tuple((c, s) for c, s in u.clue_matches[:8]), tuple(sorted(u.corrected_tokens)),
                                   tuple(u.rejected_phrases[:20]), u.llm_called, u.llm_error, u.llm_error_kind,
                                   u.intent, u.no_preference_attribute, dict(u.usage))


def state_view(state: SessionState) -> trace.StateView:
    return trace.StateView(state.scenario, state.path, state.override_seen, state.override_turn, state.boundary_seen,
                           tuple(state.asked), tuple(state.refused), tuple(state.exhausted), len(state.excluded),
                           tuple(trace.ConstraintRow(c.attribute, c.value, c.source, c.confidence, c.negated,
                                                     turn=c.turn) for c in state.constraints))
