"""Imports point one way: contest <- grounding <- starter; the evaluator never reaches into the agent; inside
the agent, the index never imports a decision, and each sub-package reaches only the rooms below it."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = {"contest", "grounding", "starter", "evaluator", "demo", "scripts", "prompts", "tests"}
# package -> our packages it may import
ALLOWED = {
    "contest": set(),
    "grounding": {"contest"},
    "prompts": set(),
    "starter": {"contest", "grounding", "prompts"},
    "evaluator": {"contest"},
}
# starter sub-package -> the starter modules and sub-packages it may import (besides its own)
STARTER_ROOMS = {
    "index": {"settings"},
    "model": set(),
    "reading": {"settings", "index", "model"},
    "template": {"settings", "index", "reading", "model", "conversation", "replies"},
    "people": {"settings", "index", "reading", "template", "conversation", "replies"},
    "conversation": {"settings", "index", "reading", "template", "session_store"},
    "session_store": {"model"},
}
# modules of the conversation room that hold state and its journal: they read the template's types only
STATE_MODULES = ("state", "sessions", "trace")
MAX_LINES = 400
MAX_FUNCTION_LINES = 60


def _modules(path: Path) -> set[str]:
    """Every dotted module name a file imports (absolute imports)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


def _imports(path: Path) -> set[str]:
    return {m.split(".")[0] for m in _modules(path)} & OURS


def _starter_rooms(path: Path) -> set[str]:
    """The starter sub-packages and top-level modules a file imports."""
    rooms = set()
    for m in _modules(path):
        parts = m.split(".")
        if parts[0] == "starter" and len(parts) > 1:
            rooms.add(parts[1])
    return rooms


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    bad = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        extra = _imports(path) - ALLOWED[package] - {package}
        if extra:
            bad[str(path.relative_to(ROOT))] = sorted(extra)
    assert bad == {}


@pytest.mark.parametrize("room", sorted(STARTER_ROOMS))
def test_each_room_of_the_agent_imports_only_the_rooms_below_it(room: str) -> None:
    bad = {}
    for path in sorted((ROOT / "starter" / room).rglob("*.py")):
        extra = _starter_rooms(path) - STARTER_ROOMS[room] - {room}
        if extra:
            bad[str(path.relative_to(ROOT))] = sorted(extra)
    assert bad == {}


def test_the_index_imports_no_decision() -> None:
    """Index code is machinery: a module that decides (reading, template, people, the turn) is never its
    import, so the cache key (`index_code`) covers everything that shapes the index."""
    for path in sorted((ROOT / "starter" / "index").rglob("*.py")):
        assert _starter_rooms(path) <= {"index", "settings"}, path


def test_state_modules_import_no_decision_module() -> None:
    for name in STATE_MODULES:
        modules = _modules(ROOT / "starter" / "conversation" / f"{name}.py")
        assert not any(m.startswith(("starter.template.play", "starter.people", "starter.route", "starter.turn"))
                       for m in modules), name


@pytest.mark.parametrize("package", ["contest", "grounding", "starter", "demo"])
def test_no_module_of_the_agent_is_over_the_size_limit(package: str) -> None:
    long = {str(p.relative_to(ROOT)): n for p in sorted((ROOT / package).rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


@pytest.mark.parametrize("package", ["contest", "grounding", "starter", "demo"])
def test_no_function_of_the_agent_is_over_the_size_limit(package: str) -> None:
    long = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                n = node.end_lineno - node.lineno + 1
                if n > MAX_FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.name}"] = n
    assert long == {}


def test_no_capitalised_module_alias_in_the_agent() -> None:
    """`import x as X` reads like a constant; the agent's modules use module names as they are."""
    found = []
    for package in ("contest", "grounding", "starter"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    for a in node.names:
                        target = f"{getattr(node, 'module', '') or ''}.{a.name}".strip(".")
                        if a.asname and a.asname.isupper() and _is_module(target):
                            found.append(f"{path.relative_to(ROOT)}: {a.name} as {a.asname}")
    assert found == []


def _is_module(dotted: str) -> bool:
    parts = dotted.split(".")
    return (ROOT.joinpath(*parts).with_suffix(".py")).is_file() or (ROOT.joinpath(*parts) / "__init__.py").is_file()
