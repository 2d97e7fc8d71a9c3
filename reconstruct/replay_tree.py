"""Which files replay knows exist at the current point of a replay, and how surely it knows
their text."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trajforge.reconstruct.replay import Replay, Version


def known_paths(state: Replay) -> set[str]:
    """Every file known to exist now: the starting tree (when known) and every path in the
    history, less those deleted since."""
    known = set(state.started_with or ())
    for path, versions in state.history.items():
        if versions[-1].origin == "deleted":
            known.discard(path)
        else:
            known.add(path)
    return known


def exists(state: Replay, path: str) -> bool:
    """Whether replay knows ``path`` exists now (in the starting tree or the history, and
    not deleted since)."""
    versions = state.history.get(path)
    if versions:
        return versions[-1].origin != "deleted"
    return path in (state.started_with or ())


CHANGED = frozenset({"write", "edit", "patch", "shell", "moved"})
"""Versions the session made (not read, not deleted)."""


def unformatted(state: Replay, path: str, upto: int) -> bool:
    """Whether the session changed ``path`` (up to event ``upto``) after a formatter last
    covered it (``Replay.formatted``; a file of the starting tree is formatted)."""
    since = state.formatted.get(path, -1)
    versions = state.history.get(path, ())
    return any(since < v.index <= upto and v.origin in CHANGED for v in versions)


_EXACT = frozenset({"base", "read", "write", "commit", "deleted"})
"""Versions whose content is the file's exact text (or its absence), whatever came before."""


def layout_unsure(versions: Sequence[Version]) -> bool:
    """Whether the latest version's text derives, through edits and shell changes, from one a
    formatter may have rewritten: the same code, its layout unsure."""
    for version in reversed(versions):
        if version.origin == "formatted":
            return True
        if version.content is None or (version.origin in _EXACT and not version.partial):
            return False
    return False
