"""One turn: parse -> understand -> update state -> retrieve -> rank -> ask -> commit -> respond.

Each step is a named decision in its own module; this module only sequences
them over the session state, and every change of that state is an event
applied by `state.apply`.  The turn's trace is built here from what each
decision returned.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Sequence

from contest.card import classify
from grounding import Gate
from grounding.shelves import ShelfGuess
from grounding.words import MORE_OPTIONS_CUE
from starter.template import questions as ASK
from starter.template import commit as COMMIT
from starter.people import ranking as PEOPLE
from starter.template import posterior as POSTERIOR
from starter.template import evidence as RANK
from starter.template import retrieve as RETRIEVE
from starter.conversation import trace as T
from starter.index.catalog import CatalogIndex, Product
from starter.config import MAX_TURNS, TOP_K, Tunables
from starter.reading.parse import parse_message
from starter.template.evidence import Tracks
from starter.replies import people_message, response_message
from starter.template.rerank import Reranker
from starter.conversation.state import (ConstraintsRecorded, Constraint, MessageExplained, MessageRead, PathReplayed, PoolGrown,
                           PoolOpened, RelevanceComputed, ResponseSent, SessionState, TracksUpdated, TurnTraced,
                           UsageAdded, apply)
from starter.reading.understand import Reading, Understander, Understanding

_ZERO = (("prompt_tokens", 0), ("completion_tokens", 0))
TRACE_ROWS = 20          # candidates a turn's trace shows


class TurnPipeline:
    """The decisions of a turn, bound to one catalog and one configuration."""

    def __init__(self, index: CatalogIndex, gate: Gate, cfg: Tunables, understander: Understander,
                 reranker: Reranker | None) -> None:
        self.index = index
        self.gate = gate
        self.shelves = gate.shelves
        self.cfg = cfg
        self.understander = understander
        self.reranker = reranker
        self.brands = PEOPLE.Brands(index)

    def play(self, state: SessionState, user_message: Any, turn: Any, top_k: Any) -> dict:
        """Answer one shopper message; returns the contract's response dict."""
        cfg, index = self.cfg, self.index
        k_limit = top_k if isinstance(top_k, int) and not isinstance(top_k, bool) and 0 < top_k <= TOP_K else TOP_K
        obs = parse_message(user_message, state.turn + 1, self.shelves.lower)
        understanding: Understanding | None = None
        if self._needs_understanding(obs):
            understanding = self.understander.understand(obs, self._llm_context(state), state.turn + 1)
            reading = understanding.reading
        else:
            reading = Reading.of(obs)
        usage = dict(understanding.usage) if understanding is not None else dict(_ZERO)
        apply(state, MessageRead(obs, reading, tuple(usage.items())))
        turn_no = turn if isinstance(turn, int) and not isinstance(turn, bool) and 1 <= turn <= MAX_TURNS \
            else min(state.turn, MAX_TURNS)
        opening = self._open_free_text(state, reading) if state.pool is None and not reading.template else None
        if state.people and reading.kind == "no_preference" and state.last_ask == "other" \
                and PEOPLE.says_only_no_preference(reading.text, "other") \
                and sum(len(r.keywords) for r in state.readings) <= cfg.handoff_max_words:
            self._leave_people(state)
        if state.people:
            return self._play_people(state, obs, reading, understanding, usage, turn_no, k_limit)

        shelf_view, accepted, rejected = self._update_evidence(state, reading, opening)
        if understanding is not None:
            assert state.pool is not None
            self._grow(state, RETRIEVE.clue_growth(index, state.pool, understanding.clue_matches, cfg, state.turn))
            accepted += [_grounded_row(g) for g in understanding.accepted]
            rejected += [T.RejectionRow(r.value, r.reason, r.attribute, r.source) for r in understanding.rejected]

        ranked = POSTERIOR.posterior(index, state.tracks, state.excluded, cfg, state.doubtful)
        rerank_info = None
        if self.reranker is not None:
            ranked, rerank_info = self.reranker.rerank(ranked, _needs(state), set(reading.negated))
            spent = {k: v for k, v in (rerank_info.get("usage") or {}).items() if k in usage and isinstance(v, int)}
            for k, v in spent.items():
                usage[k] += v
            apply(state, UsageAdded(tuple(spent.items())))
        pre_override = state.pre_override()
        shown_guess = set() if pre_override or not ranked else {ranked[0].idx}
        questions = ASK.value_questions(index, ranked, state.tracks, shown_guess, turn_no, cfg)
        decision = COMMIT.decide(_horizon_probs(ranked), turn_no, ASK.separable(questions), pre_override,
                                 cfg.insurance_turn)
        count = min(decision.count, k_limit)
        shown = [r.idx for r in ranked[:count]]
        recs = self._recommendations(ranked, count)
        worth_asking = questions and questions[0].value > cfg.min_question_value and questions[0].groups > 1
        ask = questions[0].attribute if worth_asking and turn_no < MAX_TURNS else None
        response = {"message": response_message(len(recs), ask), "ask_attribute": ask, "recommendations": recs,
                    "usage": dict(usage)}
        apply(state, ResponseSent(tuple(shown), ask, response))

        assert state.pool is not None
        funnel = dict(state.pool.stages)
        funnel["live"] = len(ranked)
        funnel["exact_consistent"] = POSTERIOR.count_exact(ranked)
        apply(state, TurnTraced(T.TurnTrace(
            turn=turn_no, message=obs.text[:500], parsed=_parsed(reading),
            understanding=_understanding_view(understanding) if understanding is not None else None,
            shelf=shelf_view, accepted=tuple(accepted), rejected=tuple(rejected), state=_state_view(state),
            funnel=funnel, top=self._rows(ranked, state), questions=tuple(questions),
            commit=T.CommitView(count, decision.reason, decision.expected_value), rerank=rerank_info,
            ask_attribute=ask, recommendations=tuple(r["parent_asin"] for r in recs))))
        return response

    # ---- people -------------------------------------------------------------------------
    def _play_people(self, state: SessionState, obs: Any, reading: Reading, understanding: Understanding | None,
                     usage: dict[str, int], turn_no: int, k_limit: int) -> dict:
        """A person's turn: whole-product evidence over the whole conversation, facts, and a question in
        plain words (starter/people/ranking.py)."""
        cfg, index = self.cfg, self.index
        shown_before = set(state.doubtful) | set(state.excluded)
        facts = PEOPLE.conversation_facts(state.readings, self.brands)
        ranked, funnel = PEOPLE.rank_people(index, state.readings, facts, shown_before, cfg, self.brands)
        # Asked to see more, or nothing left to say: the horizon DP picks how many to show.
        exhausted = (reading.kind == "no_attribute" and state.turn > 1) or bool(MORE_OPTIONS_CUE.search(reading.text))
        decision = COMMIT.decide(_horizon_probs(ranked), turn_no, not exhausted, False, cfg.people_insurance_turn)
        count = min(decision.count, k_limit)
        shown = [r.idx for r in ranked[:count]]
        ask = "other" if turn_no < MAX_TURNS else None
        recs = self._recommendations(ranked, count)
        response = {"message": people_message(len(recs), ask, len(state.asked)), "ask_attribute": ask,
                    "recommendations": recs, "usage": dict(usage)}
        apply(state, ResponseSent(tuple(shown), ask, response))
        accepted = [_grounded_row(g) for g in understanding.accepted] if understanding is not None else []
        rejected = [T.RejectionRow(r.value, r.reason, r.attribute, r.source)
                    for r in (understanding.rejected if understanding is not None else [])]
        accepted += [T.ConstraintRow("brand", m.store, m.source, 1.0, evidence=m.said) for m in facts.brand_mentions]
        rejected += [T.RejectionRow(r.said, f"{r.reason} (store {r.store!r})", "brand", "catalog")
                     for r in facts.brand_refusals]
        funnel["live"] = len(ranked)
        apply(state, TurnTraced(T.TurnTrace(
            turn=turn_no, message=obs.text[:500], parsed=_parsed(reading),
            understanding=_understanding_view(understanding) if understanding is not None else None,
            accepted=tuple(accepted), rejected=tuple(rejected), state=_state_view(state), funnel=funnel,
            top=self._rows(ranked, state),
            commit=T.CommitView(count, decision.reason, decision.expected_value),
            understood=PEOPLE.understood(state.readings, facts),
            ask_attribute=ask, recommendations=tuple(r["parent_asin"] for r in recs))))
        return response

    def _leave_people(self, state: SessionState) -> None:
        """A shopper who answers "anything else?" with a bare "no preference" (nothing else said:
        `people.says_only_no_preference`) is not describing a product in their own words any more (a
        reworded template shopper whose card is used up): the template path, whose card evidence
        reads such a session best, takes over, replayed over everything said so far."""
        fresh = SessionState(state.session_id)
        for k in range(len(state.readings) - 1):
            apply(fresh, MessageRead(state.observations[k], state.readings[k]))
            self._update_evidence(fresh, state.readings[k])
            apply(fresh, ResponseSent(tuple(state.shown[k]), state.asks[k], {}))
        assert fresh.pool is not None
        apply(state, PathReplayed(fresh.pool, fresh.tracks, fresh.scenario, frozenset(fresh.card_explained),
                                  tuple(fresh.relevance_words), fresh.relevance))

    # ---- evidence -----------------------------------------------------------------------
    def _open_free_text(self, state: SessionState, reading: Reading) -> tuple[RETRIEVE.Pool, Tracks, str] | None:
        """A free-text opening: a person (people path, state.people) or a quoted template (its pool and tracks).

        Whether it quotes card values is judged on the opening's best BM25 matches (cheap); only a
        quoting opening pays for the template path's full pool."""
        hits = self.index.bm25(RETRIEVE.opening_words(reading), self.cfg.bm25_candidates)
        probe_tracks, _ = RANK.open_tracks(self.index, [i for i, _ in hits], reading, {}, self.cfg)
        if PEOPLE.is_quoting(reading, self.shelves, probe_tracks, self.cfg):
            pool = RETRIEVE.build_pool(self.index, self.shelves, reading, self.cfg, hits)
            tracks, scenario = RANK.open_tracks(self.index, pool.ids, reading, pool.shelf.scored, self.cfg)
            return pool, tracks, scenario
        apply(state, PoolOpened(RETRIEVE.Pool([], {}, ShelfGuess()), {}, "people", False, people=True))
        return None

    def _update_evidence(self, state: SessionState, reading: Reading,
                         opening: tuple[RETRIEVE.Pool, Tracks, str] | None = None
                         ) -> tuple[T.ShelfView | None, list[T.ConstraintRow], list[T.RejectionRow]]:
        """Retrieve on the opening, then fold each message into every candidate's track."""
        cfg, index = self.cfg, self.index
        shelf_view = None
        if state.pool is None:
            if opening is not None:
                pool, tracks, scenario = opening
            else:
                pool = RETRIEVE.build_pool(index, self.shelves, reading, cfg)
                tracks, scenario = RANK.open_tracks(index, pool.ids, reading, pool.shelf.scored, cfg)
            shelf_view = T.ShelfView(pool.shelf.exact, {k: round(v, 4) for k, v in pool.shelf.scored.items()})
            self._mark_explained(state, reading, tracks)
            tracks = RANK.with_relevance(tracks, self._relevance(state, pool.shelf.scored), cfg)
            if scenario == "unknown":
                best = POSTERIOR.most_probable(index, tracks, cfg)
                scenario = tracks.track(best).scenario if best is not None else "browsing"
            apply(state, PoolOpened(pool, tracks, scenario, reading.template))
        else:
            pool = state.pool
            tracks = RANK.observe(index, state.tracks, reading, state.last_ask, cfg)
            if not reading.template and reading.kind in ("values", "override"):
                self._mark_explained(state, reading, tracks)
                tracks = RANK.with_relevance(tracks, self._relevance(state, pool.shelf.scored), cfg)
            apply(state, TracksUpdated(tracks))
            no_explanation = not state.tracks.any_exact(state.excluded)
            if pool.shelf.exact is not None and no_explanation:
                self._grow(state, RETRIEVE.widen_shelf(index, self.shelves, pool, state.readings[0], cfg))
            if pool.shelf.exact is None:
                self._grow(state, RETRIEVE.expand_pool(index, pool, reading, cfg))
        apply(state, TracksUpdated(RANK.with_soft_facts(index, state.tracks, reading, cfg)))
        accepted, rejected = self._template_constraints(state, reading)
        return shelf_view, accepted, rejected

    def _mark_explained(self, state: SessionState, reading: Reading, tracks: Tracks) -> None:
        """Free text that some candidate's card values explain well is a quote of values:
        card evidence reads it better than text relevance would."""
        if reading.template:
            return
        best = tracks.last_evidence_max()
        if best >= self.cfg.card_explained_sim:
            apply(state, MessageExplained(state.turn - 1))

    def _relevance(self, state: SessionState, shelf_scores: dict[str, float]) -> dict[int, float]:
        """Text relevance for the shopper's free-text words so far ({} when there are none).

        Kept on the state for its word list: one turn may ask for it several times
        (evidence, then each batch of late candidates) and the BM25 query is the costly part.
        """
        words: list[str] = []
        for k, o in enumerate(state.readings):
            if o.kind == "free_opening" and o.browsing_cue:
                continue              # only browsing: the category is all there is to it
            if not o.template and k not in state.card_explained and o.kind in ("free_opening", "values",
                                                                               "override", "free"):
                words += [w for w in RANK.free_text_words(o) if w not in words]
        # Words that name a confidently recognised shelf are category evidence already;
        # as text they would only reorder that shelf against the popularity prior.
        for key, score in shelf_scores.items():
            if score >= self.cfg.named_shelf_score:
                named = self.shelves.words[key]
                words = [w for w in words if w not in named]
        if not words:
            return {}
        if state.relevance_words != words:
            apply(state, RelevanceComputed(tuple(words), RANK.text_relevance(self.index, words, self.cfg)))
        return state.relevance

    def _grow(self, state: SessionState, growth: RETRIEVE.Growth) -> None:
        """Add candidates, each with a track replayed from the opening over every later message."""
        assert state.pool is not None
        tracks = Tracks.empty()
        if growth.ids:
            shelf_scores = growth.shelf.scored if growth.shelf is not None else state.pool.shelf.scored
            tracks, _ = RANK.open_tracks(self.index, list(growth.ids), state.readings[0], shelf_scores, self.cfg)
            for k, later in enumerate(state.readings[1:]):
                tracks = RANK.observe(self.index, tracks, later, state.asks[k] if k < len(state.asks) else None,
                                      self.cfg)
            tracks = RANK.with_relevance(tracks, self._relevance(state, shelf_scores), self.cfg)
        apply(state, PoolGrown(growth, tracks))

    def _template_constraints(self, state: SessionState, reading: Reading
                              ) -> tuple[list[T.ConstraintRow], list[T.RejectionRow]]:
        """The values a template message states, kept only if the catalog knows them."""
        accepted: list[T.ConstraintRow] = []
        rejected: list[T.RejectionRow] = []
        if not (reading.template and reading.value_text):
            return accepted, rejected
        clues = self.index.clues
        value_text = reading.value_text
        parts = [value_text] if value_text in clues else [v.strip() for v in value_text.split(";")]
        kept: list[Constraint] = []
        for v in parts:
            if v in clues:
                attribute = classify(v)
                kept.append(Constraint(attribute=attribute, value=v, source="template", confidence=1.0,
                                       turn=state.turn))
                accepted.append(T.ConstraintRow(attribute, v, "template", 1.0, turn=state.turn))
            else:
                rejected.append(T.RejectionRow(v, "not a clue of any catalog product"))
        apply(state, ConstraintsRecorded(tuple(kept)))
        return accepted, rejected

    # ---- helpers ----------------------------------------------------------------------------
    def _needs_understanding(self, obs: Any) -> bool:
        """Free text always; a template only when its value is no catalog clue (damaged wording)."""
        if not obs.template:
            return True
        if not obs.value_text:
            return False
        return not RETRIEVE.has_value_clue(self.index, obs.value_text)

    def _llm_context(self, state: SessionState) -> dict[str, Any]:
        """What the model may know: the shelf, the values said so far, the last question."""
        shelf = None
        if state.pool is not None:
            shelf = state.pool.shelf.exact or next(iter(state.pool.shelf.scored), None)
        return {"shelf": shelf, "known": [c.value for c in state.constraints][-6:], "asked": state.last_ask}

    def _recommendations(self, ranked: list[POSTERIOR.Ranked], count: int) -> list[dict[str, Any]]:
        """The contract's list: the first `count` candidates with their probabilities."""
        return [{"parent_asin": self.index.products[r.idx].pid, "score": round(r.prob, 6)} for r in ranked[:count]]

    def _rows(self, ranked: Sequence[POSTERIOR.Ranked], state: SessionState) -> T.CandidateRows:
        """The trace's rows of the first `TRACE_ROWS` candidates (scenario "people" on the people path),
        made when the trace is read from what is taken now."""
        first = ranked[:TRACE_ROWS]
        if state.people:
            scenarios = ["people"] * len(first)
        elif isinstance(ranked, POSTERIOR.RankedList) and ranked.track_rows is not None:
            scenarios = state.tracks.scenarios_at(ranked.track_rows[:TRACE_ROWS])
        else:
            scenarios = state.tracks.scenarios_of([r.idx for r in first])
        return T.CandidateRows(partial(_candidate_rows, self.index.products, first, scenarios))


def _candidate_rows(products: Sequence[Product], first: list[POSTERIOR.Ranked],
                    scenarios: list[str]) -> tuple[T.CandidateRow, ...]:
    return tuple(T.CandidateRow(p.pid, p.title[:120], p.shelf, p.price, p.rating_number, round(r.prob, 6), r.exact,
                                round(r.log_prior, 4), round(r.loglik, 4), scenario)
                 for r, scenario in zip(first, scenarios) for p in (products[r.idx],))


def _horizon_probs(ranked: Sequence[POSTERIOR.Ranked]) -> list[float]:
    """The probabilities the commit policy reads: the first `COMMIT.HORIZON_ITEMS` (a ranked list makes
    its rows only when read, and a people turn ranks hundreds)."""
    return POSTERIOR.leading_probs(ranked, COMMIT.HORIZON_ITEMS)


def _needs(state: SessionState) -> str:
    """Everything the shopper has said about the product, for a reranker."""
    parts = []
    for o in state.observations:
        if o.template:
            if o.value_text:
                parts.append(o.value_text)
            if o.category:
                parts.append(o.category)
        else:
            parts.append(o.text)
    return ". ".join(parts)[:2000]


def _grounded_row(g: Any) -> T.ConstraintRow:
    return T.ConstraintRow(g.attribute, g.value, g.source, round(g.confidence, 3), g.negated, g.evidence,
                           tuple(g.clue_matches[:3]))


def _parsed(reading: Reading) -> T.ParsedView:
    obs = reading.obs
    return T.ParsedView(obs.kind, reading.kind, obs.template, obs.category, obs.value_text, obs.attribute,
                        tuple(obs.facts.keywords[:30]), tuple(obs.facts.materials), tuple(obs.facts.colors),
                        tuple(reading.negated), obs.facts.budget_max)


def _understanding_view(u: Understanding) -> T.UnderstandingView:
    return T.UnderstandingView(tuple((c, s) for c, s in u.clue_matches[:8]), tuple(sorted(u.corrected_tokens)),
                               tuple(u.rejected_phrases[:20]), u.llm_called, u.llm_error, u.llm_error_kind, u.intent,
                               u.no_preference_attribute, dict(u.usage))


def _state_view(state: SessionState) -> T.StateView:
    return T.StateView(state.scenario, state.override_seen, state.override_turn, state.boundary_seen,
                       tuple(state.asked), tuple(state.refused), tuple(state.exhausted), len(state.excluded),
                       tuple(T.ConstraintRow(c.attribute, c.value, c.source, c.confidence, c.negated, turn=c.turn)
                             for c in state.constraints))
