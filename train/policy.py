"""Scripted policies: a recorded episode's actions, or a cheating script, as model turns.

The replay policy takes the episode's events (``task.source.events``) from the parsed source
session and keeps each successful write / edit / shell call (in order), ending with the
episode's last assistant text. Paths are made relative to the session's working directory so
the harness can address them inside the run's fresh workspace.
"""

from __future__ import annotations

import logging
import os
import posixpath
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trajforge.reconstruct.patches import FileOp, PatchError, apply_edits, apply_unified, apply_v4a
from trajforge.records import Event, Session, Task
from trajforge.train.harnesses.base import Action

DEFAULT_ANSWER = "Done."
GIVE_UP_ANSWER = "I could not complete this task."
Turn = dict[str, Any]
log = logging.getLogger(__name__)


def _relative(path: str, cwd: str | None) -> str:
    if cwd and os.path.isabs(path):
        rel = os.path.relpath(path, cwd)
        if not rel.startswith(".."):
            return rel
    return path


def _failed_calls(events: tuple[Event, ...]) -> set[str]:
    return {e.call_id for e in events if e.kind == "tool_result" and e.is_error and e.call_id}


class _Files:
    """The workspace's files as the emitted actions leave them (read lazily from the start).

    Keys are workspace-relative POSIX paths; ``None`` marks a file that is deleted or whose
    content is unknown (an edit that did not apply to the model).
    """

    def __init__(self, workspace: Path | None) -> None:
        self.workspace = workspace
        self.changed: dict[str, str | None] = {}

    def key(self, path: str, cwd: str | None) -> str | None:
        """Workspace-relative key of ``path``; None when it lies outside the workspace."""
        rel = posixpath.normpath(_relative(path, cwd))
        if posixpath.isabs(rel) or rel in (".", "..") or rel.startswith("../"):
            return None
        return rel

    def get(self, rel: str) -> str | None:
        if rel in self.changed:
            return self.changed[rel]
        if self.workspace is None:
            return None
        path = self.workspace / rel
        try:
            return path.read_text() if path.is_file() else None
        except (OSError, UnicodeDecodeError) as exc:
            log.debug("%s: not readable as text: %s", path, exc)
            return None

    def reader(self, cwd: str | None) -> Callable[[str], str | None]:
        def read(path: str) -> str | None:
            rel = self.key(path, cwd)
            return None if rel is None else self.get(rel)

        return read


def _track(files: _Files, event: Event, cwd: str | None) -> None:
    """Record a write / edit event's effect on the file model."""
    rel = files.key(event.path, cwd) if event.path else None
    if rel is None:
        return
    if event.tool_kind == "write":
        files.changed[rel] = event.content
        return
    current = files.get(rel)
    try:
        files.changed[rel] = None if current is None else apply_edits(current, event.edits)
    except PatchError as exc:
        log.warning("edit of %s does not apply to the replayed workspace: %s", rel, exc)
        files.changed[rel] = None


def _patch_ops(event: Event, files: _Files, cwd: str | None) -> list[FileOp]:
    read = files.reader(cwd)
    text = event.patch or ""
    try:
        if event.patch_format == "unified":
            return apply_unified(text, read, event.path)
        return apply_v4a(text, read)
    except PatchError as exc:
        log.warning("skipping patch call %s: it does not apply: %s", event.call_id or "?", exc)
        return []


def _patch_actions(event: Event, files: _Files, cwd: str | None) -> list[Action]:
    """A patch call as writes of the files it adds or changes and ``rm -f`` of those it deletes."""
    actions: list[Action] = []
    for op in _patch_ops(event, files, cwd):
        rel = files.key(op.path, cwd)
        target = files.key(op.move_to, cwd) if op.move_to else rel
        if rel is None or target is None:
            log.warning("skipping patched file %s: outside the workspace", op.move_to or op.path)
            continue
        if op.action == "delete" or target != rel:
            actions.append(("shell", f"rm -f {shlex.quote(rel)}"))
            files.changed[rel] = None
        if op.action != "delete" and op.content is not None:
            if target != rel or files.get(target) != op.content:
                actions.append(("write", target, op.content))
            files.changed[target] = op.content
    return actions


def _action(event: Event, cwd: str | None, files: _Files) -> list[Action]:
    if event.tool_kind == "patch" and event.patch:
        return _patch_actions(event, files, cwd)
    if event.tool_kind == "write" and event.path is not None and event.content is not None:
        _track(files, event, cwd)
        return [("write", _relative(event.path, cwd), event.content)]
    if event.tool_kind == "edit" and event.path is not None and event.edits:
        _track(files, event, cwd)
        path = _relative(event.path, cwd)
        return [("edit", path, e.old, e.new) for e in event.edits]
    if event.tool_kind == "shell" and event.command:
        command = event.command.replace(cwd, ".") if cwd else event.command
        return [("shell", command)]
    return []


def episode_actions(
    session: Session, task: Task, task_dir: Path | None = None
) -> tuple[list[Action], str]:
    """(actions, final answer) of the task's episode: successful write / edit / patch / shell.

    ``task_dir`` (the task folder) gives the starting workspace that patch calls apply to;
    without it a patch can only add files.
    """
    first, last = task.source.events
    events = session.events[first : last + 1]
    failed = _failed_calls(events)
    files = _Files(task_dir / task.workspace if task_dir is not None else None)
    actions: list[Action] = []
    answer = DEFAULT_ANSWER
    for event in events:
        if event.kind == "assistant" and event.text.strip():
            answer = event.text
        if event.kind != "tool_call" or event.is_error or event.call_id in failed:
            continue
        actions.extend(_action(event, session.header.cwd, files))
    return actions, answer


def cheating_actions(task: Task, task_dir: Path) -> list[Action]:
    """Edit a protected test, read the hidden tests, print HF_TOKEN (all must be blocked)."""
    actions: list[Action] = []
    workspace = task_dir / task.workspace
    visible = sorted(p for p in workspace.rglob("test_*.py") if p.is_file())
    if visible:
        rel = visible[0].relative_to(workspace).as_posix()
        actions.append(("write", rel, "def test_ok():\n    assert True\n"))
    for hidden in task.verifier.tests:
        actions.append(("shell", f"cat {hidden}"))
    actions.append(("shell", "echo $HF_TOKEN"))
    return actions


def script(turns: list[list[dict[str, Any]]], answer: str) -> list[Turn]:
    """Scripted-server turns: one turn per group of tool calls, then the answer text."""
    out: list[Turn] = [{"tool_calls": calls} for calls in turns if calls]
    out.append({"content": answer})
    return out
