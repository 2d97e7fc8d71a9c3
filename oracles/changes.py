"""Changed lines: which lines of the completed workspace the session added or modified."""

from __future__ import annotations

import difflib
from collections.abc import Mapping


def changed_lines(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, set[int]]:
    """1-based line numbers in `after` that were added or modified relative to `before` (difflib).

    A new file: all its lines (an empty new file maps to an empty set). Deleted files are
    absent, and so are files whose lines are all unchanged (a pure deletion inside a file leaves
    no line of `after` to point at, so such a file is absent too).
    """
    changed: dict[str, set[int]] = {}
    for path in sorted(after):
        new_lines = after[path].splitlines()
        if path not in before:
            changed[path] = set(range(1, len(new_lines) + 1))
            continue
        lines = _modified(before[path].splitlines(), new_lines)
        if lines:
            changed[path] = lines
    return changed


def _modified(old: list[str], new: list[str]) -> set[int]:
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    lines: set[int] = set()
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            lines.update(range(j1 + 1, j2 + 1))
    return lines
