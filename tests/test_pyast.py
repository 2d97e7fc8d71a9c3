"""Parsing Python from several threads at once (``validate -j N``) never trips CPython 3.11's
shared AST recursion counter (gh-106905: "AST constructor recursion depth mismatch")."""

from __future__ import annotations

import ast
from concurrent.futures import ThreadPoolExecutor

from trajforge import pyast

NESTED = (
    "x = "
    + "(" * 60
    + "1"
    + ")" * 60
    + "\n"
    + "def f(a):\n    return [[a for a in b] for b in a]\n"
)


def test_threads_parse_at_once() -> None:
    with ThreadPoolExecutor(max_workers=8) as pool:
        trees = list(pool.map(lambda _: pyast.parse(NESTED), range(400)))
    assert all(isinstance(t, ast.Module) and len(t.body) == 2 for t in trees)
    assert isinstance(pyast.parse_expression("a + 1").body, ast.BinOp)
