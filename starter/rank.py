"""Evidence and ranking: how well each candidate explains the conversation.

Every candidate carries a `Track`: the values the shopper would have
disclosed so far if it were the target, whether every message so far is
exactly what it predicts (`exact`), and a soft log-likelihood for wording
that is not the template's (IDF-weighted overlap between the values it
predicts and the content words actually said, so rare clues outweigh common
ones).  The posterior is prior x evidence: with exact explanations available
only they compete and popularity orders them; otherwise soft evidence leads
and popularity is a bounded tie-break.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from starter import shopper_model as SM
from starter.catalog import CatalogIndex, Product, tokens
from starter.config import Tunables
from starter.parse import FILLER, Observation

_BROWSING_CUES = ("exploring", "browsing", "not sure", "nothing specific", "window", "making up my mind",
                  "just looking", "no idea", "undecided")


@dataclass
class Track:
    """One candidate's account of the conversation so far."""

    scenario: str
    disclosed: frozenset[str]
    exact: bool = True
    loglik: float = 0.0          # value evidence (0 when every message is exactly as predicted)
    category_ll: float = 0.0     # shelf evidence (0 on the named shelf)
    evidence: list[float] = field(default_factory=list)   # per-turn similarity, for the snapshot


_TOKSET_CACHE: dict[str, frozenset[str]] = {}


def _tok_set(text: str) -> frozenset[str]:
    """Content words of a text (cached: card values repeat across turns and products)."""
    got = _TOKSET_CACHE.get(text)
    if got is None:
        got = frozenset(t for t in tokens(text) if t not in FILLER)
        if len(_TOKSET_CACHE) < 200_000:
            _TOKSET_CACHE[text] = got
    return got


def value_similarity(index: CatalogIndex, predicted: tuple[str, ...] | list[str], said: frozenset[str]) -> float:
    """IDF-weighted F1 between the predicted values' words and the words said."""
    if len(predicted) == 1:
        pred = _tok_set(predicted[0])
    else:
        pred = frozenset().union(*(_tok_set(v) for v in predicted)) if predicted else frozenset()
    if not pred and not said:
        return 1.0
    if not pred or not said:
        return 0.0
    common = pred & said
    if not common:
        return 0.0
    matched = index.weight(common)
    recall = matched / index.weight(pred)
    precision = matched / index.weight(said)
    return 2 * recall * precision / (recall + precision)


def _opening_scenario(obs: Observation) -> str | None:
    if obs.kind == "open_buying":
        return "buying"
    if obs.kind == "open_override":
        return "intent_override"
    if obs.kind == "open_browsing":
        return "browsing"
    return None


def open_tracks(index: CatalogIndex, ids: list[int], obs: Observation, shelf_scores: dict[str, float],
                cfg: Tunables) -> tuple[dict[int, Track], str]:
    """Tracks for the opening; returns (tracks, scenario) where scenario may be 'unknown'."""
    scenario = _opening_scenario(obs)
    tracks: dict[int, Track] = {}
    cat_toks = _tok_set(obs.category or "")
    negated = frozenset(obs.negated)
    low = obs.text.lower()
    browsing_cue = any(c in low for c in _BROWSING_CUES)
    for i in ids:
        p = index.products[i]
        shelf_sim = shelf_scores.get(p.shelf, 0.0)
        cat_ll = -cfg.shelf_beta * (1.0 - shelf_sim)
        if scenario is not None and obs.template:
            # The category is judged softly (cat_ll); exactness is about the value.
            value = SM.opening_value(p, scenario)
            exact = value is None or value == obs.value_text
            said = _tok_set(obs.value_text or "") | obs.extra_tokens
            sim = 1.0 if exact else value_similarity(index, (value,), said)
            t = Track(scenario=scenario, disclosed=SM.initial_disclosed(p, scenario), exact=exact,
                      loglik=-cfg.mismatch_beta * (1.0 - sim), category_ll=cat_ll, evidence=[sim])
        else:
            said = ((_tok_set(obs.text) | obs.extra_tokens) - (cat_toks or _tok_set(p.shelf))) - negated
            best = ("browsing", 1.0 if not said else (0.6 if browsing_cue else 0.3))
            for hyp in ("buying", "intent_override"):
                sim = value_similarity(index, (SM.opening_value(p, hyp),), said)
                if sim > best[1]:
                    best = (hyp, sim)
            hyp, sim = best
            t = Track(scenario=hyp, disclosed=SM.initial_disclosed(p, hyp), exact=False,
                      loglik=-cfg.mismatch_beta * (1.0 - sim), category_ll=cat_ll, evidence=[sim])
        tracks[i] = t
    return tracks, scenario or "unknown"


def observe(index: CatalogIndex, tracks: dict[int, Track], obs: Observation, last_ask: str | None,
            cfg: Tunables) -> None:
    """Update every track with a later message (reply, refusal or override)."""
    text = obs.text.strip()
    said = _tok_set(obs.value_text if obs.template and obs.value_text is not None else obs.text)
    said = (said | obs.extra_tokens) - frozenset(obs.negated)
    for i, t in tracks.items():
        p = index.products[i]
        if obs.kind == "override":
            exact = obs.template and SM.override_text(p) == text
            sim = value_similarity(index, (p.constraints[0],), said)
            t.disclosed = t.disclosed | {p.constraints[0]}
        elif obs.kind in ("boundary", "no_attribute", "free"):
            exact, sim = obs.template, 1.0
        else:
            predicted_text, values = SM.predict_reply(p, t.disclosed, last_ask)
            if obs.template:
                exact = predicted_text == text
            else:
                exact = False
            if obs.kind == "no_preference":
                sim = 1.0 if not values else 0.25
            elif not values:
                sim = 0.1 if said else 1.0
            else:
                sim = value_similarity(index, values, said)
            t.disclosed = t.disclosed | set(values)
        t.exact = t.exact and exact
        t.loglik -= cfg.mismatch_beta * (1.0 - sim)
        t.evidence.append(round(sim, 4))


def apply_soft_facts(index: CatalogIndex, tracks: dict[int, Track], obs: Observation, cfg: Tunables) -> None:
    """Negations and budgets from free text: a product that contradicts them loses weight."""
    if obs.template or (not obs.negated and obs.budget_max is None):
        return
    for i, t in tracks.items():
        p = index.products[i]
        if obs.negated:
            words = set()
            for v in p.constraints:
                words |= set(tokens(v))
            words |= set(tokens(p.title))
            if words & set(obs.negated):
                t.loglik -= cfg.mismatch_beta * 0.5
        if obs.budget_max is not None and p.price is not None and p.price > obs.budget_max * 1.1:
            t.loglik -= cfg.mismatch_beta * 0.3


@dataclass(frozen=True)
class Ranked:
    """A candidate with its posterior probability and score parts."""

    idx: int
    prob: float
    log_weight: float
    exact: bool
    log_prior: float
    loglik: float


def posterior(index: CatalogIndex, tracks: dict[int, Track], excluded: set[int], cfg: Tunables,
              doubtful: set[int] | frozenset[int] = frozenset()) -> list[Ranked]:
    """Candidates by posterior probability (tie: popularity, then parent_asin).

    Candidates that explain every message exactly dominate (the others pay
    `inexact_penalty`) without erasing the rest: a damaged message can equal
    another product's value, and the rest must stay findable.  `doubtful`
    candidates were shown on a turn that may not have counted and pay
    `doubtful_penalty` instead of being removed.
    """
    live = [(i, t) for i, t in tracks.items() if i not in excluded]
    if not live:
        return []
    any_exact = any(t.exact for _, t in live)
    rows = []
    for i, t in live:
        lp = index.log_prior[i]
        lw = lp + t.category_ll + t.loglik
        if any_exact and not t.exact:
            lw -= cfg.inexact_penalty
        if i in doubtful:
            lw -= cfg.doubtful_penalty
        rows.append((i, lw, t, lp))
    top = max(r[1] for r in rows)
    total = sum(math.exp(r[1] - top) for r in rows)
    products: list[Product] = index.products
    ranked = [Ranked(i, math.exp(lw - top) / total, lw, t.exact, lp, t.loglik + t.category_ll)
              for i, lw, t, lp in rows]
    ranked.sort(key=lambda r: (-r.log_weight, -products[r.idx].rating_number, products[r.idx].pid))
    return ranked
