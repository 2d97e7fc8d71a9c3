"""Tests derived by trajforge from the oracle's own behaviour (differential tests).

Each test calls one public function of the task's code on an input that the hidden tests, the
instruction or the session exercised, and expects what the oracle did there: the value it
returned (compared as plain data, floats within a relative 1e-9), or the exception it raised
(that class or a subclass), plus what it printed or changed in its arguments when it did. A test
is kept only when it passed on the oracle in every run and failed on the stub, on the empty
workspace and on at least one mutant the other hidden tests let through.
"""

import ast
import contextlib
import importlib
import inspect
import io
import math


def plain(value):
    if isinstance(value, dict):
        return {plain(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, tuple):
        return tuple(plain(v) for v in value)
    if isinstance(value, set | frozenset):
        return type(value)(plain(v) for v in value)
    return value


def same(expected, actual):
    if isinstance(expected, float) or isinstance(actual, float):
        numbers = (int, float)
        if not isinstance(expected, numbers) or not isinstance(actual, numbers):
            return False
        return math.isclose(expected, actual, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(expected, list | tuple):
        return (
            type(actual) is type(expected)
            and len(actual) == len(expected)
            and all(same(e, a) for e, a in zip(expected, actual, strict=True))
        )
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and set(actual) == set(expected)
            and all(same(expected[k], actual[k]) for k in expected)
        )
    return type(actual) is type(expected) and actual == expected


def check(module, name, args, kwargs, expected):
    func = getattr(importlib.import_module(module), name)
    args, kwargs = ast.literal_eval(args), ast.literal_eval(kwargs)
    out, raised, result = io.StringIO(), None, None
    with contextlib.redirect_stdout(out):
        try:
            result = func(*args, **kwargs)
            if inspect.isgenerator(result):
                result = list(result)
        except Exception as exc:
            raised = exc
    if "raises" in expected:
        assert raised is not None, f"expected {expected['raises']}, got {result!r}"
        names = [c.__name__ for c in type(raised).__mro__]
        assert expected["raises"] in names, f"expected {expected['raises']}, got {raised!r}"
    else:
        if raised is not None:
            raise raised
        got = plain(result)
        assert same(expected["value"], got), f"expected {expected['value']!r}, got {got!r}"
    if "stdout" in expected:
        assert out.getvalue() == expected["stdout"], f"printed {out.getvalue()!r}"
    if "args_after" in expected:
        after = plain((args, kwargs))
        assert same(expected["args_after"], after), f"arguments became {after!r}"
