"""A file's starting content recovered by undoing the session's edits on the commit that holds
them, when the working tree had uncommitted changes the session never read whole.

A session often starts from a dirty working tree and its work is committed afterwards. The
commit chosen as its start (the parent of the first commit holding the session's work) then
lacks the uncommitted lines the session's edits search for: replay finds "old text not found"
and the file, and every episode after it, is unknown. When the session only ever *edited* such
a file (search/replace, no write, patch or shell change), its content at the session's first
commit is the start plus those edits, so undoing them in reverse order (each replacement found
exactly once) gives the start. The result is kept only when every edit then applies forward,
in order, back to the commit's content, and every ranged read the session made of the file
before its first edit is contained in it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from trajforge.reconstruct.episodes import answered
from trajforge.reconstruct.gitrepo import GitError, as_text, git
from trajforge.reconstruct.patches import PatchError, apply_edits
from trajforge.reconstruct.paths import PathViolation, confine
from trajforge.reconstruct.replay import Replay
from trajforge.records import Edit, Event

_ONLY = frozenset({"edit", "read"})
"""Origins of a file's versions for its start to be recovered this way (reads only ranged)."""


@dataclass(frozen=True)
class Commit:
    """Where the session's work was committed: checkout, commit, the session's folder in it."""

    repo: Path
    sha: str
    subdir: str = ""


def edit_calls(events: Sequence[Event], root: str | None) -> dict[str, list[tuple[Edit, ...]]]:
    """Path (relative to ``root``) → the edits of each successful edit call, in order."""
    found: dict[str, list[tuple[Edit, ...]]] = {}
    for _, call, result in answered(events):
        if result.is_error or call.tool_kind != "edit" or not call.path:
            continue
        try:
            path = confine(call.path, root)
        except PathViolation:
            continue
        found.setdefault(path, []).append(tuple(call.edits))
    return found


def undo(end: str, calls: Sequence[tuple[Edit, ...]]) -> str | None:
    """``end`` with ``calls`` undone, last first (None: an edit cannot be undone exactly)."""
    text = end
    for edits in reversed(calls):
        for edit in reversed(edits):
            if edit.replace_all or not edit.old or not edit.new or text.count(edit.new) != 1:
                return None
            text = text.replace(edit.new, edit.old, 1)
    return text


def redo(start: str, calls: Sequence[tuple[Edit, ...]]) -> str | None:
    """``start`` with ``calls`` applied in order (None: one does not apply)."""
    text = start
    try:
        for edits in calls:
            text = apply_edits(text, edits)
    except PatchError:
        return None
    return text


def recovered_starts(
    events: Sequence[Event], probe: Replay, files: Mapping[str, str], where: Commit
) -> dict[str, str]:
    """Starting contents, by path, of the files whose edits do not apply to ``files`` (the
    start tree) and whose start undoing them on ``where`` recovers (see the module)."""
    recovered: dict[str, str] = {}
    for path, calls in edit_calls(events, probe.root).items():
        versions = probe.history.get(path, [])
        if not versions or any(v.origin not in _ONLY for v in versions):
            continue
        if any(v.origin == "read" and not v.partial for v in versions):
            continue  # a whole read: replay knows the content from there on
        start = files.get(path)
        if start is not None and redo(start, calls) is not None:
            continue
        end = _show(where, path)
        undone = undo(end, calls) if end is not None else None
        if undone is None or redo(undone, calls) != end:
            continue
        ranged = [v.content or "" for v in versions if v.origin == "read"]
        if all(_holds(undone, text) for text in ranged):
            recovered[path] = undone
    return recovered


def _holds(text: str, part: str) -> bool:
    return part.replace("\r\n", "\n").rstrip() in text.replace("\r\n", "\n")


def _show(where: Commit, path: str) -> str | None:
    name = f"{where.subdir.rstrip('/')}/{path}" if where.subdir else path
    try:
        return as_text(git(where.repo, "show", f"{where.sha}:{name}"))
    except GitError:
        return None
