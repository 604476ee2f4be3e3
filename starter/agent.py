"""The contest entry point: `Agent(catalog_path)`, `reset`, `respond`.

A turn is a sequence of small named decisions over one explicit state:
parse -> update state -> retrieve -> rank -> choose question -> choose how
many to show -> respond.  `respond` never raises: on an internal fault it
logs, records the fault in the snapshot and returns the last good list with
a safe question.  Everything the agent knows comes from the catalog, the
profile and the transcript.
"""
from __future__ import annotations

import copy
import logging
import os
import traceback
from typing import Any

from starter import ask as ASK
from starter import commit as COMMIT
from starter import rank as RANK
from starter import retrieve as RETRIEVE
from evaluator.protocol import classify
from grounding import Gate
from starter.catalog import CatalogError, CatalogIndex
from starter.llm import LLMClient, LLMConfig
from starter.rerank import Reranker
from starter.understand import MAX_CLUE_PRODUCTS, MIN_CLUE_SCORE, Understander, apply_understanding
from starter.config import ALLOWED_ATTRIBUTES, MAX_TURNS, TOP_K, TUNABLES, Tunables
from starter.parse import Observation, parse_message
from starter.state import Constraint, SessionState, record_message, record_response

log = logging.getLogger(__name__)

SAFE_QUESTION = "other"
_QUESTION_TEXT = {
    "other": "What else matters to you about it?",
    "material": "Which material would you like?",
    "color": "Any colour in mind?",
    "size": "Anything about size or fit width?",
    "style": "Any particular style, fit or department?",
    "use_case": "What will you use it for?",
    "feature": "Which feature matters most?",
    "budget": "What budget do you have in mind?",
    "brand": "Any brand preference?",
    "category": "What kind of item is it?",
}


class Agent:
    """Conversational shopping agent (offline, deterministic)."""

    def __init__(self, catalog_path: str | None = None, tunables: Tunables | None = None) -> None:
        self.cfg = tunables or TUNABLES
        if catalog_path is None:
            from evaluator.data import resolve_catalog
            catalog_path = str(resolve_catalog(None))
        try:
            self.index = CatalogIndex(catalog_path, prior_alpha=self.cfg.prior_alpha)
        except CatalogError:
            raise
        except (OSError, UnicodeDecodeError) as exc:
            raise CatalogError(f"cannot read catalog {catalog_path}: {exc}") from exc
        self.gate = Gate(self.index)
        self.llm_config = LLMConfig.from_env()
        client = LLMClient(self.llm_config) if self.llm_config.enabled or self.llm_config.rerank_method != "none" \
            else None
        self.llm = client if self.llm_config.enabled else None
        self.understander = Understander(self.gate, self.llm)
        self.reranker = None
        if client is not None and self.llm_config.rerank_method != "none":
            if self.llm_config.embed_backend == "sentence-transformers":
                client.warm_up()
            self.reranker = Reranker(self.index, client, self.llm_config.rerank_method,
                                     self.llm_config.rerank_top_n, self.llm_config.rerank_weight)
        self.sessions: dict[str, SessionState] = {}
        # Sessions kept, least recently used dropped first: a session holds a track per
        # candidate (thousands on the free-text path), so memory is bounded by this.
        self.max_sessions = _positive_int(os.environ.get("AGENT_MAX_SESSIONS"), 64)

    # ---- contract -------------------------------------------------------------
    def reset(self, session_id: str, user_profile: dict | None = None) -> None:
        """Start a fresh session (profile kept for reference; not used in ranking)."""
        key = str(session_id)
        self.sessions.pop(key, None)
        while len(self.sessions) >= self.max_sessions:
            self.sessions.pop(next(iter(self.sessions)))
        self.sessions[key] = SessionState(session_id=key,
                                          profile=dict(user_profile) if isinstance(user_profile, dict) else {})

    def respond(self, session_id: str, user_message: str, turn: int = 1, top_k: int = TOP_K) -> dict:
        """One turn; always returns the contract shape."""
        key = str(session_id)
        if key not in self.sessions:
            self.reset(key, {})
        state = self.sessions.pop(key)
        self.sessions[key] = state          # most recently used last
        try:
            return self._respond(state, user_message, turn, top_k)
        except Exception as exc:  # the guard: never raise, never return an invalid shape
            log.exception("respond failed for session %s", key)
            state.snapshots.append({"turn": state.turn, "fault": repr(exc),
                                    "traceback": traceback.format_exc(limit=5)})
            last = state.last_good or {}
            return {
                "message": "Sorry, let me try again. What else matters to you about it?",
                "ask_attribute": SAFE_QUESTION,
                "recommendations": copy.deepcopy(last.get("recommendations", [])),
                "usage": {"prompt_tokens": 0, "completion_tokens": 0},
            }

    def debug_snapshot(self, session_id: str) -> dict:
        """A JSON-serialisable record of every decision of every turn of a session."""
        state = self.sessions.get(str(session_id))
        if state is None:
            return {"session_id": str(session_id), "known": False, "turns": []}
        return {
            "session_id": state.session_id,
            "known": True,
            "scenario": state.scenario,
            "turns": copy.deepcopy(state.snapshots),
        }

    # ---- the turn ------------------------------------------------------------------
    def _respond(self, state: SessionState, user_message: Any, turn: Any, top_k: Any) -> dict:
        k_limit = top_k if isinstance(top_k, int) and not isinstance(top_k, bool) and 0 < top_k <= TOP_K else TOP_K
        obs = parse_message(user_message, state.turn + 1, self.index.shelf_lower)
        understanding = None
        if self._needs_understanding(obs):
            understanding = self.understander.understand(obs, self._llm_context(state))
            apply_understanding(obs, understanding, state.turn + 1)
            for k, v in understanding.usage.items():
                state.usage[k] += v
        record_message(state, obs)
        turn_no = turn if isinstance(turn, int) and not isinstance(turn, bool) and 1 <= turn <= MAX_TURNS \
            else min(state.turn, MAX_TURNS)
        snap: dict[str, Any] = {"turn": turn_no, "message": obs.text[:500], "parsed": _parsed(obs)}
        if understanding is not None:
            snap["understanding"] = understanding.snapshot()
            snap["rejected_phrases"] = snap["understanding"]["rejected_phrases"]

        accepted, rejected = self._update_evidence(state, obs, snap)
        if understanding is not None:
            self._replay_new(state, self._clue_products(state, understanding.clue_matches))
            accepted += [_grounded_row(g) for g in understanding.accepted]
            rejected += [{"attribute": r.attribute, "value": r.value, "source": r.source, "reason": r.reason}
                         for r in understanding.rejected]
        snap["accepted_constraints"] = accepted
        snap["rejected_constraints"] = rejected

        ranked = RANK.posterior(self.index, state.tracks, state.excluded, self.cfg, state.doubtful)
        usage = dict(understanding.usage) if understanding is not None else {"prompt_tokens": 0, "completion_tokens": 0}
        if self.reranker is not None:
            ranked, rerank_info = self.reranker.rerank(ranked, _needs(state), set(obs.negated))
            snap["rerank"] = rerank_info
            for k, v in (rerank_info.get("usage") or {}).items():
                if k in usage and isinstance(v, int):
                    usage[k] += v
                    state.usage[k] += v
        pre_override = state.pre_override()
        shown_guess = set() if pre_override or not ranked else {ranked[0].idx}
        questions = ASK.value_questions(self.index, ranked, state.tracks, shown_guess, turn_no,
                                        self.cfg.min_group_mass)
        can_separate = ASK.separable(questions)
        probs = [r.prob for r in ranked]
        decision = COMMIT.decide(probs, turn_no, can_separate, pre_override, self.cfg.insurance_turn)
        count = min(decision.count, k_limit)
        shown = [r.idx for r in ranked[:count]]

        worth_asking = questions and questions[0].value > self.cfg.min_question_value and questions[0].groups > 1
        ask = questions[0].attribute if worth_asking and turn_no < MAX_TURNS else None
        recs = [{"parent_asin": self.index.products[i].pid, "score": round(ranked[j].prob, 6)}
                for j, i in enumerate(shown)]
        response = {"message": _message(len(recs), ask), "ask_attribute": ask, "recommendations": recs,
                    "usage": dict(usage)}
        record_response(state, shown, ask, response)

        snap["state"] = {
            "scenario": state.scenario, "override_seen": state.override_seen,
            "override_turn": state.override_turn, "boundary_seen": state.boundary_seen,
            "asked": list(state.asked), "refused": list(state.refused), "exhausted": list(state.exhausted),
            "excluded": len(state.excluded),
            "constraints": [c.__dict__ for c in state.constraints],
        }
        snap["funnel"] = dict(state.pool.stages) if state.pool else {}
        snap["funnel"]["live"] = len(ranked)
        snap["funnel"]["exact_consistent"] = sum(1 for r in ranked if r.exact)
        snap["top"] = [self._row(r, state) for r in ranked[:20]]
        snap["questions"] = [q.__dict__ for q in questions]
        snap["commit"] = {"count": count, "reason": decision.reason, "expected_value": decision.expected_value}
        snap["ask_attribute"] = ask
        snap["recommendations"] = [r["parent_asin"] for r in recs]
        state.snapshots.append(snap)
        return response

    def _update_evidence(self, state: SessionState, obs: Observation, snap: dict) -> tuple[list, list]:
        """Retrieve on the opening, then fold each message into every candidate's track."""
        accepted: list[dict] = []
        rejected: list[dict] = []
        if state.pool is None:
            state.pool = RETRIEVE.build_pool(self.index, obs, self.cfg)
            snap["shelf"] = {"exact": state.pool.shelf.exact,
                             "guesses": {k: round(v, 4) for k, v in state.pool.shelf.scored.items()}}
            state.tracks, scenario = RANK.open_tracks(self.index, state.pool.ids, obs,
                                                      state.pool.shelf.scored, self.cfg)
            self._mark_explained(state, obs)
            RANK.set_relevance(state.tracks, self._relevance(state), self.cfg)
            if scenario == "unknown":
                best = RANK.posterior(self.index, state.tracks, set(), self.cfg)
                scenario = state.tracks[best[0].idx].scenario if best else "browsing"
            state.scenario = scenario
            state.scenario_certain = obs.template
        else:
            RANK.observe(self.index, state.tracks, obs, state.last_ask, self.cfg)
            if not obs.template and obs.kind in ("values", "override"):
                self._mark_explained(state, obs)
                RANK.set_relevance(state.tracks, self._relevance(state), self.cfg)
            no_explanation = not any(t.exact for i, t in state.tracks.items() if i not in state.excluded)
            if state.pool.shelf.exact is not None and no_explanation:
                self._replay_new(state, RETRIEVE.widen_shelf(self.index, state.pool, state.observations[0], self.cfg))
            if state.pool.shelf.exact is None:
                self._replay_new(state, RETRIEVE.expand_pool(self.index, state.pool, obs, self.cfg))
        RANK.apply_soft_facts(self.index, state.tracks, obs, self.cfg)
        self._record_constraints(state, obs, accepted, rejected)
        return accepted, rejected

    def _mark_explained(self, state: SessionState, obs: Observation) -> None:
        """Free text that some candidate's card values explain well is a quote of values:
        card evidence reads it better than text relevance would."""
        if obs.template:
            return
        best = max((t.evidence[-1] for t in state.tracks.values() if t.evidence), default=0.0)
        obs.card_explained = best >= self.cfg.card_explained_sim

    def _relevance(self, state: SessionState) -> dict[int, float]:
        """Text relevance for the shopper's free-text words so far ({} when there are none).

        Kept on the state for its word list: one turn may ask for it several times
        (evidence, then each batch of late candidates) and the BM25 query is the costly part.
        """
        words: list[str] = []
        for o in state.observations:
            if o.kind == "free_opening" and o.browsing_cue:
                continue              # only browsing: the category is all there is to it
            if not o.template and not o.card_explained and o.kind in ("free_opening", "values", "override", "free"):
                words += [w for w in RANK.free_text_words(o) if w not in words]
        # Words that name a confidently recognised shelf are category evidence already;
        # as text they would only reorder that shelf against the popularity prior.
        if state.pool is not None:
            for key, score in state.pool.shelf.scored.items():
                if score >= self.cfg.named_shelf_score:
                    named = self.index.shelf_tokens[key]
                    words = [w for w in words if w not in named]
        if not words:
            return {}
        if state.relevance_words != words:
            state.relevance_words = list(words)
            state.relevance = RANK.text_relevance(self.index, words, self.cfg)
        return state.relevance

    def _needs_understanding(self, obs: Observation) -> bool:
        """Free text always; a template only when its value is no catalog clue (damaged wording)."""
        if not obs.template:
            return True
        if not obs.value_text:
            return False
        return not RETRIEVE.value_clue_hits(self.index, obs.value_text, len(self.index.products))

    def _llm_context(self, state: SessionState) -> dict[str, Any]:
        """What the model may know: the shelf, the values said so far, the last question."""
        shelf = None
        if state.pool is not None:
            shelf = state.pool.shelf.exact or next(iter(state.pool.shelf.scored), None)
        return {"shelf": shelf, "known": [c.value for c in state.constraints][-6:], "asked": state.last_ask}

    def _clue_products(self, state: SessionState, clue_matches: list[tuple[str, float]]) -> list[int]:
        """Products of the clues a free-text message fuzzily names, not yet in the pool."""
        if state.pool is None:
            return []
        named = [self.index.clues.get(clue, []) for clue, score in clue_matches if score >= MIN_CLUE_SCORE]
        new = state.pool.add(i for ids in named if len(ids) <= MAX_CLUE_PRODUCTS for i in ids)
        state.pool.stages[f"fuzzy_clues_turn_{state.turn}"] = len(new)
        return new

    def _replay_new(self, state: SessionState, new_ids: list[int]) -> None:
        """Give candidates that joined the pool late a track replayed from the opening."""
        assert state.pool is not None
        if not new_ids:
            return
        opening = state.observations[0]
        tracks, _ = RANK.open_tracks(self.index, new_ids, opening, state.pool.shelf.scored, self.cfg)
        for k, later in enumerate(state.observations[1:]):
            RANK.observe(self.index, tracks, later, state.asks[k] if k < len(state.asks) else None, self.cfg)
        RANK.set_relevance(tracks, self._relevance(state), self.cfg)
        state.tracks.update(tracks)

    def _record_constraints(self, state: SessionState, obs: Observation, accepted: list, rejected: list) -> None:
        """Constraints the message states, kept only if the catalog knows them."""
        turn = state.turn
        if obs.template and obs.value_text:
            parts = [obs.value_text] if obs.value_text in self.index.clues else \
                [v.strip() for v in obs.value_text.split(";")]
            for v in parts:
                if v in self.index.clues:
                    c = Constraint(attribute=classify(v), value=v, source="template", confidence=1.0, turn=turn)
                    state.constraints.append(c)
                    accepted.append(c.__dict__)
                else:
                    rejected.append({"value": v, "reason": "not a clue of any catalog product"})
        # Free-text facts (regex, fuzzy, model) are recorded by the grounding gate.

    def _row(self, r: RANK.Ranked, state: SessionState) -> dict:
        p = self.index.products[r.idx]
        return {"parent_asin": p.pid, "title": p.title[:120], "shelf": p.shelf, "price": p.price,
                "rating_number": p.rating_number, "prob": round(r.prob, 6), "exact": r.exact,
                "log_prior": round(r.log_prior, 4), "loglik": round(r.loglik, 4),
                "scenario": state.tracks[r.idx].scenario}


def _positive_int(raw: str | None, default: int) -> int:
    try:
        value = int(raw) if raw is not None else default
    except ValueError:
        log.warning("AGENT_MAX_SESSIONS=%r is not an integer; using %d", raw, default)
        return default
    return value if value > 0 else default


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


def _grounded_row(g: Any) -> dict:
    return {"attribute": g.attribute, "value": g.value, "negated": g.negated, "source": g.source,
            "confidence": round(g.confidence, 3), "evidence": g.evidence, "clue_matches": g.clue_matches[:3]}


def _parsed(obs: Observation) -> dict:
    return {"kind": obs.kind, "template": obs.template, "category": obs.category, "value_text": obs.value_text,
            "attribute": obs.attribute, "keywords": obs.keywords[:30], "materials": obs.materials,
            "colors": obs.colors, "negated": obs.negated, "budget_max": obs.budget_max}


def _message(count: int, ask: str | None) -> str:
    if count == 0:
        lead = "I could not find a match yet."
    elif count == 1:
        lead = "Here is my best match."
    else:
        lead = f"Here are {count} options, best first."
    if ask and ask in ALLOWED_ATTRIBUTES:
        return f"{lead} {_QUESTION_TEXT[ask]}"
    return lead
