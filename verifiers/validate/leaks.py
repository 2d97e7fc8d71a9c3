"""What an agent-facing instruction must never say about the hidden tests, and the check.

:func:`forbidden` reads the hidden test files: their test names (Python ``test_*`` functions
and ``Test*`` classes, JS/TS ``it``/``test`` titles), their file names, and the literal
expected values of their assertions (``assert x == LITERAL``, ``pytest.approx(LITERAL)``,
``assertEqual``; JS ``expect(x).toBe(LITERAL)`` / ``toEqual`` / ``assert.strictEqual``).
Trivial literals (0, 1, booleans, None, empty or one-character strings) and anything the
session's own request already states are not forbidden. :func:`drop_leaks` removes every line
of a text that names one, and says why.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterator, Mapping

import tree_sitter

from trajforge import pyast
from trajforge.oracles import treesitter
from trajforge.records import Forbidden

_TRIVIAL_NUMBERS = frozenset({"0", "1", "0.0", "1.0", "-0", "-0.0"})
_PY_EQUAL_CALLS = frozenset({"assertEqual", "assertEquals", "assertAlmostEqual", "approx"})
_JS_MATCHERS = frozenset({"toBe", "toEqual", "toStrictEqual", "toBeCloseTo"})
_JS_ASSERTS = frozenset({"equal", "strictEqual", "deepEqual", "deepStrictEqual"})
_JS_CASES = frozenset({"it", "test", "describe"})
_JS_LITERALS = frozenset({"number", "string", "array", "object", "unary_expression", "pair"})


def _pattern(item: str) -> re.Pattern[str]:
    """``item`` as a whole token: not glued to a word character (nor to a digit's dot)."""
    head = r"(?<![\w.])" if item[:1].isalnum() or item[:1] == "_" else ""
    tail = r"(?![\w]|\.\d)" if item[-1:].isalnum() or item[-1:] == "_" else ""
    return re.compile(head + re.escape(item) + tail)


def mentions(text: str, item: str) -> bool:
    """``text`` contains ``item`` as a token."""
    return bool(_pattern(item).search(text))


def _number_forms(value: int | float) -> list[str]:
    if isinstance(value, float) and value.is_integer():
        return [repr(value), str(int(value))]
    return [repr(value)]


def _scalars(value: object) -> Iterator[str]:
    """Non-trivial scalar texts inside a literal value (containers walked)."""
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float):
        yield from (f for f in _number_forms(value) if f not in _TRIVIAL_NUMBERS)
    elif isinstance(value, str):
        if len(value.strip()) > 1:
            yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _scalars(key)
            yield from _scalars(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _scalars(item)


def _literal(node: ast.expr) -> Iterator[str]:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return
    yield from _scalars(value)


def _py_expected(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert):
            for cmp in ast.walk(node.test):
                if isinstance(cmp, ast.Compare) and any(isinstance(o, ast.Eq) for o in cmp.ops):
                    for side in (cmp.left, *cmp.comparators):
                        yield from _literal(side)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in _PY_EQUAL_CALLS:
                for arg in node.args:
                    yield from _literal(arg)


def _is_test(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return node.name.startswith("test")


def _py_names(tree: ast.Module) -> Iterator[str]:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if _is_test(node):
                yield node.name
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            yield node.name
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _is_test(item):
                    yield item.name


def _text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", errors="replace")


def _js_value(node: tree_sitter.Node) -> Iterator[str]:
    """Scalars of a JS literal expression (numbers, strings, arrays / objects of them)."""
    if node.type not in _JS_LITERALS:
        return
    if node.type == "string":
        yield from _scalars("".join(_text(c) for c in node.named_children))
    elif node.type == "number":
        try:
            yield from _scalars(ast.literal_eval(_text(node).replace("_", "")))
        except (ValueError, SyntaxError):
            return
    elif node.type == "unary_expression" and _text(node).startswith("-"):
        yield from ("-" + s for s in _js_value(node.named_children[-1]) if s[:1].isdigit())
    elif node.type == "pair":
        value = node.child_by_field_name("value")
        if value is not None:
            yield from _js_value(value)
    else:
        for child in node.named_children:
            yield from _js_value(child)


def _js_call(node: tree_sitter.Node) -> tuple[str, str, list[tree_sitter.Node]]:
    """(object text, called name, argument nodes) of a call expression."""
    func = node.child_by_field_name("function")
    args = node.child_by_field_name("arguments")
    arg_nodes = list(args.named_children) if args is not None else []
    if func is None:
        return "", "", arg_nodes
    if func.type == "member_expression":
        obj, prop = func.child_by_field_name("object"), func.child_by_field_name("property")
        return _text(obj) if obj else "", _text(prop) if prop else "", arg_nodes
    return "", _text(func), arg_nodes


def _js_facts(path: str, source: str) -> tuple[list[str], list[str]]:
    """(test titles, expected literals) of a JS/TS test file."""
    grammar = treesitter.grammar_for(path)
    if grammar is None:
        return [], []
    titles: list[str] = []
    values: list[str] = []
    stack = [treesitter.parse(grammar, source.encode("utf-8")).root_node]
    while stack:
        node = stack.pop()
        stack.extend(reversed(node.named_children))
        if node.type != "call_expression":
            continue
        obj, name, args = _js_call(node)
        if (name in _JS_CASES or obj in _JS_CASES) and args and args[0].type == "string":
            title = "".join(_text(c) for c in args[0].named_children)
            if " " in title.strip() or len(title) >= 8:
                titles.append(title)
        elif name in _JS_MATCHERS and args:
            values += _js_value(args[0])
        elif obj == "assert" and name in _JS_ASSERTS and len(args) > 1:
            values += _js_value(args[1])
    return titles, values


def _file_names(path: str) -> list[str]:
    base = posixpath.basename(path)
    return [path, base, posixpath.splitext(base)[0]]


def forbidden(hidden: Mapping[str, str], request: str) -> Forbidden:
    """Forbidden items of the hidden test files, minus those the request already states."""
    names: list[str] = []
    files: list[str] = []
    literals: list[str] = []
    for path, source in sorted(hidden.items()):
        files += _file_names(path)
        if path.endswith(".py"):
            try:
                tree = pyast.parse(source)
            except (SyntaxError, ValueError):
                continue
            names += _py_names(tree)
            literals += _py_expected(tree)
        else:
            titles, values = _js_facts(path, source)
            names += titles
            literals += values

    def keep(items: list[str]) -> tuple[str, ...]:
        return tuple(i for i in dict.fromkeys(items) if i and not mentions(request, i))

    return Forbidden(names=keep(names), files=keep(files), literals=keep(literals))


_LIST_MARKER = re.compile(r"^\s*\d{1,3}[.)]\s")
"""An ordered list's number (``3. Truncation stays the same``): structure, not a value."""


def leak_in(line: str, items: Forbidden) -> str | None:
    """Why ``line`` leaks (the first forbidden item it names), or None. An ordered list's own
    number is not a mention (an expected ``3`` is not named by item 3 of a list)."""
    line = _LIST_MARKER.sub(" ", line, count=1)
    for label, item in items.items():
        if mentions(line, item):
            return f"names {label} {item!r}"
    return None


def drop_leaks(text: str, items: Forbidden) -> tuple[str, list[str]]:
    """``text`` without the lines that leak, and a reason per dropped line (1-based)."""
    kept: list[str] = []
    dropped: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        reason = leak_in(line, items)
        if reason is None:
            kept.append(line)
        else:
            dropped.append(f"line {number} dropped: {reason}")
    return "\n".join(kept), dropped


def leaks(text: str, items: Forbidden) -> list[str]:
    """Every leak of a whole text, one reason per offending line."""
    return drop_leaks(text, items)[1]
