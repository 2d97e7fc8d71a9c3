"""Import layers: a stage imports the spine and the stages before it, never one after it.

The flow is reconstruct → oracles → verifiers → splits → guard → train (``../shared/DESIGN.md``);
the spine is ``trajforge`` itself (records, protocols, registries, config), whose CLI
(``trajforge.cli``) is the one place that may import every stage. Imports are read from the
source with ``ast`` (module level and inside functions alike), so a lazy import counts too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ORDER = ("reconstruct", "oracles", "verifiers", "splits", "guard", "train")
SPINE_ALLOWED_LAZY = ("registry.py", "executors_ray.py")
"""Spine modules that name stage implementations by path (registries resolve them lazily)."""


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
    return found


def _stage(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "trajforge":
        return None
    if len(parts) > 1 and parts[1] in ORDER:
        return parts[1]
    return "spine"


def _files(folder: str) -> list[Path]:
    return sorted((REPO / folder).rglob("*.py"))


@pytest.mark.parametrize("stage", ORDER)
def test_a_stage_imports_only_the_spine_and_earlier_stages(stage: str) -> None:
    allowed = {"spine", *ORDER[: ORDER.index(stage) + 1]}
    bad = []
    for path in _files(stage):
        for module in _imports(path):
            target = _stage(module)
            if target is not None and target not in allowed:
                bad.append(f"{path.relative_to(REPO)} imports {module}")
    assert bad == []


def test_the_spine_imports_no_stage_outside_its_cli() -> None:
    bad = []
    for path in _files("trajforge"):
        rel = path.relative_to(REPO / "trajforge")
        if rel.parts[0] == "cli" or rel.name in SPINE_ALLOWED_LAZY:
            continue
        for module in _imports(path):
            if _stage(module) not in (None, "spine"):
                bad.append(f"trajforge/{rel} imports {module}")
    assert bad == []
