"""A sed regular expression (POSIX BRE, or ERE under ``-E``) as a Python one, for the subset
whose matches Python finds exactly as sed does; None for anything outside it.

POSIX matching is leftmost-longest, Python's leftmost-first: the two agree when every
quantifier applies to one character (a literal, ``.``, a bracket expression) and there is no
alternation, so a quantified group, ``|`` and back-references are left out. So are the escapes
GNU and BSD sed read differently (``\\+ \\? \\| \\w \\< \\b …``; in BSD sed any but that of a
special character or ``/``), ``\\t`` outside GNU sed, a backslash inside a bracket expression,
ranges reaching outside ``0-9``, ``a-z`` or ``A-Z``, and equivalence and collating classes.
``^`` after ``\\(`` and ``$`` before ``\\)`` (implementation defined in a BRE) are left out
too, and so are ERE anchors anywhere but at either end.

Membership of a class (``[[:alpha:]]``) beyond ASCII follows the locale: an expression with
one is marked ``ascii_only``. (Whether ``.`` matches a byte or a character, C or UTF-8 locale,
is the caller's to settle: :mod:`sed_script` runs a script both ways.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Dialect = Literal["gnu", "bsd"]

_CLASSES = {
    "alpha": "a-zA-Z",
    "digit": "0-9",
    "alnum": "a-zA-Z0-9",
    "upper": "A-Z",
    "lower": "a-z",
    "space": r" \t\n\r\f\v",
    "blank": r" \t",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "xdigit": "0-9A-Fa-f",
    "cntrl": r"\x00-\x1f\x7f",
    "print": r"\x20-\x7e",
    "graph": r"\x21-\x7e",
}
_SPECIAL_ESCAPES = frozenset(".*[]^$\\/")
"""Characters a backslash makes literal in every sed: the special ones."""
_PLAIN_ESCAPES = _SPECIAL_ESCAPES | frozenset('-,;:"&%@#!~=_ ')
"""And the plain punctuation GNU sed takes literally after a backslash too."""
_ERE_ESCAPES = _PLAIN_ESCAPES | frozenset("(){}+?|")
_MAX_REPEAT = 255
_INTERVAL = re.compile(r"(\d+)(,(\d*))?")


class Unsupported(ValueError):
    """The expression is outside the subset."""


@dataclass(frozen=True)
class Regex:
    """A translated expression."""

    pattern: str
    """The Python regular expression (compiled with re.DOTALL)."""
    groups: int
    ascii_only: bool
    """It holds a class, whose members outside ASCII depend on the locale."""


@dataclass
class _State:
    extended: bool
    dialect: Dialect
    out: list[str] = field(default_factory=list)
    classes: bool = False
    last: str | None = None
    """What a quantifier would apply to: "atom" (one character), "quant", "group", or None."""
    groups: int = 0
    depth: int = 0


def translate(regex: str, extended: bool, dialect: Dialect) -> Regex | None:
    """``regex`` (delimiter escapes already resolved) as Python, or None outside the subset."""
    state = _State(extended, dialect)
    try:
        i = 0
        while i < len(regex):
            i = _token(state, regex, i)
        if state.depth:
            raise Unsupported("unbalanced group")
        pattern = "".join(state.out)
        re.compile(pattern, re.DOTALL)
    except (Unsupported, re.error):
        return None
    return Regex(pattern, state.groups, state.classes)


def _token(state: _State, regex: str, i: int) -> int:
    """Translate the token at ``i``; the index after it."""
    ch = regex[i]
    if ch == "\\":
        if i + 1 >= len(regex):
            raise Unsupported("trailing backslash")
        return _escape(state, regex, i)
    if ch == "[":
        end, text, classes = _bracket(regex, i)
        _atom(state, text)
        state.classes |= classes
        return end
    if state.extended and ch in "+?{()|":
        return _extended(state, regex, i)
    if ch == ".":
        _atom(state, ".")
    elif ch == "*":
        if state.last is None and not state.extended:
            _atom(state, r"\*")  # a BRE's leading * is literal
        else:
            _quantify(state, "*")
    elif ch in "^$":
        _anchor(state, regex, i)
    elif ch == "\n":
        raise Unsupported("newline")
    else:
        _atom(state, re.escape(ch))
    return i + 1


def _extended(state: _State, regex: str, i: int) -> int:
    """An ERE operator: ``+ ? {m,n} ( )``; ``|`` is left out."""
    ch = regex[i]
    if ch == "{":
        return _interval(state, regex, i + 1, "}")
    if ch in "()":
        _group(state, ch == "(")
    elif ch == "|":
        raise Unsupported("alternation")
    else:
        _quantify(state, ch)
    return i + 1


def _escape(state: _State, regex: str, i: int) -> int:
    nxt = regex[i + 1]
    if not state.extended and nxt in "()":
        _group(state, nxt == "(")
    elif not state.extended and nxt == "{":
        return _interval(state, regex, i + 2, "\\}")
    elif nxt == "n":
        _atom(state, r"\n")
    elif nxt == "t" and state.dialect == "gnu":
        _atom(state, r"\t")
    elif nxt in _escapes(state):
        _atom(state, re.escape(nxt))
    else:
        raise Unsupported(f"escape \\{nxt}")
    return i + 2


def _escapes(state: _State) -> frozenset[str]:
    """What a backslash makes literal: in BSD sed only the special characters are sure."""
    if state.dialect == "bsd":
        return _SPECIAL_ESCAPES | (frozenset("(){}+?|") if state.extended else frozenset())
    return _ERE_ESCAPES if state.extended else _PLAIN_ESCAPES


def _atom(state: _State, text: str) -> None:
    state.out.append(text)
    state.last = "atom"


def _quantify(state: _State, quant: str) -> None:
    if state.last in (None, "quant", "group"):
        raise Unsupported("quantifier without a single-character atom")
    state.out.append(quant)
    state.last = "quant"


def _interval(state: _State, regex: str, start: int, close: str) -> int:
    end = regex.find(close, start)
    match = _INTERVAL.fullmatch(regex, start, end) if end >= 0 else None
    if match is None:
        raise Unsupported("interval")
    low = int(match.group(1))
    high = int(match.group(3)) if match.group(3) else None
    if max(low, high or 0) > _MAX_REPEAT or (high is not None and high < low):
        raise Unsupported("interval bounds")
    bound = match.group(2) or ""
    _quantify(state, "{" + match.group(1) + bound + "}")
    return end + len(close)


def _group(state: _State, opening: bool) -> None:
    if opening:
        state.groups += 1
        state.depth += 1
        state.out.append("(")
        state.last = None
        return
    if not state.depth or state.out[-1] == r"\Z":
        raise Unsupported("group close")  # `$\)`: anchor or literal depends on the sed
    state.depth -= 1
    state.out.append(")")
    state.last = "group"


def _anchor(state: _State, regex: str, i: int) -> None:
    if state.extended:
        if i != (0 if regex[i] == "^" else len(regex) - 1):
            raise Unsupported("anchor inside an ERE")  # GNU: $ there matches before a newline
        state.out.append("^" if regex[i] == "^" else r"\Z")
        state.last = None
    elif regex[i] == "^":
        if i and state.out[-1:] == ["("]:
            raise Unsupported("^ after \\(")
        if i == 0:
            state.out.append("^")
            state.last = None
        else:
            _atom(state, r"\^")
    elif i == len(regex) - 1 or regex.startswith("\\)", i + 1):
        state.out.append(r"\Z")  # before \): refused when the group closes
        state.last = None
    else:
        _atom(state, r"\$")


def _bracket(regex: str, i: int) -> tuple[int, str, bool]:
    """The bracket expression at ``i``: (index after it, Python class, holds a class)."""
    j = i + 1
    negated = regex.startswith("^", j)
    j += negated
    items: list[str] = []
    classes = False
    first = True
    while True:
        if j >= len(regex) or regex[j] in "\\\n":
            raise Unsupported("bracket expression")
        ch = regex[j]
        if ch == "]" and not first:
            break
        first = False
        if ch == "[" and regex[j + 1 : j + 2] in (":", ".", "="):
            end = regex.find(":]", j + 2)
            name = regex[j + 2 : end] if regex[j + 1] == ":" and end > 0 else ""
            if name not in _CLASSES:
                raise Unsupported("bracket class")
            items.append(_CLASSES[name])
            classes, j = True, end + 2
        elif regex[j + 1 : j + 2] == "-" and regex[j + 2 : j + 3] not in ("]", ""):
            items.append(_range(ch, regex[j + 2]))
            j += 3
        else:
            items.append(re.escape(ch))
            j += 1
    return j + 1, "[" + ("^" if negated else "") + "".join(items) + "]", classes


def _range(low: str, high: str) -> str:
    for span in ("0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"):
        if low in span and high in span and low <= high:
            return f"{low}-{high}"
    raise Unsupported("range")
