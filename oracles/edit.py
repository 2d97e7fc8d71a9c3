"""One candidate fault: a byte-span replacement in a source file, before it is checked."""

from __future__ import annotations

from dataclasses import dataclass

OPERATORS = ("compare", "arith", "bool", "const", "negate", "drop", "return", "slice")
TEXT = "text"
"""The fallback operator: a changed line's string or template literal emptied, used only when
no operator above finds a fault (a change that is only text: a log format, a message)."""


@dataclass(frozen=True)
class Candidate:
    """A fault not yet applied: replace bytes [start, end) of the file with `text`."""

    line: int
    operator: str
    what: str
    start: int
    end: int
    text: bytes

    def apply(self, data: bytes) -> bytes:
        return data[: self.start] + self.text + data[self.end :]


def short(text: str, width: int = 40) -> str:
    """First line of a code fragment, trimmed for a description."""
    lines = text.strip().splitlines() or [""]
    first = lines[0]
    if len(lines) > 1 or len(first) > width:
        first = first[:width].rstrip() + " …"
    return first


def swap(old: str, new: str) -> str:
    """A human description of a replacement."""
    return f"`{short(old)}` → `{short(new)}`"


def keep_lines(old: str, new: str, operator: str) -> str:
    """`new`, padded so that replacing `old` keeps every later line number: the missing
    newlines go inside parentheses (valid in Python and JavaScript alike); drops pad their own.
    """
    missing = old.count("\n") - new.count("\n")
    if missing <= 0 or operator == "drop":
        return new
    return "(" + new + "\n" * missing + ")"
