"""What exported Harbor tasks install, pinned, and the answer checker they carry.

Pins: polars as the sandbox image pins it (the data-task oracles were validated with it);
anything else at the version this trajforge runs with (pytest, the checker's pydantic), so the
exported task grades with what validation used. The checkers: ``trajforge.verifiers.answer``
and ``trajforge.verifiers.answer_facts`` and every ``trajforge`` module they import, copied under
``tests/checker/`` with empty package ``__init__`` files, so ``tests/grade_answer.py`` calls the
very check of ``trajforge verify`` (the answer key of a reconstructed qa task, else the value).
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import sys
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path

from trajforge import pyast
from trajforge.verifiers.sandbox.image import WHEELS

CHECKERS = ("trajforge.verifiers.answer", "trajforge.verifiers.answer_facts")
"""Modules that grade exported qa and data tasks: ``check_answer`` (a value) and ``check_key``
(a reconstructed qa task's answer key)."""
IMAGE_PINS = {w.split("==")[0]: w for w in WHEELS}
"""Pins taken from the sandbox image recipe (polars and its runtime)."""
COMPANIONS = {"polars": ("polars-runtime-32",)}
"""Distributions installed beside a package at the same pin."""


def pins(packages: Sequence[str]) -> list[str]:
    """``name==version`` for each package (and its companions), in order."""
    found: list[str] = []
    for name in packages:
        for dist in (name, *COMPANIONS.get(name, ())):
            pin = IMAGE_PINS.get(dist) or f"{dist}=={importlib.metadata.version(dist)}"
            if pin not in found:
                found.append(pin)
    return found


def _source(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ImportError(f"cannot find {module}")
    return Path(spec.origin)


def _imports(module: str, path: Path) -> Iterable[str]:
    tree = pyast.parse(path.read_text(encoding="utf-8"))
    package = module.rsplit(".", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                yield f"{base}.{node.module}"
            else:
                yield node.module


@cache
def _closure() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(trajforge modules the checker needs, third-party top-level imports)."""
    todo, seen, outside = list(CHECKERS), set(), set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        for name in _imports(module, _source(module)):
            top = name.split(".")[0]
            if top == "trajforge":
                todo.append(name if importlib.util.find_spec(name) else name.rsplit(".", 1)[0])
            elif top not in sys.stdlib_module_names and top != "__future__":
                outside.add(top)
    return tuple(sorted(seen)), tuple(sorted(outside))


def checker_files() -> dict[str, str]:
    """Path under ``tests/checker/`` → text, package ``__init__`` files empty."""
    modules, _ = _closure()
    files: dict[str, str] = {}
    for module in modules:
        parts = module.split(".")
        for depth in range(1, len(parts)):
            files.setdefault("/".join(parts[:depth]) + "/__init__.py", "")
        source = _source(module)
        name = "/__init__.py" if source.name == "__init__.py" else ".py"
        files["/".join(parts) + name] = source.read_text(encoding="utf-8")
    return files


def checker_requirements() -> list[str]:
    """Distributions the vendored checker imports (``pydantic``)."""
    _, outside = _closure()
    mapping = importlib.metadata.packages_distributions()
    return sorted({mapping[top][0] for top in outside if top in mapping})
