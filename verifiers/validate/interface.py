"""The interface the hidden tests use, resolved against the oracle: modules and signatures.

Python tests are read with ``ast``: ``from pkg.mod import f`` and ``import mod`` (then
``mod.f``) name what is used; each name is looked up in the oracle's module (following
re-exports a few levels) and shown as its signature — ``def f(a, b=2) -> int`` — or, for a
class, ``class C`` with ``__init__`` and the public methods / attributes the tests touch.
JS/TS tests go through :mod:`trajforge.verifiers.validate.interface_js`. Names that resolve to
no oracle file (the standard library, third-party packages, test helpers) are left out.
"""

from __future__ import annotations

import ast
import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from trajforge import pyast
from trajforge.reconstruct.changed_files import is_test_file

Reader = Callable[[str], str | None]
"""Text of an oracle file by relative path, or None when there is no such file."""


@dataclass
class Module:
    """One oracle file the tests import from, and what they use of it."""

    path: str
    """Oracle-relative path of the file."""
    name: str
    """How the tests import it (``pkg.mod``, ``./math``)."""
    lines: list[str] = field(default_factory=list)
    """Signature lines, nested members indented by two spaces."""


@dataclass
class _Uses:
    """What one Python test file imports and touches."""

    names: dict[str, set[str]] = field(default_factory=dict)
    """Resolved module path → names imported from it."""
    labels: dict[str, str] = field(default_factory=dict)
    """Resolved module path → import name as written."""
    attrs: set[str] = field(default_factory=set)
    """Every attribute name the file reads (methods and fields of imported classes)."""


def resolve_module(dotted: str, base: str, paths: frozenset[str]) -> str | None:
    """Oracle path of a Python module imported as ``dotted`` from a file in folder ``base``."""
    rel = dotted.replace(".", "/")
    candidates = [f"{rel}.py", f"{rel}/__init__.py", f"src/{rel}.py", f"src/{rel}/__init__.py"]
    if base:
        candidates = [posixpath.join(base, c) for c in candidates[:2]] + candidates
    for candidate in candidates:
        if candidate in paths:
            return candidate
    tails = (f"/{rel}.py", f"/{rel}/__init__.py")
    found = sorted((p for p in paths if p.endswith(tails)), key=lambda p: (p.count("/"), p))
    return found[0] if found else None


def _relative(level: int, module: str | None, base: str) -> str:
    """Dotted-path spelling of a relative import, as a folder-relative module name."""
    folder = base
    for _ in range(level - 1):
        folder = posixpath.dirname(folder)
    parts = [p for p in folder.split("/") if p] + ([module] if module else [])
    return ".".join(parts)


def _add(uses: _Uses, path: str | None, label: str, name: str | None) -> None:
    if path is None or is_test_file(path):
        return
    uses.labels.setdefault(path, label)
    names = uses.names.setdefault(path, set())
    if name:
        names.add(name)


def _attribute_chain(node: ast.Attribute) -> list[str]:
    chain: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        chain.insert(0, current.attr)
        current = current.value
    return [current.id, *chain] if isinstance(current, ast.Name) else []


def python_uses(test_path: str, source: str, paths: frozenset[str]) -> _Uses:
    """What a Python test file imports from the oracle and which attributes it reads."""
    uses = _Uses()
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError):
        return uses
    base = posixpath.dirname(test_path)
    modules: dict[str, str] = {}  # local name → dotted module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            dotted = _relative(node.level, node.module, base) if node.level else node.module or ""
            path = resolve_module(dotted, "" if node.level else base, paths)
            for alias in node.names:
                sub = resolve_module(f"{dotted}.{alias.name}", "", paths) if dotted else None
                if sub is not None:  # ``from pkg import mod``: a module, used by attribute
                    modules[alias.asname or alias.name] = f"{dotted}.{alias.name}"
                elif alias.name != "*":
                    _add(uses, path, dotted, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                modules[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.Attribute):
            uses.attrs.add(node.attr)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            _module_attribute(node, modules, base, paths, uses)
    return uses


def _module_attribute(
    node: ast.Attribute, modules: dict[str, str], base: str, paths: frozenset[str], uses: _Uses
) -> None:
    """``mod.f`` / ``pkg.mod.f`` on an imported module: record ``f`` against its file."""
    chain = _attribute_chain(node)
    if len(chain) < 2 or chain[0] not in modules:
        return
    dotted = ".".join([modules[chain[0]], *chain[1:-1]])
    path = resolve_module(dotted, base, paths)
    if path is not None:
        _add(uses, path, dotted, chain[-1])


def _public(name: str) -> bool:
    return not name.startswith("_")


def signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """``def name(params) -> ret`` of a function, as written in the oracle."""
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    return f"{prefix} {node.name}({ast.unparse(node.args)}){returns}"


def _fields(cls: ast.ClassDef) -> list[str]:
    """Attributes the class sets on ``self`` or declares in its body, in source order."""
    found: list[str] = []
    for node in ast.walk(cls):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and ast.unparse(target.value) == "self":
                found.append(target.attr)
            elif isinstance(target, ast.Name) and node in cls.body:
                found.append(target.id)
    return list(dict.fromkeys(found))


def class_lines(cls: ast.ClassDef, attrs: set[str]) -> list[str]:
    """``class C(bases)``, its ``__init__`` and the public members the tests read."""
    bases = ", ".join(ast.unparse(b) for b in cls.bases)
    lines = [f"class {cls.name}({bases})" if bases else f"class {cls.name}"]
    methods = set()
    for item in cls.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            methods.add(item.name)
            if item.name == "__init__" or (_public(item.name) and item.name in attrs):
                lines.append("  " + signature(item))
    lines += [
        f"  attribute {name}"
        for name in _fields(cls)
        if _public(name) and name in attrs and name not in methods
    ]
    return lines


def _definitions(tree: ast.Module) -> dict[str, ast.stmt]:
    found: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.ImportFrom):
            targets = node.targets if isinstance(node, ast.Assign) else [node]
            for target in targets:
                for name in _bound(target):
                    found.setdefault(name, node)
    return found


def _bound(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.ImportFrom):
        yield from (a.asname or a.name for a in node.names)
    elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        yield node.target.id
    elif isinstance(node, ast.Name):
        yield node.id


def _parse(read: Reader, path: str) -> ast.Module | None:
    text = read(path)
    if text is None:
        return None
    try:
        return pyast.parse(text)
    except (SyntaxError, ValueError):
        return None


def lookup(
    path: str, name: str, attrs: set[str], read: Reader, paths: frozenset[str], depth: int = 0
) -> list[str]:
    """Signature lines of ``name`` as the module at ``path`` provides it ([] when unknown)."""
    tree = _parse(read, path)
    node = _definitions(tree).get(name) if tree is not None else None
    if node is None:
        return []
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return [signature(node)]
    if isinstance(node, ast.ClassDef):
        return class_lines(node, attrs)
    if isinstance(node, ast.ImportFrom) and depth < 3:
        source = next(a.name for a in node.names if (a.asname or a.name) == name)
        base = posixpath.dirname(path)
        dotted = _relative(node.level, node.module, base) if node.level else node.module or ""
        target = resolve_module(dotted, "", paths)
        if target is not None:
            found = lookup(target, source, attrs, read, paths, depth + 1)
            if found and source != name:
                return [f"{name} = {source}", *found]
            return found
        return []
    return [name]


def python_modules(hidden: dict[str, str], read: Reader, paths: frozenset[str]) -> list[Module]:
    """The oracle modules the Python hidden tests use, with the signatures of what they use."""
    merged = _Uses()
    for test_path, source in sorted(hidden.items()):
        if not test_path.endswith(".py"):
            continue
        uses = python_uses(test_path, source, paths)
        merged.attrs |= uses.attrs
        for path, names in uses.names.items():
            merged.names.setdefault(path, set()).update(names)
            merged.labels.setdefault(path, uses.labels[path])
    modules: list[Module] = []
    for path in sorted(merged.names):
        module = Module(path, merged.labels[path])
        tree = _parse(read, path)
        order = list(_definitions(tree)) if tree is not None else []
        wanted = sorted(
            merged.names[path], key=lambda n: (order.index(n) if n in order else 1e9, n)
        )
        for name in wanted:
            module.lines += lookup(path, name, merged.attrs, read, paths)
        if module.lines:
            modules.append(module)
    return modules
