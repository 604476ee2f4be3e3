"""A checkout of another commit, for the side-by-side benchmarks (`--base`)."""
from __future__ import annotations

import argparse
from pathlib import Path

HOW = ("make one with `git worktree add ../OLD <commit>` (from this repository), then pass --base ../OLD; "
       "remove it afterwards with `git worktree remove ../OLD`")


def checkout(parser: argparse.ArgumentParser, path: str, flag: str = "--base") -> Path:
    """`path` resolved, or a one-line usage error naming the flag and how to make such a checkout."""
    repo = Path(path).resolve()
    if not (repo / "starter" / "agent.py").is_file() or not (repo / "scripts").is_dir():
        parser.error(f"{flag} {path}: not a checkout of this project ({repo}); {HOW}")
    return repo
