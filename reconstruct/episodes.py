"""Episodes (a request and the work that followed) and a session's check runs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from trajforge.reconstruct import shell
from trajforge.records import Event


@dataclass(frozen=True)
class Episode:
    """A user request and the work that followed, up to the next request."""

    first: int
    """Event index of the user message."""
    last: int
    """Event index of the last event before the next user message."""
    request: str
    """The user's request text."""
    answer: str
    """The last assistant message of the episode (empty when none)."""


@dataclass(frozen=True)
class CheckRun:
    """A check command (tests, type-check, build) and how it ended."""

    call: int
    """Event index of the tool call."""
    result: int
    """Event index of its result."""
    command: str
    """The command as run."""
    key: str
    """Normalised command, to match runs of the same check."""
    cwd: str | None
    """Working directory when recorded."""
    passed: bool
    """Exit code 0."""
    output: str
    """The check's output (for instructions)."""


def _join(cwd: str | None, cd: str | None) -> str | None:
    if cd is None:
        return cwd
    if cd.startswith("/") or cwd is None:
        return cd
    return f"{cwd.rstrip('/')}/{cd}"


def answered(events: Sequence[Event]) -> Iterator[tuple[int, Event, Event]]:
    """(index of the result, the call, its result) of every tool call whose result is recorded."""
    calls: dict[str, Event] = {}
    for index, event in enumerate(events):
        if event.kind == "tool_call" and event.call_id:
            calls[event.call_id] = event
        elif event.kind == "tool_result" and event.call_id in calls:
            yield index, calls[event.call_id or ""], event


def check_runs(events: Sequence[Event]) -> list[CheckRun]:
    """Every check command whose exit status is known, in order."""
    calls: dict[str, tuple[int, Event]] = {}
    runs = []
    for index, event in enumerate(events):
        if event.kind == "tool_call" and event.tool_kind == "shell" and event.call_id:
            calls[event.call_id] = (index, event)
        elif event.kind == "tool_result" and event.call_id in calls:
            call_index, call = calls.pop(event.call_id or "")
            command = call.command or ""
            if not shell.is_check(command) or event.exit_code is None:
                continue
            if shell.filtered_exit(command):
                continue  # `check | tail` reports the filter's exit status, not the check's
            cd, rest = shell.split_cd(command)
            runs.append(
                CheckRun(
                    call=call_index,
                    result=index,
                    command=rest,
                    key=shell.check_key(rest),
                    cwd=_join(call.cwd, cd),
                    passed=event.exit_code == 0,
                    output=event.text,
                )
            )
    return runs
