"""Stub control: the oracle with every function body replaced by a raise / throw.

A verifier that still passes against the stub does not exercise the code it claims to test.
Python is rewritten through `ast` positions (only the bodies change; signatures, decorators,
docstrings, class attributes, module constants, imports and comments outside bodies stay);
JavaScript / TypeScript through tree-sitter.
"""

from __future__ import annotations

import ast
import logging
import posixpath
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

import tree_sitter

from trajforge.oracles import treesitter
from trajforge.oracles.pysource import PySource, compiles

log = logging.getLogger(__name__)

STUBBABLE = (".py", ".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx")

PY_RAISE = b"raise NotImplementedError"
JS_THROW = b'{ throw new Error("not implemented"); }'
JS_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "generator_function_declaration",
        "function_expression",
        "function",
        "generator_function",
        "method_definition",
        "arrow_function",
    }
)


def stub_source(path: str, source: str) -> str | None:
    """The file with every function/method body replaced by a raise (Python) or throw (JS/TS).

    None when the file is not stubbable (by suffix) or does not parse.
    """
    suffix = posixpath.splitext(path)[1].lower()
    if suffix not in STUBBABLE:
        return None
    if suffix == ".py":
        return _stub_python(source)
    grammar = treesitter.grammar_for(path)
    return _stub_js(grammar, source) if grammar else None


def stub_files(
    files: Mapping[str, str], skip: Callable[[str], bool] = lambda p: False
) -> dict[str, str]:
    """All files, with stubbable ones stubbed (unless skip(path), e.g. test files).

    A stubbable file that does not parse is kept as it is (and logged).
    """
    out: dict[str, str] = {}
    for path, source in files.items():
        stubbed = None if skip(path) else stub_source(path, source)
        if stubbed is None and not skip(path) and path.lower().endswith(STUBBABLE):
            log.warning("%s: does not parse; kept unstubbed", path)
        out[path] = source if stubbed is None else stubbed
    return out


# --- Python -------------------------------------------------------------------------------


def _stub_python(source: str) -> str | None:
    try:
        src = PySource(source)
    except (SyntaxError, ValueError):
        return None
    edits = [_py_edit(src, fn) for fn in _outer_functions(src.tree)]
    out = treesitter.apply_edits(src.data, edits).decode("utf-8")
    if compiles(out):
        return out
    log.debug("position rewrite did not compile; falling back to ast.unparse")
    return _stub_python_unparse(src.tree)


def _outer_functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Functions not nested in another function (their bodies go with the outer one)."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield child
        else:
            yield from _outer_functions(child)


def _docstring(body: list[ast.stmt]) -> ast.Expr | None:
    first = body[0] if body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        return first
    return None


def _py_edit(src: PySource, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[int, int, bytes]:
    doc = _docstring(fn.body)
    rest = fn.body[1:] if doc else fn.body
    if rest:
        return src.stmt_start(rest[0]), src.span(rest[-1])[1], PY_RAISE
    assert doc is not None  # a function body is never empty
    start, end = src.span(doc)
    prefix = src.prefix(start)
    if prefix.strip():
        return end, end, b"; " + PY_RAISE
    return end, end, b"\n" + prefix + PY_RAISE


_F = TypeVar("_F", ast.FunctionDef, ast.AsyncFunctionDef)


class _Stubber(ast.NodeTransformer):
    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        return self._stub(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AsyncFunctionDef:
        return self._stub(node)

    def _stub(self, node: _F) -> _F:
        doc: ast.Expr | None = _docstring(node.body)
        body: list[ast.stmt] = [doc] if doc is not None else []
        node.body = [*body, ast.Raise(exc=ast.Name("NotImplementedError"))]
        return node


def _stub_python_unparse(tree: ast.Module) -> str | None:
    stubbed = ast.fix_missing_locations(_Stubber().visit(tree))
    out = ast.unparse(stubbed) + "\n"
    return out if compiles(out) else None


# --- JavaScript / TypeScript --------------------------------------------------------------


def _stub_js(grammar: str, source: str) -> str | None:
    data = source.encode("utf-8")
    tree = treesitter.parse(grammar, data)
    if tree.root_node.has_error:
        return None
    edits = [(body.start_byte, body.end_byte, JS_THROW) for body in _js_bodies(tree.root_node)]
    out = treesitter.apply_edits(data, edits)
    return out.decode("utf-8") if treesitter.parses(grammar, out) else None


def _js_bodies(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """Bodies of outermost functions (nested ones vanish with them)."""
    for child in node.named_children:
        body = child.child_by_field_name("body") if child.type in JS_FUNCTIONS else None
        if body is not None:
            yield body
        else:
            yield from _js_bodies(child)
