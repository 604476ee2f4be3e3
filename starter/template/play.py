"""A turn on the template path: fold the message into every candidate's evidence track, rank, ask, commit.

The template shopper is deterministic given the target, so each candidate's
track says how well it explains every message (`starter.template.evidence`);
the posterior ranks them, the question chooser values each question by the
answers the candidates would give, and the horizon DP picks the list length.
Every change of the session goes through `state.apply`.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Sequence

from contest.card import classify
from grounding import Gate
from starter.conversation import trace
from starter.conversation import views
from starter.conversation.state import (ConstraintsRecorded, Constraint, MessageExplained, MessageRead,
                                        PathReplayed, PoolGrown, PoolOpened, RelevanceComputed, ResponseSent,
                                        SessionState, TracksUpdated, TurnTraced, UsageAdded, apply)
from starter.index.catalog import CatalogIndex
from starter.reading.kinds import MessageKind, Scenario
from starter.reading.understand import Reading, Understanding
from starter.replies import response_message
from starter.settings import MAX_TURNS, Settings
from starter.template import commit, evidence, posterior, questions, retrieve
from starter.template.rerank import Reranker
from starter.template.tracks import TrackTable

Opening = tuple[retrieve.Pool, TrackTable, Scenario]
# What reading a message gave the trace: the opening's shelf view, accepted and rejected constraints.
Read = tuple["trace.ShelfView | None", list["trace.ConstraintRow"], list["trace.RejectionRow"]]
TEXT_KINDS = (MessageKind.FREE_OPENING, MessageKind.VALUES, MessageKind.OVERRIDE, MessageKind.FREE)


class TemplatePath:
    """The template shopper's model, bound to one catalog and its settings."""

    def __init__(self, index: CatalogIndex, gate: Gate, settings: Settings, reranker: Reranker | None) -> None:
        self.index = index
        self.shelves = gate.shelves
        self.settings = settings
        self.reranker = reranker

    def open_pool(self, reading: Reading, hits: list[tuple[int, float]]) -> Opening:
        """The opening's pool and tracks, from its BM25 hits (a free-text opening that quotes the catalog)."""
        s = self.settings
        pool = retrieve.build_pool(self.index, self.shelves, reading, s.retrieval, hits)
        tracks, scenario = evidence.open_tracks(self.index, pool.ids, reading, pool.shelf.scored, s.evidence)
        return pool, tracks, scenario

    def answer(self, state: SessionState, reading: Reading, understanding: Understanding | None,
               usage: dict[str, int], turn_no: int, k_limit: int, read: Read) -> dict:
        """Answer a message whose evidence `update_evidence` has folded in (`read`: what it gave);
        returns the contract's response dict."""
        shelf_view, accepted, rejected = read
        if understanding is not None:
            assert state.pool is not None
            self._grow(state, retrieve.clue_growth(self.index, state.pool, understanding.clue_matches,
                                                   self.settings.retrieval, state.turn))
            more_accepted, more_rejected = views.understanding_rows(understanding)
            accepted += more_accepted
            rejected += more_rejected
        ranked, rerank_info = self._rank(state, reading, usage)
        response, asked, decision = self._respond(state, ranked, usage, turn_no, k_limit)
        assert state.pool is not None
        funnel = dict(state.pool.stages)
        funnel["live"] = len(ranked)
        funnel["exact_consistent"] = posterior.count_exact(ranked)
        apply(state, TurnTraced(trace.TurnTrace(
            turn=turn_no, message=reading.obs.said[:500], parsed=views.parsed(reading),
            understanding=views.understanding_view(understanding), shelf=shelf_view, accepted=tuple(accepted),
            rejected=tuple(rejected), state=views.state_view(state), funnel=funnel, top=self._rows(ranked, state),
            questions=tuple(asked), commit=decision, rerank=rerank_info, understood=views.understood(state, accepted),
            ask_attribute=response["ask_attribute"],
            recommendations=tuple(r["parent_asin"] for r in response["recommendations"]))))
        return response

    def _rank(self, state: SessionState, reading: Reading,
              usage: dict[str, int]) -> tuple[Sequence[posterior.Ranked], dict[str, Any] | None]:
        """The posterior over the pool, reranked by the model when one is configured."""
        ranked: Sequence[posterior.Ranked] = posterior.posterior(self.index, state.tracks, state.excluded,
                                                                 self.settings.posterior, state.doubtful)
        if self.reranker is None:
            return ranked, None
        ranked, info = self.reranker.rerank(ranked, _needs(state), set(reading.negated))
        spent = {k: v for k, v in (info.get("usage") or {}).items() if k in usage and isinstance(v, int)}
        for k, v in spent.items():
            usage[k] += v
        apply(state, UsageAdded(tuple(spent.items())))
        return ranked, info

    def _respond(self, state: SessionState, ranked: Sequence[posterior.Ranked], usage: dict[str, int], turn_no: int,
                 k_limit: int) -> tuple[dict, list[trace.QuestionRow], trace.CommitView]:
        """Value the questions, decide the list length and the question, and send the response."""
        s = self.settings
        pre_override = state.pre_override()
        shown_guess = set() if pre_override or not ranked else {ranked[0].idx}
        valued = questions.value_questions(self.index, ranked, state.tracks, shown_guess, turn_no, s.questions)
        decision = commit.decide(posterior.horizon_probs(ranked), turn_no, questions.separable(valued), pre_override,
                                 s.commit.insurance_turn)
        count = min(decision.count, k_limit)
        recs = views.recommendations(self.index, ranked, count)
        worth_asking = bool(valued) and valued[0].value > s.questions.min_question_value and valued[0].groups > 1
        ask = valued[0].attribute if worth_asking and turn_no < MAX_TURNS else None
        response = {"message": response_message(len(recs), ask), "ask_attribute": ask, "recommendations": recs,
                    "usage": dict(usage)}
        apply(state, ResponseSent(tuple(r.idx for r in ranked[:count]), ask, response))
        return response, valued, trace.CommitView(count, decision.reason, decision.expected_value)

    def replay(self, state: SessionState) -> None:
        """Read everything said so far on this path (a people session handed over): one event."""
        fresh = SessionState(state.session_id)
        for k in range(len(state.readings) - 1):
            apply(fresh, MessageRead(state.observations[k], state.readings[k]))
            self.update_evidence(fresh, state.readings[k])
            apply(fresh, ResponseSent(tuple(state.shown[k]), state.asks[k], {}))
        assert fresh.pool is not None
        apply(state, PathReplayed(fresh.pool, fresh.tracks, fresh.scenario, frozenset(fresh.card_explained),
                                  tuple(fresh.relevance_words), fresh.relevance))

    # ---- evidence ---------------------------------------------------------------------------
    def update_evidence(self, state: SessionState, reading: Reading, opening: Opening | None = None) -> Read:
        """Retrieve on the opening, then fold each message into every candidate's track."""
        shelf_view = None
        if state.pool is None:
            shelf_view = self._open(state, reading, opening)
        else:
            self._observe(state, reading)
        apply(state, TracksUpdated(evidence.with_soft_facts(self.index, state.tracks, reading,
                                                            self.settings.evidence)))
        accepted, rejected = self._template_constraints(state, reading)
        return shelf_view, accepted, rejected

    def _open(self, state: SessionState, reading: Reading, opening: Opening | None) -> trace.ShelfView:
        """The opening's pool and tracks (a free-text opening's, when the route already made them)."""
        s, index = self.settings, self.index
        if opening is not None:
            pool, tracks, scenario = opening
        else:
            pool = retrieve.build_pool(index, self.shelves, reading, s.retrieval)
            tracks, scenario = evidence.open_tracks(index, pool.ids, reading, pool.shelf.scored, s.evidence)
        self._mark_explained(state, reading, tracks)
        tracks = evidence.with_relevance(tracks, self._relevance(state, pool.shelf.scored), s.evidence)
        if scenario == Scenario.UNKNOWN:
            best = posterior.most_probable(index, tracks, s.posterior)
            scenario = tracks.track(best).scenario if best is not None else Scenario.BROWSING
        apply(state, PoolOpened(pool, tracks, scenario, reading.template))
        return trace.ShelfView(pool.shelf.exact, {k: round(v, 4) for k, v in pool.shelf.scored.items()})

    def _observe(self, state: SessionState, reading: Reading) -> None:
        """A later message: every track observes it; the pool grows when nothing explains the session."""
        s, index = self.settings, self.index
        pool = state.pool
        assert pool is not None
        tracks = evidence.observe(index, state.tracks, reading, state.last_ask, s.evidence)
        if not reading.template and reading.kind in (MessageKind.VALUES, MessageKind.OVERRIDE):
            self._mark_explained(state, reading, tracks)
            tracks = evidence.with_relevance(tracks, self._relevance(state, pool.shelf.scored), s.evidence)
        apply(state, TracksUpdated(tracks))
        no_explanation = not state.tracks.any_exact(state.excluded)
        if pool.shelf.exact is not None and no_explanation:
            self._grow(state, retrieve.widen_shelf(index, self.shelves, pool, state.readings[0], s.retrieval))
        if pool.shelf.exact is None:
            self._grow(state, retrieve.expand_pool(index, pool, reading, s.retrieval))

    def _mark_explained(self, state: SessionState, reading: Reading, tracks: TrackTable) -> None:
        """Free text that some candidate's card values explain well is a quote of values:
        card evidence reads it better than text relevance would."""
        if reading.template:
            return
        if tracks.last_evidence_max() >= self.settings.evidence.card_explained_sim:
            apply(state, MessageExplained(state.turn - 1))

    def _relevance(self, state: SessionState, shelf_scores: dict[str, float]) -> dict[int, float]:
        """Text relevance for the shopper's free-text words so far ({} when there are none).

        Kept on the state for its word list: one turn may ask for it several times
        (evidence, then each batch of late candidates) and the BM25 query is the costly part.
        """
        words: list[str] = []
        for k, o in enumerate(state.readings):
            if o.kind == MessageKind.FREE_OPENING and o.browsing_cue:
                continue              # only browsing: the category is all there is to it
            if not o.template and k not in state.card_explained and o.kind in TEXT_KINDS:
                words += [w for w in evidence.free_text_words(o) if w not in words]
        # Words that name a confidently recognised shelf are category evidence already;
        # as text they would only reorder that shelf against the popularity prior.
        for key, score in shelf_scores.items():
            if score >= self.settings.evidence.named_shelf_score:
                named = self.shelves.words[key]
                words = [w for w in words if w not in named]
        if not words:
            return {}
        if state.relevance_words != words:
            apply(state, RelevanceComputed(tuple(words), evidence.text_relevance(self.index, words,
                                                                                 self.settings.evidence)))
        return state.relevance

    def _grow(self, state: SessionState, growth: retrieve.Growth) -> None:
        """Add candidates, each with a track replayed from the opening over every later message."""
        assert state.pool is not None
        s = self.settings.evidence
        tracks = TrackTable.empty()
        if growth.ids:
            shelf_scores = growth.shelf.scored if growth.shelf is not None else state.pool.shelf.scored
            tracks, _ = evidence.open_tracks(self.index, list(growth.ids), state.readings[0], shelf_scores, s)
            for k, later in enumerate(state.readings[1:]):
                tracks = evidence.observe(self.index, tracks, later, state.asks[k] if k < len(state.asks) else None,
                                          s)
            tracks = evidence.with_relevance(tracks, self._relevance(state, shelf_scores), s)
        apply(state, PoolGrown(growth, tracks))

    def _template_constraints(self, state: SessionState, reading: Reading
                              ) -> tuple[list[trace.ConstraintRow], list[trace.RejectionRow]]:
        """The values a template message states, kept only if the catalog knows them."""
        accepted: list[trace.ConstraintRow] = []
        rejected: list[trace.RejectionRow] = []
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
                accepted.append(trace.ConstraintRow(attribute, v, "template", 1.0, turn=state.turn))
            else:
                rejected.append(trace.RejectionRow(v, "not a clue of any catalog product"))
        apply(state, ConstraintsRecorded(tuple(kept)))
        return accepted, rejected

    def _rows(self, ranked: Sequence[posterior.Ranked], state: SessionState) -> trace.CandidateRows:
        """The trace's rows of the leading candidates, made when the trace is read from what is taken now."""
        first = list(ranked[:views.TRACE_ROWS])
        if isinstance(ranked, posterior.RankedList) and ranked.track_rows is not None:
            scenarios = state.tracks.scenarios_at(ranked.track_rows[:views.TRACE_ROWS])
        else:
            scenarios = state.tracks.scenarios_of([r.idx for r in first])
        return trace.CandidateRows(partial(views.candidate_rows, self.index.products, first, scenarios))


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
