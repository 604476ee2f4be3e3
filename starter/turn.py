"""One turn: parse -> understand -> choose the path -> that path's turn (evidence, rank, ask, commit, respond).

This module only sequences: each decision is in the module named for it (the
path in `starter.route`, the template path's turn in `starter.template.play`,
the people path's in `starter.people.play`), and every change of the session
state is an event applied by `starter.conversation.state.apply`.
"""
from __future__ import annotations

from functools import partial
from typing import Any

from grounding import Gate
from grounding.slips import respell_cues
from starter.conversation.state import MessageRead, PathChosen, SessionState, apply
from starter.index.catalog import CatalogIndex
from starter.people.play import PeoplePath
from starter.reading.kinds import SessionPath
from starter.reading.parse import Observation, parse_message
from starter.reading.understand import Reading, Understander, Understanding
from starter.route import Router
from starter.settings import MAX_TURNS, TOP_K, Settings
from starter.template.play import TemplatePath
from starter.template.rerank import Reranker
from starter.template.retrieve import has_value_clue

_ZERO = (("prompt_tokens", 0), ("completion_tokens", 0))


class TurnPipeline:
    """The decisions of a turn, bound to one catalog and one configuration."""

    def __init__(self, index: CatalogIndex, gate: Gate, settings: Settings, understander: Understander,
                 reranker: Reranker | None) -> None:
        self.index = index
        self.shelves = gate.shelves
        # cue words typed with a slip, spelled right (not a word of the catalog's text: "itches")
        self.respell = partial(respell_cues, known=gate.knows, text_df=gate.text_df)
        self.understander = understander
        self.template = TemplatePath(index, gate, settings, reranker)
        self.people = PeoplePath(index, settings)
        self.router = Router(index, gate.shelves, settings, self.template)

    def play(self, state: SessionState, user_message: Any, turn: Any, top_k: Any) -> dict:
        """Answer one shopper message; returns the contract's response dict."""
        k_limit = top_k if isinstance(top_k, int) and not isinstance(top_k, bool) and 0 < top_k <= TOP_K else TOP_K
        obs = parse_message(user_message, state.turn + 1, self.shelves.lower, self.respell)
        understanding: Understanding | None = None
        if self._needs_understanding(obs):
            understanding = self.understander.understand(obs, _llm_context(state), state.turn + 1)
            reading = understanding.reading
        else:
            reading = Reading.of(obs)
        usage = dict(understanding.usage) if understanding is not None else dict(_ZERO)
        apply(state, MessageRead(obs, reading, tuple(usage.items())))
        turn_no = turn if isinstance(turn, int) and not isinstance(turn, bool) and 1 <= turn <= MAX_TURNS \
            else min(state.turn, MAX_TURNS)
        opening = self.router.open_free_text(state, reading) if state.pool is None and not reading.template \
            else None
        if self.router.hands_off(state, reading):
            self.template.replay(state)
        if state.path is SessionPath.PEOPLE:
            return self.people.play(state, reading, understanding, usage, turn_no, k_limit)
        read = self.template.update_evidence(state, reading, opening)
        quoted = max((score for _, score in understanding.clue_matches), default=0.0) if understanding else 100.0
        if self.router.speaks_for_itself(state, reading, quoted):     # read, it is a person speaking
            apply(state, PathChosen(SessionPath.PEOPLE))
            return self.people.play(state, reading, understanding, usage, turn_no, k_limit)
        return self.template.answer(state, reading, understanding, usage, turn_no, k_limit, read)

    def _needs_understanding(self, obs: Observation) -> bool:
        """Free text always; a template only when its value is no catalog clue (damaged wording)."""
        if not obs.template:
            return True
        if not obs.value_text:
            return False
        return not has_value_clue(self.index, obs.value_text)


def _llm_context(state: SessionState) -> dict[str, Any]:
    """What the model may know: the shelf, the values said so far, the last question."""
    shelf = None
    if state.pool is not None:
        shelf = state.pool.shelf.exact or next(iter(state.pool.shelf.scored), None)
    return {"shelf": shelf, "known": [c.value for c in state.constraints][-6:], "asked": state.last_ask}
