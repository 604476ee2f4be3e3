"""Evidence and ranking: how well each candidate explains the conversation.

Every candidate carries a track (a row of `starter.template.tracks.TrackTable`): the
card values the shopper would have disclosed so far if it were the target,
whether every message so far is exactly what it predicts (`exact`), and a soft
log-likelihood for wording that is not the template's (IDF-weighted overlap
between the values it predicts and the content words actually said, so rare
clues outweigh common ones; `starter.template.similarity`).  Predictions are read off
the card arrays (`starter.index.card_arrays`) and judged once per distinct prediction, for
the whole pool at once.  The posterior over them is `starter.template.posterior`.
"""
from __future__ import annotations

import numpy as np

from grounding.budget import BUDGET_WORDS
from contest import messages
from starter.index.catalog import CatalogIndex
from starter.settings import EvidenceSettings
from starter.index.card_arrays import NO_VALUE, REPLY_COLUMN, CardArrays
from starter.template import similarity
from starter.index.arrays import groups, member
from starter.template.similarity import _tok_set, value_similarity
from starter.template.tracks import SCENARIO_CODE as TRACK_SCENARIOS, TrackTable
from starter.reading.understand import Reading
from starter.reading.kinds import MessageKind, Scenario



def free_text_words(obs: Reading) -> list[str]:
    """The content words of a non-template message, for text relevance (budget numbers and
    negated words excluded)."""
    words = (set(obs.keywords) | obs.extra_tokens) - set(obs.negated)
    if obs.budget_max is not None:
        words = {w for w in words if not w.replace(".", "").isdigit()}
    return sorted(words)


def text_relevance(index: CatalogIndex, words: list[str], cfg: EvidenceSettings) -> dict[int, float]:
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
    if obs.kind == MessageKind.OPEN_BUYING:
        return Scenario.BUYING
    if obs.kind == MessageKind.OPEN_OVERRIDE:
        return Scenario.INTENT_OVERRIDE
    if obs.kind == MessageKind.OPEN_BROWSING:
        return Scenario.BROWSING
    return None


def _gathered(per_unique: list, inverse: np.ndarray, dtype: type) -> np.ndarray:
    """A value worked out once per distinct code, for every element (the same Python floats)."""
    return np.asarray(per_unique, dtype=dtype)[inverse] if per_unique else np.zeros(len(inverse), dtype=dtype)


def open_tracks(index: CatalogIndex, ids: list[int], obs: Reading, shelf_scores: dict[str, float],
                cfg: EvidenceSettings) -> tuple[TrackTable, str]:
    """Tracks for the opening; returns (tracks, scenario) where scenario may be 'unknown'.

    What a candidate's track depends on -- its shelf, its opening value -- recurs across
    candidates, so each is worked out once per distinct value (the same arithmetic, so the
    same floats as per candidate)."""
    scenario = _opening_scenario(obs)
    rows = np.asarray(ids, dtype=np.int64)
    shelf, cat_ll = _shelf_evidence(index.cards, rows, shelf_scores, cfg.shelf_beta)
    if scenario is not None and obs.template:
        return _template_opening(index, rows, obs, scenario, cat_ll, cfg), scenario
    return _free_opening(index, rows, shelf, obs, cat_ll, cfg), scenario or Scenario.UNKNOWN


def _shelf_evidence(cards: CardArrays, rows: np.ndarray, shelf_scores: dict[str, float],
                    shelf_beta: float) -> tuple[np.ndarray, np.ndarray]:
    """Each candidate's shelf and its shelf evidence: -shelf_beta x (1 - the shelf's score), 0 for a shelf
    not scored."""
    by_shelf = np.full(len(cards.shelf_id), -shelf_beta * (1.0 - 0.0), dtype=np.float64)
    for shelf, score in shelf_scores.items():
        k = cards.shelf_id.get(shelf)
        if k is not None:
            by_shelf[k] = -shelf_beta * (1.0 - score)
    shelf = cards.shelf[rows]
    return shelf, by_shelf[shelf]


def _template_opening(index: CatalogIndex, rows: np.ndarray, obs: Reading, scenario: Scenario, cat_ll: np.ndarray,
                      cfg: EvidenceSettings) -> TrackTable:
    """A template opening: the category is judged softly (cat_ll); exactness is about the value."""
    cards = index.cards
    n = len(rows)
    template_said = _tok_set(obs.value_text or "") | obs.extra_tokens
    if scenario == Scenario.BROWSING:
        value_ids = np.full(n, -1, dtype=np.int64)
    else:
        value_ids = cards.values[rows, cards.lengths[rows] - 1 if scenario == Scenario.INTENT_OVERRIDE else 0]
    values, inverse = groups(value_ids)
    said_id = index.clues.id_of(obs.value_text) if obs.value_text is not None else None
    exact = (values < 0) | (values == (said_id if said_id is not None else -2))
    sims = np.ones(len(values), dtype=np.float64)
    sims[~exact] = similarity.pair_similarities(index, values[~exact], np.full(int((~exact).sum()), NO_VALUE),
                                         template_said)
    disclosed = cards.twins[rows, 0] if scenario == Scenario.BUYING and n else np.zeros(n, dtype=np.uint8)
    return TrackTable(rows, np.full(n, TRACK_SCENARIOS[scenario], dtype=np.int8), disclosed, exact[inverse],
                      (-cfg.mismatch_beta * (1.0 - sims))[inverse], np.zeros(n, dtype=np.float64), cat_ll,
                      (sims[inverse],))


def _free_opening(index: CatalogIndex, rows: np.ndarray, shelf: np.ndarray, obs: Reading, cat_ll: np.ndarray,
                  cfg: EvidenceSettings) -> TrackTable:
    """A free-text opening: each candidate takes the scenario hypothesis whose opening best matches what was
    said beyond its shelf's own words (browsing credits a fixed similarity)."""
    cards = index.cards
    n = len(rows)
    cat_toks = _tok_set(obs.category or "")
    negated = frozenset(obs.negated)
    text_said = _tok_set(obs.text) | obs.extra_tokens
    browsing_sim = cfg.browsing_sim_cued if obs.browsing_cue else cfg.browsing_sim_uncued
    # What was said beyond the shelf's own words, per shelf; each hypothesis's similarity per (shelf, value).
    said_of: dict[int, frozenset[str]] = {}
    browse_u: list[float] = []
    shelves, shelf_inverse = groups(shelf)
    for k in shelves.tolist():
        name = cards.shelves[k]
        said = said_of[k] = _without_budget((text_said - (cat_toks or _tok_set(name))) - negated, obs)
        browse_u.append(1.0 if not said else browsing_sim)
    best = _gathered(browse_u, shelf_inverse, np.float64)
    hyp = np.full(n, TRACK_SCENARIOS[Scenario.BROWSING], dtype=np.int8)
    sims: dict[tuple[int, frozenset[str]], float] = {}
    for name, position in ((Scenario.BUYING, 0), (Scenario.INTENT_OVERRIDE, cards.lengths[rows] - 1)):
        pairs, inverse = groups(shelf * (cards.value_count + 1) + cards.values[rows, position])
        keys = [(v, said_of[k]) for k, v in (divmod(code, cards.value_count + 1) for code in pairs.tolist())]
        _add_similarities(index, [key for key in dict.fromkeys(keys) if key not in sims], sims)
        sim = _gathered([sims[key] for key in keys], inverse, np.float64)
        better = sim > best
        best = np.where(better, sim, best)
        hyp = np.where(better, np.int8(TRACK_SCENARIOS[name]), hyp)
    disclosed = np.where(hyp == TRACK_SCENARIOS[Scenario.BUYING], cards.twins[rows, 0] if n else 0, 0).astype(np.uint8)
    return TrackTable(rows, hyp.astype(np.int8), disclosed, np.zeros(n, dtype=bool), -cfg.mismatch_beta * (1.0 - best),
                      np.zeros(n, dtype=np.float64), cat_ll, (best,))


def _add_similarities(index: CatalogIndex, keys: list[tuple[int, frozenset[str]]],
                      sims: dict[tuple[int, frozenset[str]], float]) -> None:
    """`value_similarity` of each (value, words said) in `keys`, written into `sims`: the values judged
    against the same words said go through one `pair_similarities` call (the same floats)."""
    by_said: dict[frozenset[str], list[int]] = {}
    for v, said in keys:
        if v >= 0:
            by_said.setdefault(said, []).append(v)
        else:                                       # a card without values predicts no words
            sims[(v, said)] = value_similarity(index, (), said)
    for said, values in by_said.items():
        first = np.asarray(values, dtype=np.int64)
        got = similarity.pair_similarities(index, first, np.full(len(first), NO_VALUE), said)
        sims.update(zip(((v, said) for v in values), got.tolist()))


def with_relevance(tracks: TrackTable, relevance: dict[int, float], cfg: EvidenceSettings) -> TrackTable:
    """The tracks with their free-text term set from the latest cumulative relevance (unchanged when none)."""
    if not relevance:
        return tracks
    got = relevance.get
    score = np.fromiter((got(i, 0.0) for i in tracks.ids.tolist()), dtype=np.float64, count=len(tracks))
    return tracks.with_columns(text_ll=cfg.text_beta * (score - 1.0))


def observe(index: CatalogIndex, tracks: TrackTable, obs: Reading, last_ask: str | None, cfg: EvidenceSettings) -> TrackTable:
    """Every track updated with a later message (reply, refusal or override).

    A reply's exactness and similarity depend on the candidate only through the values it
    predicts, so each distinct prediction is judged once per call; the predictions themselves
    are read off the card arrays (`starter.index.card_arrays`)."""
    text = obs.text.strip()
    template = obs.template
    kind = obs.kind
    said = _tok_set(obs.value_text if template and obs.value_text is not None else obs.text)
    said = _without_budget((said | obs.extra_tokens) - frozenset(obs.negated), obs)
    beta = cfg.mismatch_beta
    cards = index.cards
    ids = tracks.ids
    n = len(ids)
    if kind == MessageKind.OVERRIDE:
        first, inverse = groups(cards.values[ids, 0])
        sims = similarity.pair_similarities(index, first, np.full(len(first), NO_VALUE), said)
        exact = _quoted(index, messages.OVERRIDE, text, first) if template else np.zeros(len(first), dtype=bool)
        disclosed = cards.disclose(ids, tracks.disclosed, np.zeros((n, 1), dtype=np.int64))
        return _updated(tracks, disclosed, exact[inverse], (beta * (1.0 - sims))[inverse], _rounded(sims)[inverse])
    if kind in (MessageKind.BOUNDARY, MessageKind.NO_ATTRIBUTE, MessageKind.FREE):
        sim = 1.0
        return _updated(tracks, tracks.disclosed, np.full(n, template, dtype=bool),
                        np.full(n, beta * (1.0 - sim), dtype=np.float64), np.full(n, round(sim, 4), dtype=np.float64))
    asked = isinstance(last_ask, str) and last_ask != ""
    if asked:
        positions, values = cards.revealed(ids, tracks.disclosed, REPLY_COLUMN[messages.reply_attribute(last_ask)])
    else:
        values = np.full((n, messages.VALUES_PER_REPLY), NO_VALUE, dtype=np.int64)
    codes, inverse = groups(cards.pair_codes(values))
    sims = _reply_similarities(index, kind, codes, said, cfg)
    exact = _exact_replies(index, codes, text, last_ask) if template else np.zeros(len(codes), dtype=bool)
    if not template and bool(said) and kind == MessageKind.VALUES:
        # A shopper may answer with anything the product has, not only the values the
        # simulator would reveal next: partial credit for words found anywhere on it.
        share = cfg.any_value_credit
        credited = [max(s, share * said_coverage(index, i, said)) for s, i in zip(sims[inverse].tolist(), ids.tolist())]
        penalty = np.asarray([beta * (1.0 - s) for s in credited], dtype=np.float64)
        entry = np.asarray([round(s, 4) for s in credited], dtype=np.float64)
    else:
        penalty, entry = (beta * (1.0 - sims))[inverse], _rounded(sims)[inverse]
    disclosed = cards.disclose(ids, tracks.disclosed, positions) if asked else tracks.disclosed
    return _updated(tracks, disclosed, exact[inverse], penalty, entry)


def _updated(tracks: TrackTable, disclosed: np.ndarray, exact: np.ndarray, penalty: np.ndarray,
             entry: np.ndarray) -> TrackTable:
    """The tracks after one message: disclosed values, exactness, the mismatch penalty, the trace entry."""
    return tracks.with_columns(disclosed=disclosed, exact=tracks.exact & exact, loglik=tracks.loglik - penalty,
                               evidence=tracks.evidence + (entry,))


def _reply_similarities(index: CatalogIndex, kind: str, codes: np.ndarray, said: frozenset[str],
                        cfg: EvidenceSettings) -> np.ndarray:
    """How well each distinct predicted reply (pair codes of `starter.index.card_arrays`) matches the reply that came
    (before any-value credit)."""
    first, second = index.cards.split_codes(codes)
    empty = first < 0
    if kind == MessageKind.NO_PREFERENCE:
        return np.where(empty, 1.0, cfg.no_preference_sim)
    if not said:
        return np.ones(len(codes), dtype=np.float64)      # nothing said about the product itself (e.g. only a budget)
    sims = np.full(len(codes), cfg.no_values_sim, dtype=np.float64)
    sims[~empty] = similarity.pair_similarities(index, first[~empty], second[~empty], said)
    return sims


def _exact_replies(index: CatalogIndex, codes: np.ndarray, text: str, last_ask: str | None) -> np.ndarray:
    """Which distinct predicted replies are word for word the reply that came (`messages.reply_message`)."""
    exact = np.zeros(len(codes), dtype=bool)
    if messages.reply_message((), last_ask) == text:
        exact |= codes == 0                     # the empty prediction (a pair of no values)
    inner = _slot(messages.VALUES, text)
    if inner is None or not isinstance(last_ask, str) or not last_ask:
        return exact
    # The values a reply quotes: the whole slot as one value, or split at a separator into two.
    id_of = index.clues.id_of
    quoted: list[tuple[int, int]] = []
    one = id_of(inner)
    if one is not None:
        quoted.append((one, NO_VALUE))
    sep = messages.VALUE_SEPARATOR
    at = inner.find(sep)
    while at >= 0:
        a, b = id_of(inner[:at]), id_of(inner[at + len(sep):])
        if a is not None and b is not None:
            quoted.append((a, b))
        at = inner.find(sep, at + 1)
    if not quoted:
        return exact
    return exact | member(codes, index.cards.pair_codes(np.asarray(quoted, dtype=np.int64)))


def _quoted(index: CatalogIndex, template: str, text: str, value_ids: np.ndarray) -> np.ndarray:
    """Which value ids fill the one slot of `template` to make `text`."""
    inner = _slot(template, text)
    got = index.clues.id_of(inner) if inner is not None else None
    return value_ids == got if got is not None else np.zeros(len(value_ids), dtype=bool)


def _slot(template: str, text: str) -> str | None:
    """What fills the one slot of `template` in `text` (None when `text` is not that template)."""
    head, tail = messages.template_parts(template)
    if len(text) < len(head) + len(tail) or not text.startswith(head) or not text.endswith(tail):
        return None
    return text[len(head):len(text) - len(tail)]


def _rounded(sims: np.ndarray) -> np.ndarray:
    """`round(sim, 4)` of each similarity (Python's rounding, once per distinct value)."""
    values, at = groups(sims)
    return np.asarray([round(x, 4) for x in values.tolist()], dtype=np.float64)[at]


def with_soft_facts(index: CatalogIndex, tracks: TrackTable, obs: Reading, cfg: EvidenceSettings) -> TrackTable:
    """Negations and budgets from free text: a product that contradicts them loses weight."""
    if obs.template or (not obs.negated and obs.budget_max is None):
        return tracks
    negated = set(obs.negated)
    products = index.products
    negation = cfg.mismatch_beta * cfg.negation_penalty_share
    over_budget = cfg.mismatch_beta * cfg.over_budget_penalty_share
    loglik = tracks.loglik.tolist()
    for k, i in enumerate(tracks.ids.tolist()):
        # The words of its title and card values (the same set as tokenising each part).
        if negated and index.holds_any(i, negated):
            loglik[k] -= negation
        price = products[i].price
        if obs.budget_max is not None and price is not None and price > obs.budget_max * cfg.budget_slack:
            loglik[k] -= over_budget
    return tracks.with_columns(loglik=np.asarray(loglik, dtype=np.float64))
