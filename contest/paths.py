"""Where the contest's files are looked up (README "Where the catalog comes from").

Catalog: an explicit path (flag), `CATALOG_PATH`, `data/catalog.jsonl`,
`../shared/techjam/catalog_proxy.jsonl`.  Sessions: the flag,
`data/public_set.jsonl`, `../shared/techjam/public_set.jsonl`.  A user who puts
the official `catalog.jsonl` in `data/` gets the real benchmark.
"""
from __future__ import annotations

import argparse
import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SHARED_DIR = PROJECT_ROOT.parent / "shared" / "techjam"
# Where an agent may keep its built catalog index (a directory, or "off"); see starter/index/cache.py.
INDEX_CACHE_ENV = "AGENT_INDEX_CACHE"


def disable_index_cache() -> None:
    """`--no-cache`: agents built by this process (and its workers) build their index afresh."""
    os.environ[INDEX_CACHE_ENV] = "off"


class _NoCache(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None) -> None:  # noqa: ANN001
        disable_index_cache()
        setattr(namespace, self.dest, True)


def add_no_cache_argument(ap: argparse.ArgumentParser) -> None:
    """The `--no-cache` flag of every command that builds an agent (given, it turns the cache off)."""
    ap.add_argument("--no-cache", action=_NoCache, nargs=0, default=False,
                    help="build the catalog index afresh (no on-disk index cache; also AGENT_INDEX_CACHE=off)")


def environment(path: Path | None = None) -> dict[str, str]:
    """The process environment over `.env`'s values (default: the project's `.env`): what a library
    object reads its settings from without writing them into the process (variables already set win)."""
    target = path or PROJECT_ROOT / ".env"
    values: dict[str, str] = {}
    if target.is_file():
        from dotenv import dotenv_values

        values = {k: v for k, v in dotenv_values(target).items() if v is not None}
    return {**values, **os.environ}


def load_env_file(path: Path | None = None) -> bool:
    """Read `.env` (default: the project's) into the environment; variables already set win.

    `.env.example` lists every setting; nothing fails without a `.env`."""
    target = path or PROJECT_ROOT / ".env"
    if not target.is_file():
        return False
    from dotenv import load_dotenv

    return bool(load_dotenv(target, override=False))


def _first_existing(candidates: list[Path]) -> Path | None:
    for c in candidates:
        if c.is_file():
            return c
    return None


def _resolve(kind: str, explicit: str | None, candidates: list[Path]) -> Path:
    if explicit:
        p = Path(explicit)
        if not p.is_file():
            raise FileNotFoundError(f"{kind} not found: {p}")
        return p
    found = _first_existing(candidates)
    if found is None:
        raise FileNotFoundError(f"no {kind} found; looked at: " + ", ".join(str(c) for c in candidates))
    return found


def resolve_catalog(explicit: str | None = None) -> Path:
    """The catalog to use; raises FileNotFoundError naming every place looked at."""
    env = os.environ.get("CATALOG_PATH")
    candidates = ([Path(env)] if env else []) + [PROJECT_ROOT / "data" / "catalog.jsonl",
                                                 SHARED_DIR / "catalog_proxy.jsonl"]
    return _resolve("catalog", explicit, candidates)


def resolve_dataset(explicit: str | None = None) -> Path:
    """The session file: the flag, `data/public_set.jsonl`, then the shared public set."""
    return _resolve("dataset", explicit, [PROJECT_ROOT / "data" / "public_set.jsonl",
                                          SHARED_DIR / "public_set.jsonl"])


def missing_data_help(problems: list[str]) -> str:
    """What to do when the catalog or the session file is not where it is looked for."""
    return "\n".join(["error: " + p for p in problems] + [
        "fix: pass --catalog PATH (or set CATALOG_PATH, or put the official catalog.jsonl in data/);",
        "     the official catalog.jsonl is the TechJam 2026 Track 4 release download; the proxy catalog this",
        f"     project is developed on is {SHARED_DIR / 'catalog_proxy.jsonl'} (see PROXY.md there);",
        f"     sessions: pass --dataset PATH or put public_set.jsonl in data/ (shared copy: {SHARED_DIR}).",
    ])
