"""Scripted policies: a recorded episode's actions, or a cheating script, as model turns.

The replay policy takes the episode's events (``task.source.events``) from the parsed source
session and keeps each successful write / edit / shell call (in order), ending with the
episode's last assistant text. Paths are made relative to the session's working directory so
the harness can address them inside the run's fresh workspace.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from trajforge.records import Event, Session, Task
from trajforge.train.harnesses.base import Action

DEFAULT_ANSWER = "Done."
Turn = dict[str, Any]


def _relative(path: str, cwd: str | None) -> str:
    if cwd and os.path.isabs(path):
        rel = os.path.relpath(path, cwd)
        if not rel.startswith(".."):
            return rel
    return path


def _failed_calls(events: tuple[Event, ...]) -> set[str]:
    return {e.call_id for e in events if e.kind == "tool_result" and e.is_error and e.call_id}


def _action(event: Event, cwd: str | None) -> list[Action]:
    if event.tool_kind == "write" and event.path is not None and event.content is not None:
        return [("write", _relative(event.path, cwd), event.content)]
    if event.tool_kind == "edit" and event.path is not None and event.edits:
        path = _relative(event.path, cwd)
        return [("edit", path, e.old, e.new) for e in event.edits]
    if event.tool_kind == "shell" and event.command:
        command = event.command.replace(cwd, ".") if cwd else event.command
        return [("shell", command)]
    return []


def episode_actions(session: Session, task: Task) -> tuple[list[Action], str]:
    """(actions, final answer) of the task's episode: successful write / edit / shell calls."""
    first, last = task.source.events
    events = session.events[first : last + 1]
    failed = _failed_calls(events)
    actions: list[Action] = []
    answer = DEFAULT_ANSWER
    for event in events:
        if event.kind == "assistant" and event.text.strip():
            answer = event.text
        if event.kind != "tool_call" or event.is_error or event.call_id in failed:
            continue
        actions.extend(_action(event, session.header.cwd))
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
