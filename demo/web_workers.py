"""The web demo on N worker processes: one listening socket, one index loaded once, sessions in a store.

    techjam-web --workers 4 [--session-store postgresql://...]

Why it is a pre-forking supervisor and not `uvicorn --workers N`: uvicorn
starts its workers by spawning fresh interpreters, so each would load the
index (about 0.9 s and 100+ MB of Python objects each).  Here the supervisor
builds the index once (`Agent.prepare_catalog`), loads the agent once, and
forks the workers from it: the index's pages are shared copy-on-write (the
agent freezes them out of the cyclic collector, which would otherwise touch,
and so copy, every page).  What must not be shared across a fork is opened
again in each worker: the index's SQLite connection (its temporary tables
are per connection), the catalog file handle of the product lookup (a shared
file offset), and the session journal (each worker its own connection).

Sessions live in the store (`--session-store`, else `AGENT_SESSION_STORE`,
else a SQLite file in a temporary folder for this run): any worker answers
any turn, and a worker that dies loses nothing; the supervisor starts a new
one in its place.  SIGTERM or SIGINT stops accepting and lets every worker
finish its in-flight turns (uvicorn's graceful shutdown) before exiting.
"""
from __future__ import annotations

import os
import signal
import socket
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

import uvicorn

from demo.session import ProductLookup, build_agent, dataset_paths
from demo.web import DemoApp
from demo.web_app import WebState, create_app

RESTART_PAUSE = 0.5          # seconds between restarts of a worker that keeps dying at once


def default_store(url: str | None) -> tuple[str, tempfile.TemporaryDirectory | None]:
    """The session store the workers share: `url`, `AGENT_SESSION_STORE`, or a fresh SQLite file."""
    url = url or os.environ.get("AGENT_SESSION_STORE")
    if url and url != "memory":
        return url, None
    folder = tempfile.TemporaryDirectory(prefix="techjam-web-")
    return f"sqlite:///{folder.name}/sessions.db", folder


def reopen_after_fork(agent: Any, lookup: ProductLookup, store_url: str) -> None:
    """In a forked worker: its own index connection, catalog file handle and session journal."""
    index = getattr(agent, "index", None)
    db = getattr(index, "db", None)
    if isinstance(db, sqlite3.Connection):
        path = next((row[2] for row in db.execute("PRAGMA database_list") if row[1] == "main"), "")
        if path:   # a cached index file (an in-memory index is the worker's own copy already)
            fresh = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
            index.db = fresh
            if getattr(index, "postings", None) is not None:
                index.postings.db = fresh
    lookup._fh = open(lookup.path, "rb")
    store = getattr(agent, "store", None)
    if store is not None:
        from starter.session_store import open_store
        from starter.conversation.sessions import SessionStore
        agent.store = SessionStore(store.max_live, open_store(store_url))


class Supervisor:
    """Forks `count` workers from a loaded agent, restarts any that dies, stops them on a signal."""

    def __init__(self, count: int, serve_one: Callable[[int], None]) -> None:
        self.count = count
        self.serve_one = serve_one
        self.workers: dict[int, int] = {}      # pid -> slot
        self.stopping = False
        self.restarts = 0

    def _fork(self, slot: int) -> None:
        pid = os.fork()
        if pid == 0:                              # the worker
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            code = 0
            try:
                self.serve_one(slot)
            except BaseException as exc:          # one line, then the supervisor decides
                print(f"worker {os.getpid()}: {repr(exc)[:300]}", file=sys.stderr, flush=True)
                code = 1
            finally:
                os._exit(code)
        self.workers[pid] = slot

    def _stop(self, signum: int, frame: Any) -> None:
        self.stopping = True
        for pid in list(self.workers):
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        for slot in range(self.count):
            self._fork(slot)
        print(f"{self.count} workers: {' '.join(map(str, self.workers))}", flush=True)
        while self.workers:
            try:
                pid, status = os.wait()
            except ChildProcessError:
                break
            except InterruptedError:
                continue
            slot = self.workers.pop(pid, None)
            if slot is None or self.stopping:
                continue
            print(f"worker {pid} ended ({_how(status)}); starting another", file=sys.stderr, flush=True)
            self.restarts += 1
            time.sleep(RESTART_PAUSE if self.restarts > self.count else 0)
            self._fork(slot)
        return 0


def _how(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit {os.WEXITSTATUS(status)}"


def serve(sock: socket.socket, catalog_path: Path, agent_spec: str, extra: dict[str, Path], workers: int,
          store_url: str | None, config: Callable[[Any], uvicorn.Config], preload: bool = True,
          max_queue: int = 16) -> int:
    """Load once, fork `workers` servers on `sock`, supervise them; the process's exit code."""
    url, folder = default_store(store_url)
    print(f"sessions in {url}", flush=True)
    os.environ["AGENT_SESSION_STORE"] = "memory"      # the supervisor's own agent never serves a turn
    t0 = time.perf_counter()
    loader = _Loader(catalog_path, agent_spec)
    loader.prepare()
    if preload:
        loader.load()
        print(f"agent loaded once in {time.perf_counter() - t0:.1f} s; {threading.active_count()} thread(s)",
              flush=True)
    os.environ["AGENT_SESSION_STORE"] = url

    def serve_one(slot: int) -> None:
        agent, lookup = loader.load()
        if preload:
            reopen_after_fork(agent, lookup, url)
        state = WebState.ready(DemoApp(agent, lookup, dataset_paths(extra), str(catalog_path)))
        uvicorn.Server(config(create_app(state, max_agent_queue=max_queue))).run(sockets=[sock])

    try:
        return Supervisor(workers, serve_one).run()
    finally:
        sock.close()
        if folder is not None:
            folder.cleanup()


class _Loader:
    """The agent and product lookup, loaded at most once per process (the supervisor's are inherited)."""

    def __init__(self, catalog_path: Path, agent_spec: str) -> None:
        self.catalog_path, self.agent_spec = catalog_path, agent_spec
        self.loaded: tuple[Any, ProductLookup] | None = None

    def prepare(self) -> None:
        """The index built and stored once, before any worker starts (the agent's optional hook), in a
        process of its own: a cold build's peak memory is not left in the process the workers fork from."""
        from evaluator.local_evaluator import load_agent_class
        hook = getattr(load_agent_class(self.agent_spec), "prepare_catalog", None)
        if not callable(hook):
            return
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                hook(str(self.catalog_path))
                code = 0
            finally:
                os._exit(code)
        os.waitpid(pid, 0)

    def load(self) -> tuple[Any, ProductLookup]:
        if self.loaded is None:
            self.loaded = (build_agent(self.catalog_path, self.agent_spec), ProductLookup(self.catalog_path))
        return self.loaded
