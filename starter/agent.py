"""The contest entry point: `Agent(catalog_path)`, `reset`, `respond`.

A turn is a sequence of small named decisions over one explicit state
(`starter.turn`).  `respond` never raises: on an internal fault it logs,
records the fault in the trace and returns the last good list with a safe
question.  Everything the agent knows comes from the catalog, the profile and
the transcript.
"""
from __future__ import annotations

import copy
import dataclasses
import gc
import logging
import traceback
from pathlib import Path
from typing import Any

from contest.paths import environment, resolve_catalog
from grounding import Gate
from starter.index.catalog import CatalogError, CatalogIndex
from starter.settings import GROUNDING, SETTINGS, TOP_K, Settings
from starter.index.cache import IndexCache
from starter.model import LLMClient, LLMConfig
from starter.reading.parse import coerce_message
from starter.replies import SAFE_MESSAGE, SAFE_QUESTION
from starter.template.rerank import Reranker
from starter.session_store import ENV_VAR as STORE_ENV_VAR, Entry, Journal, StoreError, open_store
from starter.session_store.tape import ModelTape
from starter.conversation.sessions import SessionStore, plain_entry
from starter.conversation.state import SessionState, TurnTraced, apply
from starter.conversation.trace import SessionTrace, TurnTrace
from starter.turn import TurnPipeline
from starter.reading.understand import Understander

log = logging.getLogger(__name__)


class Agent:
    """Conversational shopping agent (offline, deterministic).

    Threads may share one agent: its sessions' store plays every turn under one compute lock and
    keeps each session's operations in order, while the journal's I/O runs outside that lock.
    """

    thread_safe = True        # read by services that would otherwise hold a lock around every call

    def __init__(self, catalog_path: str | None = None, settings: Settings | None = None,
                 index_cache: IndexCache | None | bool = True) -> None:
        """`index_cache`: True (default) uses the on-disk cache of `AGENT_INDEX_CACHE` (or the
        user cache directory; `off` disables it), False always builds, or an explicit `IndexCache`.
        Settings of the environment are read from the process environment over the project's `.env`,
        which is never written into the process."""
        self.settings = settings or SETTINGS
        env = environment()
        cache = IndexCache.from_env(env) if index_cache is True else (index_cache or None)
        self.index = _open_index(catalog_path, self.settings, cache)
        self.gate = Gate(self.index, GROUNDING, self.index.meanings.encoder.whole_words())
        self.index.release_clue_words()
        self.llm_config = LLMConfig.from_env(env)
        self.llm, self.tape, reranker = self._model_parts()
        understander = Understander(self.gate, self.settings.understanding,
                                    lambda word: self.index.text_df(word) > 0, self.index.listing_df,
                                    self.tape if self.llm is not None else None)
        self.pipeline = TurnPipeline(self.index, self.gate, self.settings, understander, reranker)
        # Live sessions are bounded (a session holds a track per candidate, thousands on the
        # free-text path); an evicted one is rebuilt from its journal on its next message.
        self.max_sessions = _positive_int(env.get("AGENT_MAX_SESSIONS"), 64)
        self.store = SessionStore(self.max_sessions, _journal(env))

    def _model_parts(self) -> tuple[LLMClient | None, ModelTape | None, Reranker | None]:
        """The model client (when LLM_ENABLED), the tape every model call goes through (recorded with the
        turn's input, played back on a replay) and the reranker (when RERANK_METHOD names one)."""
        config = self.llm_config
        needs_client = config.enabled or config.rerank_method != "none"
        client = LLMClient(config) if needs_client else None
        llm = client if config.enabled else None
        tape = ModelTape(client) if client is not None else None
        if llm is not None:
            # One probe at start, one line either way: a missing server must not go unnoticed.
            if llm.available(refresh=True):
                log.warning("model path: %s answers", config.describe())
            else:
                log.warning("model path: %s is unreachable; the deterministic fallback answers", config.describe())
        reranker = None
        if tape is not None and config.rerank_method != "none":
            if config.embed_backend == "sentence-transformers":
                client.warm_up()
            reranker = Reranker(self.index, tape, config.rerank_method, config.rerank_top_n, config.rerank_weight,
                                self.settings.rerank.rerank_window)
        return llm, tape, reranker

    def freeze_for_serving(self) -> None:
        """For the process that owns the interpreter (the evaluator, a server), after construction: move
        every object now alive (the built index, which never changes) out of the cyclic collector's
        generations, so a full collection during a turn no longer walks its million references (a pause
        of ~0.2 s), and make full collections rarer (they still walk the live sessions' tracks).  The
        constructor never does this: it changes the whole interpreter."""
        gc.collect()
        gc.freeze()
        young, middle, full = gc.get_threshold()
        gc.set_threshold(young, middle, max(full, self.settings.process.full_collection_threshold))

    @staticmethod
    def prepare_catalog(catalog_path: str) -> bool:
        """Build and store the catalog's index once, when the index cache is on, so that processes
        started next (an evaluator's pool workers) open it instead of each building it; True when a
        stored index is there afterwards.  A bad catalog is left to the constructor to report."""
        cache = IndexCache.from_env(environment())
        if cache is None:
            return False
        try:
            key = cache.key(Path(catalog_path), SETTINGS.index)
            opened = cache.open(key)
            if opened is not None and opened.verified():
                opened.db.close()
                return True
            index = CatalogIndex(catalog_path, SETTINGS.index, cache, key)
        except (CatalogError, OSError, UnicodeDecodeError):
            return False
        index.db.close()
        return index.cache_state == "built"

    @property
    def sessions(self) -> dict[str, SessionState]:
        """The live (in-memory) sessions, least recently used first."""
        return self.store.live

    # ---- contract -------------------------------------------------------------
    def reset(self, session_id: str, user_profile: dict | None = None) -> None:
        """Start a fresh session (profile kept for reference; not used in ranking)."""
        self.store.reset(str(session_id), dict(user_profile) if isinstance(user_profile, dict) else {})

    def open_session(self, session_id: str, user_profile: dict | None = None) -> None:
        """For a service: start the session unless the store knows it already (then nothing changes).
        Unlike `reset`, a second worker opening the same new session keeps what the first stored."""
        self.store.open_session(str(session_id), dict(user_profile) if isinstance(user_profile, dict) else {})

    def respond(self, session_id: str, user_message: str, turn: int = 1, top_k: int = TOP_K) -> dict:
        """One turn; always returns the contract shape."""
        try:
            return self.take_turn(session_id, user_message, turn, top_k)
        except StoreError as exc:   # nothing stored: the safe answer, and the same turn may be sent again
            log.warning("session store failed for %s: %s", session_id, exc)
            return {"message": SAFE_MESSAGE, "ask_attribute": SAFE_QUESTION, "recommendations": [],
                    "usage": {"prompt_tokens": 0, "completion_tokens": 0}}

    def take_turn(self, session_id: str, user_message: Any, turn: Any = 1, top_k: Any = TOP_K,
                  expect: int | None = None) -> dict:
        """`respond` for a service: the turn is answered only once it is stored.

        Raises `StoreUnavailable` (the store failed; nothing stored, send the turn again) or
        `SequenceConflict` (`expect`, the number of inputs the caller believes stored, is not what
        the journal holds, or another worker stored this input first).
        """
        key = str(session_id)
        entry = plain_entry(user_message, turn, top_k)

        def live(state: SessionState) -> tuple[dict, Entry]:
            answer, tape = self._taped(state, user_message, turn, top_k, None, replaying=False)
            return answer, entry if tape is None else dataclasses.replace(entry, tape=tape)
        return self.store.play(key, live, self._replay, expect)

    def stored_turns(self, session_id: str) -> int | None:
        """How many inputs the journal holds for a session (None: it does not know the session); its
        live state is brought up to date on the way, ready for the next turn."""
        return self.store.stored(str(session_id), self._replay)

    def last_turn(self, session_id: str) -> tuple[int, Entry, dict] | None:
        """(inputs stored, the last input, its answer), replayed as needed: what a retried request
        whose turn was stored before its answer was lost gets back."""
        return self.store.last_answer(str(session_id), self._replay)

    def _replay(self, state: SessionState, entry: Entry) -> dict:
        return self._taped(state, entry.message, entry.turn, entry.top_k, entry.tape, replaying=True)[0]

    def _taped(self, state: SessionState, user_message: Any, turn: Any, top_k: Any,
               playback: list | None, replaying: bool) -> tuple[dict, list | None]:
        """One guarded turn with the model's replies recorded (live) or played back (replaying: the
        model is never called, even for an input stored without a recording)."""
        if self.tape is None:
            return self._turn(state, user_message, turn, top_k), None
        self.tape.start(playback, replaying)
        answer = self._turn(state, user_message, turn, top_k)
        return answer, self.tape.take()

    def _turn(self, state: SessionState, user_message: Any, turn: Any, top_k: Any) -> dict:
        """One guarded turn on a state (a live one, or one being rebuilt from its journal)."""
        key = state.session_id
        try:
            return self.pipeline.play(state, user_message, turn, top_k)
        except Exception as exc:  # the guard: never raise, never return an invalid shape
            log.exception("respond failed for session %s", key)
            apply(state, TurnTraced(TurnTrace(turn=state.turn, message=coerce_message(user_message)[:500],
                                              fault=repr(exc), traceback=traceback.format_exc(limit=5))))
            last = state.last_good or {}
            return {
                "message": SAFE_MESSAGE,
                "ask_attribute": SAFE_QUESTION,
                "recommendations": copy.deepcopy(last.get("recommendations", [])),
                "usage": {"prompt_tokens": 0, "completion_tokens": 0},
            }

    def close_session(self, session_id: str) -> None:
        """Forget a session (its state, trace and journal); a later message to it starts afresh."""
        self.store.close(str(session_id))

    def trace(self, session_id: str) -> SessionTrace:
        """Every decision of every turn of a session, typed (an evicted session is rebuilt first)."""
        key = str(session_id)
        with self.store.session_lock(key):        # no turn of this session changes it meanwhile
            state = self.store.sync(key, self._replay)
            if state is None:
                return SessionTrace(session_id=key, known=False)
            return SessionTrace(session_id=state.session_id, known=True, scenario=state.scenario,
                                path=state.path, turns=tuple(state.traces))

    def last_trace(self, session_id: str) -> TurnTrace | None:
        """The trace of the turn this process last answered or replayed for a session (no store read:
        right after `take_turn` or `last_turn`, that turn's decisions)."""
        state = self.store.live.get(str(session_id))
        return state.traces[-1] if state is not None and state.traces else None

    def debug_snapshot(self, session_id: str) -> dict:
        """`trace(session_id)` as a JSON-serialisable dict."""
        return self.trace(session_id).to_dict()


def _open_index(catalog_path: str | None, settings: Settings, cache: IndexCache | None) -> CatalogIndex:
    """The catalog's index (built, or opened from the cache); any unreadable catalog is a CatalogError."""
    if catalog_path is None:
        try:
            catalog_path = str(resolve_catalog(None))
        except FileNotFoundError as exc:
            raise CatalogError(str(exc)) from None
    try:
        return CatalogIndex(catalog_path, settings.index, cache)
    except CatalogError:
        raise
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"cannot read catalog {catalog_path}: {exc}") from exc


def _journal(env: dict[str, str]) -> Journal | str:
    """The session journal: `AGENT_SESSION_STORE` when set, else SQLite (`AGENT_SESSION_DB` or memory)."""
    url = env.get(STORE_ENV_VAR)
    return open_store(url) if url else (env.get("AGENT_SESSION_DB") or ":memory:")


def _positive_int(raw: str | None, default: int) -> int:
    try:
        value = int(raw) if raw is not None else default
    except ValueError:
        log.warning("AGENT_MAX_SESSIONS=%r is not an integer; using %d", raw, default)
        return default
    return value if value > 0 else default
