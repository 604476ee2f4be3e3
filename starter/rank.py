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
from dataclasses import dataclass

from grounding.budget import BUDGET_WORDS
from grounding.words import FILLER, tokens
from starter import shopper_model as SM
from starter.catalog import CatalogIndex, Product
from starter.config import TUNABLES, Tunables
from starter.understand import Reading

Tracks = dict[int, "Track"]


@dataclass(frozen=True, slots=True)
class Track:
    """One candidate's account of the conversation so far (replaced, never changed)."""

    scenario: str
    disclosed: frozenset[str]
    exact: bool = True
    loglik: float = 0.0          # value evidence (0 when every message is exactly as predicted)
    text_ll: float = 0.0         # free-text relevance (latest cumulative query; 0 for template sessions)
    category_ll: float = 0.0     # shelf evidence (0 on the named shelf)
    evidence: tuple[float, ...] = ()   # per-turn similarity, for the trace

    def with_text(self, text_ll: float) -> "Track":
        return Track(self.scenario, self.disclosed, self.exact, self.loglik, text_ll, self.category_ll, self.evidence)

    def with_loglik(self, loglik: float) -> "Track":
        return Track(self.scenario, self.disclosed, self.exact, loglik, self.text_ll, self.category_ll, self.evidence)


_TOKSET_CACHE: dict[str, frozenset[str]] = {}
TOKEN_SET_CACHE_ENTRIES = TUNABLES.token_set_cache_entries


def _tok_set(text: str) -> frozenset[str]:
    """Content words of a text (cached: card values repeat across turns and products)."""
    got = _TOKSET_CACHE.get(text)
    if got is None:
        got = frozenset(t for t in tokens(text) if t not in FILLER)
        if len(_TOKSET_CACHE) < TOKEN_SET_CACHE_ENTRIES:
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


def free_text_words(obs: Reading) -> list[str]:
    """The content words of a non-template message, for text relevance (budget numbers and
    negated words excluded)."""
    words = (set(obs.keywords) | obs.extra_tokens) - set(obs.negated)
    if obs.budget_max is not None:
        words = {w for w in words if not w.replace(".", "").isdigit()}
    return sorted(words)


def text_relevance(index: CatalogIndex, words: list[str], cfg: Tunables) -> dict[int, float]:
    """BM25 relevance of each product to the shopper's free-text words so far, scaled to [0, 1].

    Shoppers who do not speak in templates name products the way titles and
    category paths do ("black leather boots for women"), which card values
    alone do not capture.  The query is cumulative, so a later "cotton" is
    read in the context of "summer dress".
    """
    hits = index.bm25(words, cfg.text_candidates)
    if not hits:
        return {}
    top = hits[0][1] or 1.0
    return {i: max(0.0, s / top) for i, s in hits}


def _without_budget(said: frozenset[str], obs: Reading) -> frozenset[str]:
    """Free text with a budget: its number and budget words are no product evidence."""
    if obs.template or obs.budget_max is None:
        return said
    return frozenset(w for w in said if w not in BUDGET_WORDS and not w.replace(".", "").isdigit())


def said_coverage(index: CatalogIndex, idx: int, said: frozenset[str]) -> float:
    """IDF-weighted share of the said words that appear on the product (title or any card value)."""
    have = index.product_tokens(idx)
    common = said & have
    return index.weight(common) / index.weight(said) if common else 0.0


def _opening_scenario(obs: Reading) -> str | None:
    if obs.kind == "open_buying":
        return "buying"
    if obs.kind == "open_override":
        return "intent_override"
    if obs.kind == "open_browsing":
        return "browsing"
    return None


def open_tracks(index: CatalogIndex, ids: list[int], obs: Reading, shelf_scores: dict[str, float],
                cfg: Tunables) -> tuple[Tracks, str]:
    """Tracks for the opening; returns (tracks, scenario) where scenario may be 'unknown'."""
    scenario = _opening_scenario(obs)
    tracks: dict[int, Track] = {}
    cat_toks = _tok_set(obs.category or "")
    negated = frozenset(obs.negated)
    browsing_cue = obs.browsing_cue
    template_said = _tok_set(obs.value_text or "") | obs.extra_tokens
    text_said = _tok_set(obs.text) | obs.extra_tokens
    said_by_shelf: dict[str, frozenset[str]] = {}     # free text: what was said beyond the shelf's own words
    for i in ids:
        p = index.products[i]
        shelf_sim = shelf_scores.get(p.shelf, 0.0)
        cat_ll = -cfg.shelf_beta * (1.0 - shelf_sim)
        if scenario is not None and obs.template:
            # The category is judged softly (cat_ll); exactness is about the value.
            value = SM.opening_value(p, scenario)
            exact = value is None or value == obs.value_text
            sim = 1.0 if exact else value_similarity(index, (value,), template_said)
            t = Track(scenario=scenario, disclosed=SM.initial_disclosed(p, scenario), exact=exact,
                      loglik=-cfg.mismatch_beta * (1.0 - sim), category_ll=cat_ll, evidence=(sim,))
        else:
            said = said_by_shelf.get(p.shelf)
            if said is None:
                said = said_by_shelf[p.shelf] = _without_budget((text_said - (cat_toks or _tok_set(p.shelf)))
                                                                - negated, obs)
            best = ("browsing", 1.0 if not said else (cfg.browsing_sim_cued if browsing_cue else cfg.browsing_sim_uncued))
            for hyp in ("buying", "intent_override"):
                sim = value_similarity(index, (SM.opening_value(p, hyp),), said)
                if sim > best[1]:
                    best = (hyp, sim)
            hyp, sim = best
            t = Track(scenario=hyp, disclosed=SM.initial_disclosed(p, hyp), exact=False,
                      loglik=-cfg.mismatch_beta * (1.0 - sim), category_ll=cat_ll, evidence=(sim,))
        tracks[i] = t
    return tracks, scenario or "unknown"


def with_relevance(tracks: Tracks, relevance: dict[int, float], cfg: Tunables) -> Tracks:
    """The tracks with their free-text term set from the latest cumulative relevance (unchanged when none)."""
    if not relevance:
        return tracks
    return {i: t.with_text(cfg.text_beta * (relevance.get(i, 0.0) - 1.0)) for i, t in tracks.items()}


def observe(index: CatalogIndex, tracks: Tracks, obs: Reading, last_ask: str | None, cfg: Tunables) -> Tracks:
    """Every track updated with a later message (reply, refusal or override)."""
    text = obs.text.strip()
    said = _tok_set(obs.value_text if obs.template and obs.value_text is not None else obs.text)
    said = _without_budget((said | obs.extra_tokens) - frozenset(obs.negated), obs)
    out: Tracks = {}
    for i, t in tracks.items():
        p = index.products[i]
        disclosed = t.disclosed
        if obs.kind == "override":
            exact = obs.template and SM.override_text(p) == text
            sim = value_similarity(index, (p.constraints[0],), said)
            disclosed = disclosed | {p.constraints[0]}
        elif obs.kind in ("boundary", "no_attribute", "free"):
            exact, sim = obs.template, 1.0
        else:
            predicted_text, values = SM.predict_reply(p, t.disclosed, last_ask)
            if obs.template:
                exact = predicted_text == text
            else:
                exact = False
            if obs.kind == "no_preference":
                sim = 1.0 if not values else cfg.no_preference_sim
            elif not said:
                sim = 1.0                      # nothing said about the product itself (e.g. only a budget)
            elif not values:
                sim = cfg.no_values_sim
            else:
                sim = value_similarity(index, values, said)
            if not obs.template and said and obs.kind == "values":
                # A shopper may answer with anything the product has, not only the values the
                # simulator would reveal next: partial credit for words found anywhere on it.
                sim = max(sim, cfg.any_value_credit * said_coverage(index, i, said))
            disclosed = disclosed | set(values)
        out[i] = Track(t.scenario, disclosed, t.exact and exact, t.loglik - cfg.mismatch_beta * (1.0 - sim),
                       t.text_ll, t.category_ll, t.evidence + (round(sim, 4),))
    return out


def with_soft_facts(index: CatalogIndex, tracks: Tracks, obs: Reading, cfg: Tunables) -> Tracks:
    """Negations and budgets from free text: a product that contradicts them loses weight."""
    if obs.template or (not obs.negated and obs.budget_max is None):
        return tracks
    out: Tracks = {}
    negated = set(obs.negated)
    for i, t in tracks.items():
        p = index.products[i]
        loglik = t.loglik
        if negated:
            words = set()
            for v in p.constraints:
                words |= set(tokens(v))
            words |= set(tokens(p.title))
            if words & negated:
                loglik -= cfg.mismatch_beta * cfg.negation_penalty_share
        if obs.budget_max is not None and p.price is not None and p.price > obs.budget_max * cfg.budget_slack:
            loglik -= cfg.mismatch_beta * cfg.over_budget_penalty_share
        out[i] = t if loglik == t.loglik else t.with_loglik(loglik)
    return out


@dataclass(frozen=True)
class Ranked:
    """A candidate with its posterior probability and score parts."""

    idx: int
    prob: float
    log_weight: float
    exact: bool
    log_prior: float
    loglik: float


def posterior(index: CatalogIndex, tracks: Tracks, excluded: set[int], cfg: Tunables,
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
        lw = lp + t.category_ll + t.loglik + t.text_ll
        if any_exact and not t.exact:
            lw -= cfg.inexact_penalty
        if i in doubtful:
            lw -= cfg.doubtful_penalty
        rows.append((i, lw, t, lp))
    top = max(r[1] for r in rows)
    total = sum(math.exp(r[1] - top) for r in rows)
    products: list[Product] = index.products
    ranked = [Ranked(i, math.exp(lw - top) / total, lw, t.exact, lp, t.loglik + t.category_ll + t.text_ll)
              for i, lw, t, lp in rows]
    ranked.sort(key=lambda r: (-r.log_weight, -products[r.idx].rating_number, products[r.idx].pid))
    return ranked
