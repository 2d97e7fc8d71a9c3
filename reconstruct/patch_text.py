"""Shared parts of patch application: file operations, the line model, tolerant matching.

Used by :mod:`trajforge.reconstruct.patches` (V4A, search/replace edits) and
:mod:`trajforge.reconstruct.unified_diff`; callers import the public names from ``patches``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

Reader = Callable[[str], str | None]
Action = Literal["add", "update", "delete", "move"]


@dataclass(frozen=True)
class FileOp:
    """One file's outcome of a patch."""

    path: str
    """Path as written in the patch (relative or absolute; the caller confines it)."""
    action: Action
    content: str | None
    """New full content (None for delete)."""
    move_to: str | None = None


class PatchError(ValueError):
    """A patch could not be parsed or applied; the message names the file, hunk and reason."""


# ---------------------------------------------------------------- line model and matching


@dataclass
class Text:
    """A file as lines without terminators, plus how to write it back (CRLF, final newline)."""

    lines: list[str]
    crlf: bool
    final_newline: bool

    @classmethod
    def parse(cls, content: str) -> Text:
        crlf = "\r\n" in content and content.count("\r\n") == content.count("\n")
        body = content.replace("\r\n", "\n") if crlf else content
        lines = body.split("\n") if body else []
        final = body.endswith("\n")
        if final:
            lines.pop()
        return cls(lines, crlf, final)

    def render(self) -> str:
        if not self.lines:
            return ""
        out = "\n".join(self.lines) + ("\n" if self.final_newline else "")
        return out.replace("\n", "\r\n") if self.crlf else out


_PUNCT = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000", " "
        ),
    }
)


def _fold(line: str) -> str:
    return line.strip().translate(_PUNCT)


_KEYS: tuple[Callable[[str], str], ...] = (str, str.rstrip, str.strip, _fold)


def _matches_at(keyed: list[str], pat: list[str], i: int) -> bool:
    return keyed[i : i + len(pat)] == pat


def seek(lines: list[str], pattern: Sequence[str], starts: Sequence[int]) -> int | None:
    """First index where ``pattern`` occurs, by decreasing strictness; each start in order."""
    if not pattern:
        return starts[0] if starts else 0
    last = len(lines) - len(pattern)
    if last < 0:
        return None
    for key in _KEYS:
        keyed = [key(x) for x in lines]
        pat = [key(x) for x in pattern]
        for start in starts:
            hit = next(
                (i for i in range(max(start, 0), last + 1) if _matches_at(keyed, pat, i)), None
            )
            if hit is not None:
                return hit
    return None


def seek_near(lines: list[str], pattern: list[str], expected: int, floor: int) -> int | None:
    """Index ≥ floor where ``pattern`` occurs nearest to ``expected``, strictest match first."""
    last = len(lines) - len(pattern)
    order = sorted(range(floor, last + 1), key=lambda i: (abs(i - expected), i))
    for key in _KEYS:
        keyed = [key(x) for x in lines]
        pat = [key(x) for x in pattern]
        hit = next((i for i in order if _matches_at(keyed, pat, i)), None)
        if hit is not None:
            return hit
    return None


def preview(lines: Sequence[str], limit: int = 6) -> str:
    """The first lines of a hunk, indented, for error messages."""
    shown = "\n".join(f"  {x}" for x in lines[:limit])
    return shown + (f"\n  ... ({len(lines) - limit} more lines)" if len(lines) > limit else "")


def splice(path: str, lines: list[str], repl: list[tuple[int, int, list[str]]]) -> list[str]:
    """Apply (start, old length, new lines) replacements, refusing overlapping ones."""
    repl.sort(key=lambda r: r[0])
    for (s1, n1, _), (s2, _, _) in itertools.pairwise(repl):
        if s2 < s1 + n1:
            raise PatchError(f"{path}: hunks overlap at line {s2 + 1}")
    out = list(lines)
    for start, count, new in reversed(repl):
        out[start : start + count] = new
    return out


class Overlay:
    """Reads through the files this patch already changed."""

    def __init__(self, read: Reader) -> None:
        self._read = read
        self._files: dict[str, str | None] = {}

    def get(self, path: str, why: str) -> str:
        content = self._files[path] if path in self._files else self._read(path)
        if content is None:
            if path in self._files:
                raise PatchError(f"{path}: cannot {why}: it was deleted earlier in this patch")
            raise PatchError(f"{path}: cannot {why}: content of {path} unknown")
        return content

    def record(self, op: FileOp) -> FileOp:
        self._files[op.path] = None if op.action in ("delete", "move") else op.content
        if op.move_to is not None:
            self._files[op.move_to] = op.content
        return op
