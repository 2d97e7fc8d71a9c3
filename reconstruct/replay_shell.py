"""Replay of a shell command's file effects (:mod:`shell_writes` reads them from its text).

``sed -i`` of ``s`` commands is computed on a file whose content replay knows, when the
command exited 0 and no sed complained in its output; anything else it wrote is unknown.
A glob in the file words of ``sed -i``, ``rm``, ``mv``, ``cp`` (and the other writers) is
expanded against the files replay knows exist at that moment: the starting tree when the
repository was found (every tracked file, known in full), and every file the session touched,
less those gone. A pattern it cannot expand exactly (a letter range, a class) leaves every
known file it may have matched unknown. Files that exist but are not known then (untracked or
ignored ones, or any file without a repository) cannot be named: those the session shows later
are marked unknown from that command on (``Replay.globbed``), so nothing claims to know them
before. Files another command listed (a selection: ``find … | xargs sed -i``) are changed as
named where the listing is decided, unknown where it is perhaps (``Replay.streamed`` for those
seen later), and a ``sed`` of ``s`` commands that leaves a known text as it is changes nothing
either way. The formatters a command runs are replayed by :mod:`replay_format`.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from trajforge.reconstruct import shell
from trajforge.reconstruct.replay_format import apply_formatters
from trajforge.reconstruct.replay_tree import exists, known_paths, layout_unsure, unformatted
from trajforge.reconstruct.shell_globs import expand
from trajforge.reconstruct.shell_listing import Selection
from trajforge.reconstruct.shell_writes import Change, changes
from trajforge.records import Event

if TYPE_CHECKING:
    from trajforge.reconstruct.replay import Replay

_SED_ERROR = re.compile(r"(?m)^(\S*/)?g?sed: ")
"""A sed diagnostic in a command's output: some sed of it failed, whatever its exit code."""


_BSD_SED_SUFFIX = re.compile(r"""(\bsed\s+(?:-[A-Za-z]*\s+)*-i)\s*(?:''|"")(?=\s)""")
"""BSD sed's in-place flag with its empty backup suffix (``sed -i '' …``), which GNU sed —
the sandbox's — reads as an empty script followed by the real one taken for a file."""


def portable(command: str, cwd: str | None, root: str | None) -> str:
    """``command`` as validation re-runs it, from the workspace's root in a sandbox: the
    session's root spelled relative to it (``cd /Users/me/repo/src && mv …`` → ``cd src &&
    mv …``), a ``cd`` into the folder it ran in when that was below the root, and BSD sed's
    ``-i ''`` as GNU sed's ``-i``."""
    command = _BSD_SED_SUFFIX.sub(r"\1", command)
    if not root or root == "/":
        return command
    top = root.rstrip("/")
    start = r"(?<![\w./~-])" + re.escape(top)  # the root itself, not a path ending in it
    command = re.sub(start + r"/+", "", command)
    command = re.sub(start + r"(?![\w./-])", ".", command)
    where = (cwd or "").rstrip("/")
    if where.startswith(top + "/"):
        return f"cd {shlex.quote(where[len(top) + 1 :])} && {command}"
    return command


@dataclass(frozen=True)
class _Run:
    """One shell command replay applies."""

    index: int
    base: str | None
    """The folder relative paths are taken from."""
    ok: bool
    """It exited 0."""
    clean: bool
    """It exited 0 and no sed of it complained."""


def apply_shell(state: Replay, index: int, call: Event, result: Event) -> None:
    """What a shell command did to the files, when it may have changed some."""
    command = call.command or ""
    if not command or (result.is_error and result.exit_code is None):
        return  # refused or never ran
    found = changes(command)
    mutating = bool(found) or shell.is_mutating(command)
    if mutating:
        state.shell_commands.append((index, portable(command, call.cwd, state.root)))
        state.mutations.append(index)
    ok = result.exit_code == 0
    run = _Run(index, call.cwd or state.root, ok, ok and not _SED_ERROR.search(result.text))
    for change in found:
        resolved = _resolved(state, run, change)
        if resolved is None:
            continue
        if resolved.select is not None:
            apply_selected(state, run, resolved)
        elif resolved.glob:
            _expand(state, run, resolved)
        else:
            _apply(state, run, resolved)
    if apply_formatters(state, index, command, result, run.base) and not mutating:
        state.shell_commands.append((index, portable(command, call.cwd, state.root)))
        state.mutations.append(index)


def _resolved(state: Replay, run: _Run, change: Change) -> Change | None:
    """``change`` with its paths relative to the workspace root; None when one is outside.
    A selection's root (its path, or a move's or copy's source) may be the workspace itself
    (''), which it is for a selection ``anywhere``."""
    select = change.select
    paths: list[str | None] = []
    for n, path in enumerate((change.path, change.source)):
        root = select is not None and (n == 1) == (change.source is not None)
        if path is None or (root and select is not None and select.anywhere):
            paths.append(None if path is None else "")
            continue
        joined = _joined(run.base, path)
        rel = state.relative(run.index, f"{joined}/_" if root else joined)
        if rel is None:
            return None
        paths.append(posixpath.dirname(rel) if root else rel)
    first = paths[0] if paths[0] is not None else change.path
    return replace(change, path=first, source=paths[1])


def _apply(state: Replay, run: _Run, change: Change) -> None:
    """One resolved change of a literal path."""
    index, path = run.index, change.path
    if change.kind == "touch":
        if not exists(state, path):
            state.put(path, index, None, "shell")  # new and empty, or there and not known
    elif change.kind in ("write", "substitute"):
        old = state.current(path)
        if change.backup:  # a new file: the old content when sed surely ran
            state.put(path + change.backup, index, old if run.clean else None, "moved")
        new = None
        if change.kind == "substitute" and change.script and old is not None and run.clean:
            new = change.script.apply(old)
            if new == old and layout_unsure(state.history[path]):
                new = None  # it matched nothing in a layout a formatter may have changed
        state.put(path, index, new, "shell")
    elif change.kind == "delete":
        _delete(state, index, _under(state, path, change.tree))
    elif change.source is not None:
        _transfer(state, index, change, (change.source, path), run.ok)


def _expand(state: Replay, run: _Run, change: Change) -> None:
    """A change whose sources are a glob: applied to each known file (or folder) it matches.
    A glob that matches nothing known changes nothing; files replay learns of only later
    are marked at the end of replay (``Replay.globbed``)."""
    moving = change.source is not None
    pattern = change.source if moving and change.source else change.path
    touched = [pattern] if change.kind not in ("copy", "touch") else []  # what it took away
    if moving:
        touched.append(f"{change.path}/{posixpath.basename(pattern)}")
    state.globbed += [(run.index, p, change.tree) for p in touched]
    known = known_paths(state)
    matched = expand(pattern, known)
    if matched is None:
        _unsure(state, run.index, change, expand(pattern, known, loose=True) or [])
        return
    files = [p for p in matched if p in known]
    folders = [p for p in matched if p not in known]
    if change.kind in ("write", "substitute") and folders:
        change = replace(change, kind="write")  # sed stops at a folder: nothing is certain
    for path in files + (folders if change.tree or change.kind == "move" else []):
        one = replace(change, source=path) if moving else replace(change, path=path)
        _apply(state, run, replace(one, glob=False))


def apply_selected(state: Replay, run: _Run, change: Change) -> None:
    """A change of the files another command listed: each known file its selection surely
    picks is changed as a named one; one it perhaps picks is unknown after it (a ``sed`` of
    ``s`` commands that leaves its known content as it is changes nothing either way). A file
    replay learns of only later is marked at the end of replay (``Replay.streamed``)."""
    select = change.select
    assert select is not None
    moving = change.source is not None
    root = (change.source if moving else change.path) or ""
    known = known_paths(state)
    roots = [root] if not change.glob else expand(root, known)
    sure = roots is not None
    roots = roots if roots is not None else expand(root, known, loose=True) or []
    for path, rel in _candidates(known, roots, select.anywhere):
        verdict = select.verdict(rel, state.current(path))
        if verdict is False:
            continue
        plain = replace(change, select=None, glob=False)
        target = replace(plain, source=path) if moving else replace(plain, path=path)
        if verdict and sure and not _ODD.search(path):
            _apply(state, run, target)
        else:
            _perhaps(state, run.index, target)
    if change.kind != "touch":
        state.streamed.append((run.index, _matcher(roots, select)))


_ODD = re.compile(r"[\s'\"\\]")
"""Characters ``xargs`` splits or unquotes a name at: such a file may not be the one named."""


def _candidates(known: set[str], roots: list[str], anywhere: bool) -> list[tuple[str, str]]:
    """(path, path under its root) of every known file under one of ``roots``."""
    found = []
    for path in sorted(known):
        for root in [""] if anywhere else roots:
            if not root or path == root or path.startswith(root + "/"):
                found.append((path, path[len(root) + 1 :] if root else path))
                break
    return found


def _matcher(roots: list[str], select: Selection) -> Callable[[str], bool]:
    """Whether a file replay first sees later may be one the selection picked."""

    def matches(path: str) -> bool:
        found = _candidates({path}, roots, select.anywhere)
        return any(select.verdict(rel, None) is not False for _, rel in found)

    return matches


def _perhaps(state: Replay, index: int, change: Change) -> None:
    """A change that may have been made to one file: what it may have changed is unknown."""
    path = change.source if change.source is not None else change.path
    if change.kind == "touch":
        return
    if change.kind == "substitute" and change.script is not None:
        old = state.current(path)
        if old is not None and change.script.apply(old) == old and not change.backup:
            return  # the same text whether sed ran on it or not
    if change.kind != "copy" and path in state.history:
        state.put(path, index, None, "shell")
    if change.source is not None:
        dest = f"{change.path}/{posixpath.basename(path)}" if change.into else change.path
        state.put(dest, index, None, "shell")
    elif change.backup:
        state.put(path + change.backup, index, None, "shell")


def _unsure(state: Replay, index: int, change: Change, matched: list[str]) -> None:
    """A glob replay cannot expand exactly: every known file it may have touched (a file it
    may have matched, or one under a folder a tree change may have matched), and what a move
    or copy may have made of it, is unknown from ``index`` on."""
    for match in matched:
        inside = [p for p in state.history if p.startswith(match + "/")] if change.tree else []
        for path in [match, *inside] if match in state.history else inside:
            state.put(path, index, None, "shell")
            if change.source is not None:
                name = posixpath.relpath(path, posixpath.dirname(match))
                state.put(f"{change.path}/{name}", index, None, "shell")


def _joined(base: str | None, path: str) -> str:
    return path if path.startswith(("/", "~")) or not base else f"{base.rstrip('/')}/{path}"


def _under(state: Replay, path: str, tree: bool) -> list[str]:
    """What ``rm`` of ``path`` removed: the file, or (``-r``) every file known under it; a
    folder nothing is known of is left alone (what it held is not in the history)."""
    if not tree:
        return [path]
    inside = sorted(p for p in state.history if p.startswith(path + "/"))
    return [path, *inside] if path in state.history else inside


def _delete(state: Replay, index: int, paths: Sequence[str]) -> None:
    """Files ``rm`` removed: gone from ``index`` on (one never seen before existed until
    then, its content unknown)."""
    for path in paths:
        if path not in state.history:
            state.put(path, index, None, "shell")
        state.put(path, index, None, "deleted")


def _transfer(state: Replay, index: int, change: Change, where: tuple[str, str], ok: bool) -> None:
    """A move or copy of ``source`` (a file, or a folder of known files) to ``dest``. When the
    command succeeded and the source's content is known, the destination has it; otherwise
    its content is unknown. A move removes the source."""
    source, dest = where
    if change.into or any(p.startswith(dest + "/") for p in state.history):
        dest = f"{dest}/{posixpath.basename(source)}"
    pairs = [(source, dest)]
    if change.tree and source not in state.history:
        inside = [p for p in state.history if p.startswith(source + "/")]
        pairs = [(p, dest + p[len(source) :]) for p in sorted(inside)] or pairs
    for old, new in pairs:
        content = state.current(old) if ok else None
        if ok and not unformatted(state, old, index):
            state.formatted[new] = index  # as formatted as its source
        state.put(new, index, content, "moved" if ok else "shell")
        if change.kind == "move" and ok:
            _delete(state, index, [old])
        elif change.kind == "move":
            state.put(old, index, None, "shell")
