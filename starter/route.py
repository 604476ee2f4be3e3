"""Which path reads a session: the template shopper's exact likelihood, or the people model.

A free-text opening goes to the template path when it quotes the catalog (a
shelf name spelled out, a card value some candidate's card explains, or a
shelf name with a browsing cue or a negation: a reworded template shopper,
or a value to rule out), otherwise to the people path (a bare "need some
clogs" included).  A people session moves to the template path when the
shopper answers "anything else?" with a bare "no preference" (a used-up
template shopper says little else).
"""
from __future__ import annotations

from contest.persona import SPOKEN
from grounding.audience import AUDIENCE_WORDS
from grounding.shelves import ShelfGuess, ShelfMatcher
from grounding.words import NO_PREFERENCE_VOCAB, NOT_RIGHT_CUE, tokens
from starter.conversation.state import PoolOpened, SessionState, apply
from starter.index.catalog import CatalogIndex
from starter.people.words import PEOPLE_STOP
from starter.reading.kinds import MessageKind, Scenario, SessionPath
from starter.reading.understand import Reading
from starter.settings import PeopleSettings, Settings
from starter.template import evidence, retrieve
from starter.template.play import Opening, TemplatePath
from starter.template.tracks import TrackTable



class Router:
    """Chooses the path of a free-text opening, and hands a people session over when it stops being one."""

    def __init__(self, index: CatalogIndex, shelves: ShelfMatcher, settings: Settings,
                 template: TemplatePath) -> None:
        self.index = index
        self.shelves = shelves
        self.settings = settings
        self.template = template

    def open_free_text(self, state: SessionState, reading: Reading) -> Opening | None:
        """A free-text opening: the template path's pool and tracks when it quotes the catalog; else the
        session opens on the people path (and None).  Quoting is judged on the opening's best BM25
        matches (cheap); only a quoting opening pays for the template path's full pool."""
        s = self.settings
        hits = self.index.bm25(retrieve.opening_words(reading), s.retrieval.bm25_candidates)
        probe_tracks, _ = evidence.open_tracks(self.index, [i for i, _ in hits], reading, {}, s.evidence)
        if is_quoting(reading, self.shelves, probe_tracks, s.people):
            return self.template.open_pool(reading, hits)
        apply(state, PoolOpened(retrieve.Pool([], {}, ShelfGuess()), {}, Scenario.UNKNOWN, False,
                                SessionPath.PEOPLE))
        return None

    def speaks_for_itself(self, state: SessionState, reading: Reading, quoted: float) -> bool:
        """A session the template path took from a free-text opening (it named a shelf, or quoted a value)
        whose latest free-text message states values that no candidate's card explains and that quote no
        catalog value (`quoted`: its best fuzzy clue match, 0..100): a person talking,
        whom the people model reads from here on, with everything said so far.  A reworded "none of these
        are right" states nothing of the product (`NOT_RIGHT_CUE`) and stays."""
        return state.path is SessionPath.TEMPLATE and not state.scenario_certain and state.turn > 1 \
            and not reading.template and reading.kind == MessageKind.VALUES \
            and not NOT_RIGHT_CUE.search(reading.text.lower()) \
            and quoted < self.settings.understanding.clue_match_min \
            and state.tracks.last_evidence_max() < self.settings.people.quoting_sim

    def hands_off(self, state: SessionState, reading: Reading) -> bool:
        """A people session whose shopper answers "anything else?" with a bare "no preference", having
        said little in all (replaying costs a template turn per message said)."""
        return state.path is SessionPath.PEOPLE and reading.kind == MessageKind.NO_PREFERENCE \
            and state.last_ask == "other" and says_only_no_preference(reading.text, "other") \
            and sum(len(r.keywords) for r in state.readings) <= self.settings.people.handoff_max_words


def is_quoting(reading: Reading, shelves: ShelfMatcher, tracks: TrackTable, cfg: PeopleSettings) -> bool:
    """Does a free-text opening quote the catalog (a shelf name spelled out, or a card value)?"""
    low = " " + " ".join(tokens(reading.text)) + " "
    text = reading.text.lower()
    for key, words in shelves.spelled.items():
        if len(words) >= cfg.spelled_shelf_min_chars and f" {words} " in low and key.lower() in text:
            return True
    # A bare shelf name ("need some clogs") is a whole browsing opening only when a browsing cue says so: the
    # template shopper's browsing openings carry one ("still exploring", "just browsing"); a person's does not.
    # A shelf name with a negation ("boots, but no leather") stays with the template path, whose tracks rule
    # the negated value out; the people model weighs a negation by what persona cards negate ("nothing too
    # girly"), too lightly for a material.
    bare = None if reading.browsing_cue or reading.negated else Scenario.BROWSING
    return tracks.last_evidence_max(without=bare) >= cfg.quoting_sim


def says_only_no_preference(text: str, attribute: str) -> bool:
    """Whether a no-preference reply about `attribute` says nothing else.  The template shopper's "I
    don't really care about other." names nothing; a person's "She doesn't mind hand washing it."
    names a detail of the product, and is no sign that a template shopper is speaking; nor is "unisex is fine,
    he is not picky" (who it is for is a detail too, and no template attribute names a wearer)."""
    named = set(tokens(attribute.replace("_", " "))) | set(tokens(SPOKEN.get(attribute, "")))
    return all(len(w) < 2 or (w in PEOPLE_STOP and w not in AUDIENCE_WORDS) or w in NO_PREFERENCE_VOCAB
               or w in named for w in tokens(text))


