"""No two modules import each other, directly or round a loop: data flows one way.

Imports are read from the source with ``ast`` over every module under ``trajforge/`` (the
stage folders are linked there, so a module's name is its path), at module level and inside
functions alike — a lazy import that closes a loop is a loop that was hidden, not broken. Only
imports under ``if TYPE_CHECKING:`` are left out: they never run.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _modules() -> dict[str, Path]:
    """Module name → source file, for every module under ``trajforge/`` (stage folders are
    symlinks there, so the folder is the import path)."""
    found: dict[str, Path] = {}
    for folder, _, names in sorted(os.walk(REPO / "trajforge", followlinks=True)):
        for file in sorted(n for n in names if n.endswith(".py")):
            path = Path(folder) / file
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _runtime_nodes(tree: ast.Module) -> list[ast.AST]:
    """Every node that can run: the bodies of ``if TYPE_CHECKING:`` blocks left out."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped |= {id(n) for child in node.body for n in ast.walk(child)}
    return [n for n in ast.walk(tree) if id(n) not in skipped]


def _imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project modules ``name`` imports (``from pkg import module`` names the module)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    for node in _runtime_nodes(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            targets |= {f"{base}.{a.name}" if f"{base}.{a.name}" in known else base
                        for a in node.names}  # fmt: skip
    return {t for t in targets if t in known and t != name}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (iterative Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_the_layout_is_read_whole() -> None:
    modules = _modules()
    for name in ("trajforge.records.task", "trajforge.verifiers.validate.run",
                 "trajforge.reconstruct.pipeline", "trajforge.train.trainer"):  # fmt: skip
        assert name in modules, name
    graph = {m: _imports(m, p, modules) for m, p in modules.items()}
    assert "trajforge.verifiers.validate.per_task" in graph["trajforge.verifiers.validate.run"]
    assert "trajforge.records.legacy" in graph["trajforge.records.validation"]


def test_the_cycle_finder_finds_a_lazy_loop() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_round_a_loop() -> None:
    modules = _modules()
    graph = {m: _imports(m, p, modules) for m, p in modules.items()}
    loops = _cycles(graph)
    assert not loops, "modules importing each other (move the shared part down a level):\n" + (
        "\n".join(" ↔ ".join(group) for group in loops)
    )
