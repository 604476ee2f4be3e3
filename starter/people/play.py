"""A turn on the people path: whole-product evidence over the whole conversation, the facts said, and a
question in plain words."""
from __future__ import annotations

from functools import partial

from grounding.negation import number_forms
from grounding.person_words import ASKING_VERBS, QUANTITY_WORDS, QUESTION_WORDS
from grounding.words import MORE_OPTIONS_CUE, tokens
from starter.conversation import trace, views
from starter.conversation.state import ResponseSent, SessionState, TurnTraced, apply
from starter.index.catalog import CatalogIndex
from starter.people import facts as people_facts
from starter.people.brands import Brands
from starter.people.features import states_any
from starter.people.correction import Correction, load_correction
from starter.people.pool import FactFit
from starter.people.ranking import load_weights, rank_people
from starter.reading.kinds import MessageKind, SessionPath
from starter.reading.understand import Reading, Understanding
from starter.people.words import message_words
from starter.replies import is_question, people_message, question_answer, small_talk_reply
from starter.settings import MAX_TURNS, Settings
from starter.template import commit, posterior


def has_run_out(reading: Reading, turn: int) -> bool:
    """Whether the shopper asks to see more or has nothing left to say (after the opening): no question
    can separate the candidates any more."""
    return (reading.kind == MessageKind.NO_ATTRIBUTE and turn > 1) or bool(MORE_OPTIONS_CUE.search(reading.text))


def unsaid(readings: list[Reading], facts: people_facts.Facts) -> tuple[str, ...]:
    """What the shopper has not said yet that a shop assistant would ask about, in plain words."""
    free = [r for r in readings if not r.template]
    out = []
    if not facts.audiences and not facts.not_for:
        out.append("who it's for")
    if not any(people_facts.said_colours(r) for r in free):
        out.append("a colour")
    if not any(r.materials for r in free):
        out.append("what it's made of")
    if facts.budget is None:
        out.append("a price range")
    return tuple(out)


class PeoplePath:
    """The people model, bound to one catalog and its settings."""

    def __init__(self, index: CatalogIndex, settings: Settings) -> None:
        self.index = index
        self.settings = settings
        self.brands = Brands(index)
        self.fits = FactFit(index)
        self.weights = load_weights()       # the fitted model (a fit replaces both for its own agent)
        self.correction: Correction | None = load_correction()

    def _answer_first(self, reading: Reading, shown: list[int]) -> str:
        """What to say before the list: the answer to a question about the products (from the list's
        own data, a word asked about in either number: "a hood" counts "Hoods"), or a friendly word to small
        talk (a message without product words)."""
        if people_facts.says_a_fact(reading.text):
            return ""
        words = [w for w in message_words(reading) if w not in QUESTION_WORDS and w not in ASKING_VERBS]
        said = set(tokens(reading.text))
        asked_about = [w for w in words if w in said and w not in QUANTITY_WORDS]   # as said, no typo guesses
        if asked_about and is_question(reading.text):
            holders = sum(all(states_any(self.index, i, number_forms(w)) for w in asked_about) for i in shown)
            return question_answer(asked_about, holders, len(shown))
        return "" if words else small_talk_reply(reading.text)

    def play(self, state: SessionState, reading: Reading, understanding: Understanding | None,
             usage: dict[str, int], turn_no: int, k_limit: int) -> dict:
        """Answer one message of a person; returns the contract's response dict."""
        shown_before = set(state.doubtful) | set(state.excluded)
        facts = people_facts.conversation_facts(state.readings, self.brands,
                                                people_facts.prices_shown(self.index.products, state.shown))
        ranked, funnel = rank_people(self.index, state.readings, facts, shown_before, self.settings.people,
                                     self.brands, self.weights, self.correction, self.fits)
        # Asked to see more, or nothing left to say: the horizon DP picks how many to show.
        decision = commit.decide(posterior.horizon_probs(ranked), turn_no, not has_run_out(reading, state.turn), False,
                                 self.settings.commit.people_insurance_turn)
        count = min(decision.count, k_limit)
        ask = "other" if turn_no < MAX_TURNS else None
        recs = views.recommendations(self.index, ranked, count)
        before = self._answer_first(reading, [r.idx for r in ranked[:count]])
        described = "popularity_floor" not in funnel             # some word of the conversation matched
        response = {"message": people_message(len(recs), ask, len(state.asked), before, described,
                                              unsaid(state.readings, facts)),
                    "ask_attribute": ask,
                    "recommendations": recs, "usage": dict(usage)}
        apply(state, ResponseSent(tuple(r.idx for r in ranked[:count]), ask, response))
        accepted, rejected = views.understanding_rows(understanding)
        accepted += [trace.ConstraintRow("brand", m.store, m.source, 1.0, evidence=m.said)
                     for m in facts.brand_mentions]
        rejected += [trace.RejectionRow(r.said, f"{r.reason} (store {r.store!r})", "brand", "catalog")
                     for r in facts.brand_refusals]
        funnel["live"] = len(ranked)
        first = list(ranked[:views.TRACE_ROWS])
        rows = trace.CandidateRows(partial(views.candidate_rows, self.index.products, first,
                                           [SessionPath.PEOPLE.value] * len(first)))
        apply(state, TurnTraced(trace.TurnTrace(
            turn=turn_no, message=reading.obs.said[:500], parsed=views.parsed(reading),
            understanding=views.understanding_view(understanding), accepted=tuple(accepted),
            rejected=tuple(rejected), state=views.state_view(state), funnel=funnel, top=rows,
            commit=trace.CommitView(count, decision.reason, decision.expected_value),
            understood=people_facts.understood(state.readings, facts),
            ask_attribute=ask, recommendations=tuple(r["parent_asin"] for r in recs))))
        return response
