"""Evidence and ranking: how well each candidate explains the conversation.

Every candidate carries a `Track`: the values the shopper would have
disclosed so far if it were the target, whether every message so far is
exactly what it predicts (`exact`), and a soft log-likelihood for wording
that is not the template's (IDF-weighted overlap between the values it
predicts and the content words actually said, so rare clues outweigh common
ones).  The posterior over them is `starter.posterior`.
"""
from __future__ import annotations

from typing import NamedTuple

from grounding.budget import BUDGET_WORDS
from grounding.words import FILLER, tokens
from contest import messages as M
from starter import shopper_model as SM
from starter.catalog import CatalogIndex
from starter.config import TUNABLES, Tunables
from starter.memo import RecentMemo
from starter.understand import Reading

class Track(NamedTuple):
    """One candidate's account of the conversation so far: the layout of a track.

    The pool's tracks are plain tuples in this layout, read by the field positions below:
    the garbage collector stops tracking an exact tuple of untracked items, never a tuple subclass,
    and at a million products the live sessions' 230,000 tracks were most of the work of each full
    collection (150-270 ms, in the middle of some turn).  Replaced, never changed."""

    scenario: str
    disclosed: SM.Disclosed
    exact: bool = True
    loglik: float = 0.0          # value evidence (0 when every message is exactly as predicted)
    text_ll: float = 0.0         # free-text relevance (latest cumulative query; 0 for template sessions)
    category_ll: float = 0.0     # shelf evidence (0 on the named shelf)
    evidence: tuple[float, ...] = ()   # per-turn similarity, for the trace


TrackRow = tuple[str, SM.Disclosed, bool, float, float, float, tuple[float, ...]]
Tracks = dict[int, TrackRow]
SCENARIO, DISCLOSED, EXACT, LOGLIK, TEXT_LL, CATEGORY_LL, EVIDENCE = range(7)


_TOKSET_CACHE: RecentMemo[str, tuple[str, ...]] = RecentMemo(TUNABLES.token_set_cache_entries)
SUBSTRING_SCAN_MAX_WORDS = TUNABLES.substring_scan_max_words


def _tok_words(text: str) -> tuple[str, ...]:
    """Content words of a text, once each (cached: card values repeat across turns and products).

    The memo keeps tuples, which the garbage collector stops tracking; a memo of 30,000 frozensets
    made every full collection walk their 460,000 words (about 80 ms, in the middle of some turn)."""
    got = _TOKSET_CACHE.get(text)
    if got is None:
        got = tuple(dict.fromkeys(t for t in tokens(text) if t not in FILLER))
        _TOKSET_CACHE.put(text, got)
    return got


def _tok_set(text: str) -> frozenset[str]:
    """Content words of a text, as a set."""
    return frozenset(_tok_words(text))


def value_similarity(index: CatalogIndex, predicted: tuple[str, ...] | list[str], said: frozenset[str]) -> float:
    """IDF-weighted F1 between the predicted values' words and the words said."""
    if said and not _may_share(predicted, said):
        return 0.0                     # no word in common (what the full computation finds, cheaply)
    if len(predicted) == 1:
        pred = _tok_set(predicted[0])
    else:
        pred = frozenset().union(*(_tok_words(v) for v in predicted)) if predicted else frozenset()
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


def _may_share(values: tuple[str, ...] | list[str], said: frozenset[str]) -> bool:
    """Whether a said word may be a word of the values.  Every token of a text is a substring of its
    lower-cased form (`grounding.words.tokens`), so a said word found in no value's lower-cased text
    is in none of their token sets: False proves the sets are disjoint, without tokenising.  A long
    message (a pasted list, a word salad) is checked against the values' (memoised) words instead:
    one scan per said word per value costs more than tokenising once.  Either way, False only when
    the sets are disjoint, where the full computation gives 0.0 too."""
    if len(said) > SUBSTRING_SCAN_MAX_WORDS:
        return any(not said.isdisjoint(_tok_words(value)) for value in values)
    for value in values:
        low = value.lower()
        for word in said:
            if word in low:
                return True
    return False


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
    common = said.intersection(index.product_tokens(idx))
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
    """Tracks for the opening; returns (tracks, scenario) where scenario may be 'unknown'.

    What a candidate's track depends on -- its shelf, its opening value -- recurs across
    candidates, so each is worked out once per call (the same arithmetic, so the same floats)."""
    scenario = _opening_scenario(obs)
    tracks: Tracks = {}
    products = index.products
    shelf_beta, mismatch_beta = cfg.shelf_beta, cfg.mismatch_beta
    # Shelf evidence: -shelf_beta x (1 - the shelf's score), 0 for a shelf not scored.
    cat_lls = {shelf: -shelf_beta * (1.0 - score) for shelf, score in shelf_scores.items()}
    off_shelf = -shelf_beta * (1.0 - 0.0)
    if scenario is not None and obs.template:
        # The category is judged softly (cat_ll); exactness is about the value.
        template_said = _tok_set(obs.value_text or "") | obs.extra_tokens
        by_value: dict[str | None, tuple[bool, float, tuple[float, ...]]] = {}
        firsts: dict[str, SM.Disclosed] = {}
        for i in ids:
            p = products[i]
            cat_ll = cat_lls.get(p.shelf, off_shelf)
            value = SM.opening_value(p, scenario)
            seen = by_value.get(value)
            if seen is None:
                exact = value is None or value == obs.value_text
                sim = 1.0 if exact else value_similarity(index, (value,), template_said)
                seen = by_value[value] = (exact, -mismatch_beta * (1.0 - sim), (sim,))
            if scenario == "buying":
                c0 = p.constraints[0]
                disclosed = firsts.get(c0)
                if disclosed is None:
                    disclosed = firsts[c0] = SM.initial_disclosed(p, scenario)
            else:
                disclosed = SM.initial_disclosed(p, scenario)
            tracks[i] = (scenario, disclosed, seen[0], seen[1], 0.0, cat_ll, seen[2])
        return tracks, scenario
    cat_toks = _tok_set(obs.category or "")
    negated = frozenset(obs.negated)
    text_said = _tok_set(obs.text) | obs.extra_tokens
    said_by_shelf: dict[str, frozenset[str]] = {}     # free text: what was said beyond the shelf's own words
    sims: dict[tuple[str | None, frozenset[str]], float] = {}
    browsing_sim = cfg.browsing_sim_cued if obs.browsing_cue else cfg.browsing_sim_uncued
    for i in ids:
        p = products[i]
        cat_ll = cat_lls.get(p.shelf, off_shelf)
        said = said_by_shelf.get(p.shelf)
        if said is None:
            said = said_by_shelf[p.shelf] = _without_budget((text_said - (cat_toks or _tok_set(p.shelf)))
                                                            - negated, obs)
        best = ("browsing", 1.0 if not said else browsing_sim)
        for hyp in ("buying", "intent_override"):
            value = SM.opening_value(p, hyp)
            sim = sims.get((value, said))
            if sim is None:
                sim = sims[(value, said)] = value_similarity(index, (value,), said)
            if sim > best[1]:
                best = (hyp, sim)
        hyp, sim = best
        tracks[i] = (hyp, SM.initial_disclosed(p, hyp), False, -mismatch_beta * (1.0 - sim), 0.0, cat_ll, (sim,))
    return tracks, scenario or "unknown"


def with_relevance(tracks: Tracks, relevance: dict[int, float], cfg: Tunables) -> Tracks:
    """The tracks with their free-text term set from the latest cumulative relevance (unchanged when none)."""
    if not relevance:
        return tracks
    beta = cfg.text_beta
    return {i: t[:TEXT_LL] + (beta * (relevance.get(i, 0.0) - 1.0),) + t[CATEGORY_LL:] for i, t in tracks.items()}


def observe(index: CatalogIndex, tracks: Tracks, obs: Reading, last_ask: str | None, cfg: Tunables) -> Tracks:
    """Every track updated with a later message (reply, refusal or override).

    A reply's exactness and similarity depend on the candidate only through the values it
    predicts, so each distinct prediction is judged once per call."""
    text = obs.text.strip()
    template = obs.template
    kind = obs.kind
    said = _tok_set(obs.value_text if template and obs.value_text is not None else obs.text)
    said = _without_budget((said | obs.extra_tokens) - frozenset(obs.negated), obs)
    beta = cfg.mismatch_beta
    products = index.products
    out: Tracks = {}
    if kind == "override":
        by_first: dict[str, tuple[bool, float]] = {}
        for i, t in tracks.items():
            p = products[i]
            c0 = p.constraints[0]
            seen = by_first.get(c0)
            if seen is None:
                seen = by_first[c0] = (template and SM.override_text(p) == text,
                                       value_similarity(index, (c0,), said))
            exact, sim = seen
            disclosed = t[DISCLOSED] if c0 in t[DISCLOSED] else t[DISCLOSED] + (c0,)
            out[i] = (t[SCENARIO], disclosed, t[EXACT] and exact, t[LOGLIK] - beta * (1.0 - sim),
                      t[TEXT_LL], t[CATEGORY_LL], t[EVIDENCE] + (round(sim, 4),))
        return out
    if kind in ("boundary", "no_attribute", "free"):
        exact, sim = template, 1.0
        for i, t in tracks.items():
            out[i] = (t[SCENARIO], t[DISCLOSED], t[EXACT] and exact, t[LOGLIK] - beta * (1.0 - sim),
                      t[TEXT_LL], t[CATEGORY_LL], t[EVIDENCE] + (round(sim, 4),))
        return out
    asked = isinstance(last_ask, str) and last_ask != ""
    position = SM.ANSWER_POSITION.get(last_ask) if asked else None    # type: ignore[arg-type]
    credit = not template and bool(said) and kind == "values"
    # Per predicted reply: exact?, similarity, its mismatch penalty and its trace entry (the same
    # floats as computing them per candidate).
    by_values: dict[tuple[str, ...], tuple[bool, float, float, tuple[float]]] = {}
    answer_at, answer_values = SM.answer_at, SM.answer_values
    for i, t in tracks.items():
        p = products[i]
        disclosed = t[DISCLOSED]
        if not asked:
            values: tuple[str, ...] = ()
        elif position is not None:
            values = answer_at(p, disclosed, position)
        else:
            values = answer_values(p, disclosed, last_ask)   # type: ignore[arg-type]
        seen = by_values.get(values)
        if seen is None:
            sim = _reply_similarity(index, kind, values, said, cfg)
            seen = by_values[values] = (template and M.reply_message(values, last_ask) == text, sim,
                                        beta * (1.0 - sim), (round(sim, 4),))
        exact, sim, penalty, entry = seen
        if credit:
            # A shopper may answer with anything the product has, not only the values the
            # simulator would reveal next: partial credit for words found anywhere on it.
            sim = max(sim, cfg.any_value_credit * said_coverage(index, i, said))
            penalty, entry = beta * (1.0 - sim), (round(sim, 4),)
        if values:
            disclosed = disclosed + values       # undisclosed by construction (a card's twin value may come twice)
        out[i] = (t[SCENARIO], disclosed, t[EXACT] and exact, t[LOGLIK] - penalty, t[TEXT_LL], t[CATEGORY_LL],
                  t[EVIDENCE] + entry)
    return out


def _reply_similarity(index: CatalogIndex, kind: str, values: tuple[str, ...], said: frozenset[str],
                      cfg: Tunables) -> float:
    """How well a reply matches the values a candidate predicts (before any-value credit)."""
    if kind == "no_preference":
        return 1.0 if not values else cfg.no_preference_sim
    if not said:
        return 1.0                      # nothing said about the product itself (e.g. only a budget)
    if not values:
        return cfg.no_values_sim
    return value_similarity(index, values, said)


def with_soft_facts(index: CatalogIndex, tracks: Tracks, obs: Reading, cfg: Tunables) -> Tracks:
    """Negations and budgets from free text: a product that contradicts them loses weight."""
    if obs.template or (not obs.negated and obs.budget_max is None):
        return tracks
    out: Tracks = {}
    negated = set(obs.negated)
    for i, t in tracks.items():
        p = index.products[i]
        loglik = t[LOGLIK]
        if negated:
            # The words of its title and card values (the same set as tokenising each part).
            if index.holds_any(i, negated):
                loglik -= cfg.mismatch_beta * cfg.negation_penalty_share
        if obs.budget_max is not None and p.price is not None and p.price > obs.budget_max * cfg.budget_slack:
            loglik -= cfg.mismatch_beta * cfg.over_budget_penalty_share
        out[i] = t if loglik == t[LOGLIK] else t[:LOGLIK] + (loglik,) + t[TEXT_LL:]
    return out
