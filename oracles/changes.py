"""Changed lines: which lines of the completed workspace the session added or modified."""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Mapping

RENAME_SIMILARITY = 0.5
"""A new file is the move of a deleted one when at least this share of their lines match
(git's default rename threshold)."""
RENAME_TRIES = 40
"""Deleted files compared with one new file at most (same file name first)."""


def changed_lines(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, set[int]]:
    """1-based line numbers in `after` that were added or modified relative to `before` (difflib).

    A new file: all its lines (an empty new file maps to an empty set), unless it is a deleted
    file moved (:func:`moves`): then the lines the move changed. Deleted files are absent, and
    so are files whose lines are all unchanged (a pure deletion inside a file leaves no line of
    `after` to point at, so such a file is absent too).
    """
    changed: dict[str, set[int]] = {}
    moved = moves(before, after)
    for path in sorted(after):
        new_lines = after[path].splitlines()
        source = moved.get(path, path)
        if source not in before:
            changed[path] = set(range(1, len(new_lines) + 1))
            continue
        lines = _modified(before[source].splitlines(), new_lines)
        if lines:
            changed[path] = lines
    return changed


def moves(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, str]:
    """New path → the deleted path it was moved from: pairs whose lines match at least
    RENAME_SIMILARITY, taken best first (same file name, then most alike); each deleted file
    is the source of one new file at most."""
    gone = sorted(p for p in before if p not in after)
    pairs: list[tuple[bool, float, str, str]] = []
    for path in sorted(p for p in after if p not in before) if gone else ():
        name = posixpath.basename(path)
        new_lines = after[path].splitlines()
        for old in sorted(gone, key=lambda g: posixpath.basename(g) != name)[:RENAME_TRIES]:
            matcher = difflib.SequenceMatcher(None, before[old].splitlines(), new_lines, False)
            if matcher.real_quick_ratio() < RENAME_SIMILARITY:
                continue
            if matcher.quick_ratio() >= RENAME_SIMILARITY:
                ratio = matcher.ratio()
                if ratio >= RENAME_SIMILARITY:
                    pairs.append((posixpath.basename(old) == name, ratio, path, old))
    found: dict[str, str] = {}
    for _same, _ratio, path, old in sorted(pairs, key=lambda p: (not p[0], -p[1], p[2], p[3])):
        if path not in found and old not in found.values():
            found[path] = old
    return found


def _modified(old: list[str], new: list[str]) -> set[int]:
    """Lines of ``new`` added or replaced, less a replacement that only lays the same code out
    anew (:func:`layout`: a formatter's reflow of a call over lines, its trailing comma)."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    lines: set[int] = set()
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "replace" and layout(old[i1:i2]) == layout(new[j1:j2]):
            continue
        if tag in ("replace", "insert"):
            lines.update(range(j1 + 1, j2 + 1))
    return lines


_SPACE = re.compile(r"\s+")
_TRAILING_COMMA = re.compile(r",(?=[)\]}])")


def layout(lines: list[str]) -> str:
    """The code of ``lines`` without its layout: whitespace, and a comma before a closing
    bracket (what formatters add or drop when they break a call over lines or join it)."""
    return _TRAILING_COMMA.sub("", _SPACE.sub("", "".join(lines)))
