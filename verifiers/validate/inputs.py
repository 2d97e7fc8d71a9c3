"""Calls written out in text: the instruction's examples and the session's own commands.

``slugify("Hello, World!")`` in a request, or ``python3 -c "from wordfreq import top_words;
print(top_words('y x y x z', 1))"`` in a shell call, is an input the task's code was meant to
handle. Only calls of the task's public module-level functions whose every argument is a
literal count; anything else (names, expressions, smart quotes) is not an input.
"""

from __future__ import annotations

import ast
import re
import shlex
from collections.abc import Iterable, Mapping

from trajforge import pyast
from trajforge.verifiers.validate.observe import CallInput, Source

MAX_CALL_CHARS = 2000
"""Longer spans after ``name(`` are not read as one call."""


def public_functions(files: Mapping[str, str]) -> dict[str, str]:
    """Public module-level function name → the Python file that defines it (first one wins)."""
    found: dict[str, str] = {}
    for path in sorted(files):
        if not path.endswith(".py"):
            continue
        try:
            tree = pyast.parse(files[path])
        except (SyntaxError, ValueError):
            continue
        for node in tree.body:
            public = not getattr(node, "name", "_").startswith("_")
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and public:
                found.setdefault(node.name, path)
    return found


def _call_span(text: str, start: int) -> str | None:
    """The text from ``start`` to the parenthesis closing the one at the end of the name."""
    depth, quote, i = 0, "", start
    end = min(len(text), start + MAX_CALL_CHARS)
    while i < end:
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
        i += 1
    return None


def _literal_call(code: str, name: str) -> tuple[str, str] | None:
    try:
        node = pyast.parse_expression(code).body
    except (SyntaxError, ValueError):
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return None
    if node.func.id != name or any(k.arg is None for k in node.keywords):
        return None
    try:
        args = tuple(ast.literal_eval(a) for a in node.args)
        kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None  # a starred argument, a name, an expression
    return repr(args), repr(kwargs)


def calls_in(
    text: str, functions: Mapping[str, str], source: Source, origin: str
) -> list[CallInput]:
    """Every literal call of a known function written in ``text``."""
    found: dict[tuple[str, str, str, str], CallInput] = {}
    for chunk in _chunks(text):
        for name, path in functions.items():
            for match in re.finditer(rf"(?<![\w.]){re.escape(name)}\s*\(", chunk):
                span = _call_span(chunk, match.start())
                parsed = _literal_call(span, name) if span else None
                if parsed is not None:
                    item = CallInput(path, name, parsed[0], parsed[1], source, origin)
                    found.setdefault(item.key, item)
    return list(found.values())


def _chunks(text: str) -> Iterable[str]:
    """The text itself, and its shell words (the code of ``python3 -c "..."``)."""
    yield text
    try:
        words = shlex.split(text)
    except ValueError:
        return
    for word in words:
        if "(" in word and word != text:
            yield word


def session_inputs(commands: Iterable[str], functions: Mapping[str, str]) -> list[CallInput]:
    """Calls in the session's own shell commands."""
    found: dict[tuple[str, str, str, str], CallInput] = {}
    for command in commands:
        for item in calls_in(command, functions, "session", command[:200]):
            found.setdefault(item.key, item)
    return list(found.values())


def static_inputs(
    request: str, commands: Iterable[str], sources: Mapping[str, str]
) -> list[CallInput]:
    """The instruction's and the session's literal calls of the public functions in
    ``sources`` (the task's changed Python files, path → text)."""
    functions = public_functions(sources)
    if not functions:
        return []
    return [
        *calls_in(request, functions, "instruction", "instruction"),
        *session_inputs(commands, functions),
    ]
