"""Imports point one way: contest <- grounding <- starter; the evaluator never reaches into the agent."""
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
MAX_LINES = 450


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found & OURS


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_package_imports_only_the_layers_below_it(package: str) -> None:
    bad = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        extra = _imports(path) - ALLOWED[package] - {package}
        if extra:
            bad[str(path.relative_to(ROOT))] = sorted(extra)
    assert bad == {}


@pytest.mark.parametrize("package", ["contest", "grounding", "starter"])
def test_no_module_of_the_agent_is_over_the_size_limit(package: str) -> None:
    long = {str(p.relative_to(ROOT)): n for p in sorted((ROOT / package).rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}
