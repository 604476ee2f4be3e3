"""The session reducer: every state change is an event, and the proof rules hold."""
from __future__ import annotations

import dataclasses

import pytest

from grounding.shelves import ShelfGuess
from starter.reading.parse import parse_message
from starter.template.tracks import Track, TrackTable
from starter.template.retrieve import Growth, Pool
from starter.conversation.state import (ConstraintsRecorded, Constraint, MessageExplained, MessageRead, PoolGrown, PoolOpened,
                           RelevanceComputed, ResponseSent, SessionState, TracksUpdated, TurnTraced, UsageAdded,
                           apply)
from starter.conversation.trace import TurnTrace
from starter.reading.understand import Reading

TEMPLATE_OPENING = "I'm looking for Women Shirts. A key requirement is: cotton."


def read(state: SessionState, text: str, kind: str | None = None) -> Reading:
    """Apply a MessageRead for `text` (optionally read as `kind`, as understanding may)."""
    obs = parse_message(text, state.turn + 1, {"women shirts": "Women Shirts"})
    reading = Reading.of(obs)
    if kind is not None:
        reading = dataclasses.replace(reading, kind=kind)
    apply(state, MessageRead(obs, reading, (("prompt_tokens", 3), ("completion_tokens", 1))))
    return reading


def answer(state: SessionState, shown: tuple[int, ...], ask: str | None = "other") -> None:
    apply(state, ResponseSent(shown, ask, {"message": "", "recommendations": []}))


def opened(scenario: str, certain: bool) -> SessionState:
    state = SessionState("s")
    read(state, TEMPLATE_OPENING)
    apply(state, PoolOpened(Pool([1, 2, 3], {"exact_shelf": 3}, ShelfGuess("Women Shirts", {"Women Shirts": 1.0})),
                            TrackTable.of_rows((1, 2, 3), [Track("buying", 0)] * 3), scenario, certain))
    return state


def test_a_message_is_logged_as_said_and_read_separately() -> None:
    state = SessionState("s")
    reading = read(state, "something black, no leather", kind="values")
    assert state.turn == 1 and state.observations[0].text == "something black, no leather"
    assert state.readings == [reading] and state.observations[0] is reading.obs
    assert state.usage == {"prompt_tokens": 3, "completion_tokens": 1}
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.observations[0].kind = "override"  # type: ignore[misc]


def test_a_list_shown_on_a_counted_turn_is_proved_wrong_when_the_session_goes_on() -> None:
    state = opened("buying", certain=True)
    answer(state, (1,))
    assert state.excluded == set()
    read(state, "For that, what matters is: color: black.")
    assert state.excluded == {1} and state.doubtful == set()


def test_a_guessed_scenario_only_makes_shown_products_doubtful() -> None:
    state = opened("buying", certain=False)
    answer(state, (1, 2))
    read(state, "black please")
    assert state.excluded == set() and state.doubtful == {1, 2}


def test_lists_before_an_override_prove_nothing_and_the_override_clears_doubt() -> None:
    state = opened("intent_override", certain=True)
    answer(state, (1, 2))
    assert state.shown_counted == [False]
    read(state, "For that, what matters is: color: black.")
    assert state.excluded == set()
    state = opened("buying", certain=False)
    answer(state, (1,))
    read(state, "black please")
    answer(state, (2,))
    assert state.doubtful == {1}
    read(state, "Actually, ignore my earlier preference. What I need is: silk.")
    assert state.override_seen and state.override_turn == 3 and state.scenario == "intent_override"
    assert state.doubtful == set() and state.excluded == set()


def test_refusals_and_no_preference_are_recorded_against_the_last_question() -> None:
    state = opened("buying", certain=True)
    answer(state, (1,), ask="size")
    read(state, "I don't have a preference for size; please use your judgment.")
    assert state.boundary_seen and state.refused == ["size"]
    answer(state, (2,), ask="color")
    read(state, "I don't have an additional preference for color.")
    assert state.exhausted == ["color"] and state.asked == ["size", "color"]


def test_pool_growth_tracks_and_caches_change_only_through_events() -> None:
    state = opened("buying", certain=True)
    apply(state, PoolGrown(Growth((7, 8), "widened_shelves", ShelfGuess(None, {"Women Shirts": 1.0, "Tops": 0.5})),
                           TrackTable.of_rows((7, 8), (Track("buying", 0), Track("buying", 0)))))
    assert state.pool.ids == [1, 2, 3, 7, 8] and state.pool.present == {1, 2, 3, 7, 8}
    assert state.pool.stages["widened_shelves"] == 2 and state.pool.shelf.exact is None
    apply(state, TracksUpdated(TrackTable.of_rows((7,), (Track("buying", 0, loglik=-1.0),))))
    assert state.tracks.track(7).loglik == -1.0 and state.tracks.ids.tolist() == [1, 2, 3, 7, 8]
    assert state.tracks.track(8).loglik == 0.0 and 9 not in state.tracks and 7 in state.tracks
    apply(state, MessageExplained(0))
    apply(state, RelevanceComputed(("black",), {1: 1.0}))
    apply(state, ConstraintsRecorded((Constraint("material", "cotton", "template", 1.0, 1),)))
    apply(state, UsageAdded((("prompt_tokens", 5),)))
    apply(state, TurnTraced(TurnTrace(turn=1, message="x")))
    assert state.card_explained == {0} and state.relevance_words == ["black"]
    assert state.constraints[0].value == "cotton" and state.usage["prompt_tokens"] == 8
    assert [t.turn for t in state.traces] == [1]


def test_an_unknown_event_is_refused() -> None:
    with pytest.raises(TypeError):
        apply(SessionState("s"), object())  # type: ignore[arg-type]
