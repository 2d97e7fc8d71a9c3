"""Python source parsed to an AST, safe to call from several threads at once.

CPython 3.11 (3.11.7 here) keeps the AST constructor's recursion counter per interpreter, not
per thread: two threads in ``ast.parse`` at once can fail with ``SystemError: AST constructor
recursion depth mismatch`` (gh-106905). ``trajforge validate -j N`` parses task sources in
threads, so every parse goes through one lock; parsing is quick, the lock costs nothing.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """``ast.parse(source)`` under the process-wide lock."""
    with _LOCK:
        return ast.parse(source, filename)


def parse_expression(source: str) -> ast.Expression:
    """``ast.parse(source, mode="eval")`` under the process-wide lock."""
    with _LOCK:
        return ast.parse(source, mode="eval")
