"""Replay a session's file effects onto a virtual workspace with full history.

Every path keeps a list of versions (what its content was from which event on). The workspace
at any event index is then a pure function of that history: files read before they were first
written are known to have existed from the start (back-propagation), files created later did
not, and files touched without their content being known are reported as missing.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from trajforge.reconstruct.patches import PatchError, apply_edits, apply_unified, apply_v4a
from trajforge.reconstruct.paths import PathViolation, confine
from trajforge.reconstruct.replay_shell import apply_shell
from trajforge.reconstruct.replay_tree import layout_unsure
from trajforge.reconstruct.shell_globs import unseen
from trajforge.records import Event

log = logging.getLogger(__name__)

Origin = Literal[
    "base", "read", "write", "edit", "patch", "shell", "moved", "deleted", "commit", "formatted"
]
"""moved: the destination of a move or copy (new from then on; its content known only when
the source's was); commit: as a commit the session made holds it (:mod:`.session_commits`);
formatted: a formatter may have rewritten it (:mod:`.replay_format`): the same code, kept as it
was before, in a layout that may differ."""
_PRE_EXISTING: frozenset[str] = frozenset({"base", "read", "edit", "shell"})


@dataclass(frozen=True)
class Version:
    """A file's state from event ``index`` on."""

    index: int
    """Event index at which this version took effect (-1: before the session)."""
    content: str | None
    """Full content, or None when unknown (failed edit, shell change, deleted)."""
    origin: Origin
    """What produced this version."""
    partial: bool = False
    """``content`` is only part of the file (ranged or truncated read)."""


@dataclass(frozen=True)
class Snapshot:
    """The workspace at one moment."""

    files: dict[str, str]
    """Files whose full content is known."""
    partial: frozenset[str] = frozenset()
    """Files that existed but are known only in part."""
    missing: frozenset[str] = frozenset()
    """Files that existed but whose content is unknown."""


@dataclass
class Replay:
    """History of every file the session touched."""

    root: str | None
    history: dict[str, list[Version]] = field(default_factory=dict)
    divergences: list[str] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    shell_commands: list[tuple[int, str]] = field(default_factory=list)
    mutations: list[int] = field(default_factory=list)
    """Event indices of successful writes / edits / patches / mutating shell commands."""
    started_with: frozenset[str] | None = None
    """Every file of the starting tree when it is known (a recovered commit): a file outside it
    that the session changed without its content being known was created during the session
    (by a command replay could not follow), not there from the start. None: unknown."""
    globbed: list[tuple[int, str, bool]] = field(default_factory=list)
    """(event index, pattern, folders too) of every glob a shell command expanded: see
    :func:`_mark_unseen`."""
    streamed: list[tuple[int, Callable[[str], bool]]] = field(default_factory=list)
    """(event index, whether a path may be one it changed) of every shell command that
    changed files another command listed (``find … | xargs sed -i``): see :func:`_mark_unseen`."""
    formatted: dict[str, int] = field(default_factory=dict)
    """path → event index of the last formatter run that covered it (:mod:`replay_format`)."""

    def current(self, path: str) -> str | None:
        versions = self.history.get(path)
        if not versions or versions[-1].partial:
            return None
        return versions[-1].content

    def record(self, path: str, version: Version) -> None:
        self.history.setdefault(path, []).append(version)

    def put(self, path: str, index: int, content: str | None, origin: Origin) -> None:
        """Record that ``path`` holds ``content`` (None: unknown) from event ``index`` on."""
        self.record(path, Version(index, content, origin))

    def relative(self, index: int, path: str | None) -> str | None:
        """``path`` relative to the root; None (a violation noted) when it is outside."""
        if not path:
            return None
        try:
            return confine(path, self.root)
        except PathViolation as exc:
            self.violations.append(f"event {index}: {exc}")
            return None

    def state_at(self, index: int) -> Snapshot:
        """The workspace after every event up to and including ``index`` took effect."""
        files: dict[str, str] = {}
        partial: set[str] = set()
        missing: set[str] = set()
        for path, versions in self.history.items():
            existed = self.started_with is None or path in self.started_with
            version = _version_at(versions, index, existed)
            if version is None or version.origin == "deleted":
                continue
            if version.partial:
                partial.add(path)
            elif version.content is None:
                missing.add(path)
            else:
                files[path] = version.content
        return Snapshot(files, frozenset(partial), frozenset(missing))

    def shell_changed(self, first: int, last: int) -> list[str]:
        """Mutating shell commands run between two event indices (inclusive)."""
        return [cmd for i, cmd in self.shell_commands if first <= i <= last]


def _version_at(versions: Sequence[Version], index: int, existed: bool = True) -> Version | None:
    """The version in force at ``index``, back-propagating first observations (a change of
    unknown content only when the file may have ``existed`` at the start)."""
    past = [v for v in versions if v.index <= index]
    if past:
        return _seen_next(past[-1], versions[len(past) : len(past) + 1])
    first = versions[0]
    if first.origin in _PRE_EXISTING and (existed or first.origin in ("base", "read")):
        # Read, edited or shell-changed before ever being written: it existed already.
        if first.origin in ("base", "read"):
            return first
        return Version(-1, None, first.origin)
    return None


def _seen_next(version: Version, following: Sequence[Version]) -> Version:
    """A change of unknown content that the next version shows whole (a full read, and no
    other change between them): the file held what that read showed from the change on, as a
    file read before any change held it from the start."""
    if version.content is not None or version.partial or version.origin == "deleted":
        return version
    seen = following[0] if following else None
    if seen is None or seen.origin != "read" or seen.partial or seen.content is None:
        return version
    return Version(version.index, seen.content, version.origin)


def replay(
    events: Sequence[Event],
    root: str | None,
    base: dict[str, str] | None = None,
    started_with: frozenset[str] | None = None,
    commits: Mapping[int, Mapping[str, str]] | None = None,
) -> Replay:
    """Apply every successful file effect in order; never raises on bad data. ``commits``:
    event index → the files a commit the session made there holds (see :func:`_committed`)."""
    state = Replay(root=root, started_with=started_with)
    for path, content in (base or {}).items():
        state.record(path, Version(-1, content, "base"))
    calls: dict[str, Event] = {}
    for index, event in enumerate(events):
        if event.kind == "tool_call" and event.call_id:
            calls[event.call_id] = event
        elif event.kind == "tool_result":
            call = calls.get(event.call_id or "")
            _apply_result(state, index, event, call)
            if commits and index in commits:
                _committed(state, index, commits[index])
    _mark_unseen(state)
    _drop_path_kind_conflicts(state)
    return state


def _committed(state: Replay, index: int, files: Mapping[str, str]) -> None:
    """Files replay lost track of (content unknown or known in part, or derived from text a
    formatter may have rewritten) are known again as the session's commit holds them — only
    when every file of it replay still knows is equal (else the commit is not what the session
    had: a divergence says so)."""
    lost = []
    for path, text in files.items():
        versions = state.history.get(path)
        if not versions or versions[-1].origin == "deleted":
            continue
        known = state.current(path)
        if known is None or layout_unsure(versions):
            lost.append(path)
        elif known != text:
            state.divergences.append(
                f"event {index}: the commit holds {path} unlike replay; its files are not used"
            )
            return
    for path in lost:
        state.record(path, Version(index, files[path], "commit"))


_SEEN_BEFORE = frozenset({"read", "edit", "shell"})
"""First versions that say a file existed before them (not written, patched or moved in)."""


def _mark_unseen(state: Replay) -> None:
    """A file replay first learns of after a glob, or a listing (``find … | xargs``), that
    could have matched it is marked changed by that command, content unknown (see
    :func:`shell_globs.unseen`)."""
    firsts = {p: v[0].index for p, v in state.history.items() if v[0].origin in _SEEN_BEFORE}
    found = unseen(state.globbed, firsts)
    for index, matches in state.streamed:
        for path, first in firsts.items():
            if first > index and matches(path):
                found[path] = min(index, found.get(path, index))
    for path, index in found.items():
        state.history[path].insert(0, Version(index, None, "shell"))


def _drop_path_kind_conflicts(state: Replay) -> None:
    """A path that is a file and also the directory of another path cannot be written as
    both: the file is dropped (what lies under the directory is kept) and a divergence says so.
    (A session reads ``pkg`` as a file, later writes ``pkg/x.py``: a shell ``rm``/``mkdir``
    between them went unseen, or the read was of a directory listing.)"""
    dirs = {parent for path in state.history for parent in _parents(path)}
    for path in sorted(dirs & state.history.keys()):
        first = min(v.index for v in state.history[path])
        state.divergences.append(
            f"event {max(first, 0)}: {path} is both a file and a directory in the session; "
            "the file is dropped"
        )
        del state.history[path]


def _parents(path: str) -> list[str]:
    """``a/b/c`` → ``a``, ``a/b``."""
    parts = path.split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts))]


def _apply_result(state: Replay, index: int, result: Event, call: Event | None) -> None:
    if result.tool_kind == "read" and result.content is not None:
        _observe(state, index, result.path or (call.path if call else None), result)
    if call is None:
        return
    if call.tool_kind == "shell":
        apply_shell(state, index, call, result)
        return
    if result.is_error:
        return
    handler = _HANDLERS.get(call.tool_kind or "")
    if handler is not None:
        handler(state, index, call)


def _observe(state: Replay, index: int, path: str | None, result: Event) -> None:
    rel = state.relative(index, path)
    if rel is None or result.content is None:
        return
    if result.partial:
        known = state.current(rel)
        changed = known is not None and contradicts(known, result.content)
        if changed:
            state.divergences.append(
                f"event {index}: a ranged read of {rel} shows lines replay's content lacks "
                "(changed where the session could not see it); known only in part from here"
            )
        if known is None or changed:
            state.record(rel, Version(index, result.content, "read", partial=True))
        return
    if state.current(rel) != result.content:
        state.record(rel, Version(index, result.content, "read"))


def contradicts(known: str, part: str) -> bool:
    """A ranged read shows a line the known content has nowhere: not its last line (a byte
    limit may cut it), nor a line that starts a known one once a reader's cut marker is taken
    off (long lines are shortened: opencode's ``... (line truncated to N chars)``)."""
    lines = {line.rstrip() for line in known.split("\n")}
    shown = part.rstrip("\n").split("\n")[:-1]
    unseen = [line.rstrip() for line in shown if line.strip() and line.rstrip() not in lines]
    for line in unseen:
        head = _CUT.sub("", line)
        if not any(k.startswith(head) for k in lines):
            return True
    return False


_CUT = re.compile(r"(\.\.\. \(line truncated to \d+ chars\)|\s*(\.\.\.|…)\s*)\Z")
"""What a reader puts at the end of a line it shortened."""


def _write(state: Replay, index: int, call: Event) -> None:
    rel = state.relative(index, call.path)
    if rel is not None and call.content is not None:
        state.record(rel, Version(index, call.content, "write"))
        state.mutations.append(index)


def _edit(state: Replay, index: int, call: Event) -> None:
    rel = state.relative(index, call.path)
    if rel is None:
        return
    state.mutations.append(index)
    current = state.current(rel)
    if current is None:
        state.record(rel, Version(index, None, "edit"))
        return
    try:
        state.record(rel, Version(index, apply_edits(current, call.edits), "edit"))
    except PatchError as exc:
        state.divergences.append(f"event {index}: edit of {rel}: {exc}")
        state.record(rel, Version(index, None, "edit"))


def _patch(state: Replay, index: int, call: Event) -> None:
    if not call.patch:
        return
    state.mutations.append(index)

    def read(path: str) -> str | None:
        rel = state.relative(index, path)
        return state.current(rel) if rel else None

    try:
        if call.patch_format == "unified":
            ops = apply_unified(call.patch, read, call.path)
        else:
            ops = apply_v4a(call.patch, read)
    except PatchError as exc:
        state.divergences.append(f"event {index}: patch: {exc}")
        return
    for op in ops:
        rel = state.relative(index, op.path)
        if rel is None:
            continue
        if op.action == "delete" or op.move_to:
            state.record(rel, Version(index, None, "deleted"))
        target = state.relative(index, op.move_to) if op.move_to else rel
        if target is not None and op.action != "delete":
            state.record(target, Version(index, op.content, "patch"))


_HANDLERS: dict[str, Callable[[Replay, int, Event], None]] = {
    "write": _write,
    "edit": _edit,
    "patch": _patch,
}
