"""Which files replay knows exist at the current point of a replay."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trajforge.reconstruct.replay import Replay


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
