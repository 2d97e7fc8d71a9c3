"""Python: ``ast`` contracts and stubs, pytest for the hidden tests."""

from __future__ import annotations

import ast
import posixpath
import shlex
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath

from trajforge import pyast
from trajforge.oracles.stub import stub_source
from trajforge.reconstruct.changed_files import is_test_file
from trajforge.verifiers.languages.fakes import PYTHON, found

HIDDEN_NAME = "test_hidden.py"


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef, owner: str = "") -> str:
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    doc = ast.get_docstring(node)
    line = f"{prefix} {owner}{node.name}({ast.unparse(node.args)}){returns}"
    return f"{line}  # {doc.splitlines()[0]}" if doc else line


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def contract(path: str, source: str) -> list[str]:
    """Public function and class signatures of one Python module (empty when unparsable)."""
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _public(node.name):
            found.append(_signature(node))
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            bases = ", ".join(ast.unparse(b) for b in node.bases)
            found.append(f"class {node.name}({bases})" if bases else f"class {node.name}")
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _public(item.name):
                    found.append("    " + _signature(item, f"{node.name}."))
    module = PurePosixPath(path).with_suffix("").as_posix().replace("/", ".")
    return [f"# module {module} ({path})", *found] if found else []


def missing_import(path: str, source: str, paths: frozenset[str]) -> str | None:
    """The first relative module ``path`` imports at its top level (``from .shell import
    run``, outside any ``try``) that no file of ``paths`` provides, or None: the module could
    load. ``from . import x`` is left alone (``x`` may be a name of the package's
    ``__init__``)."""
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError):
        return None
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or not node.level or not node.module:
            continue
        package = posixpath.dirname(path)
        for _ in range(node.level - 1):
            package = posixpath.dirname(package)
        stem = posixpath.join(package, *node.module.split("."))
        if not any(p == f"{stem}.py" or p.startswith(f"{stem}/") for p in paths):
            return "." * node.level + node.module
    return None


class Python:
    """Python source, pytest hidden tests at the workspace root."""

    name = "python"
    fence = "python"
    extensions = (".py",)
    tests_by = "pytest"
    stub_words = "every body replaced by `raise NotImplementedError`"
    test_names = "only pytest files named test_*.py are accepted"

    def is_source(self, path: str) -> bool:
        return path.endswith(".py") and not is_test_file(path)

    def contract(self, path: str, text: str) -> list[str]:
        return contract(path, text)

    def stub(self, path: str, text: str) -> str | None:
        return stub_source(path, text)

    def hidden_test_path(self, changed: Sequence[str], files: Mapping[str, str]) -> str:
        return HIDDEN_NAME

    def accepts_test_path(self, path: str) -> bool:
        name = posixpath.basename(path)
        return path.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))

    def test_command(self, tests: Sequence[str], files: Mapping[str, str]) -> str:
        return "python3 -m pytest -q -p no:cacheprovider " + " ".join(map(shlex.quote, tests))

    def example_test(self, hidden: str, changed: Sequence[str], files: Mapping[str, str]) -> str:
        return ""  # the prompt's pytest example says it

    def fakes(self, test: str) -> tuple[str, ...]:
        return found(PYTHON, test)

    def unloadable(self, path: str, files: Mapping[str, str]) -> str | None:
        module = missing_import(path, files[path], frozenset(files))
        return f"it imports {module}, which the workspace lacks" if module else None
