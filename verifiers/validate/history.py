"""The episode a task came from, re-read from its session file when that is still reachable.

Used for what the task folder alone cannot tell: every version a test file went through
(weakened-test detection) and the shell commands whose output carried a qa answer.
"""

from __future__ import annotations

import functools
import logging
from dataclasses import dataclass
from pathlib import Path

from trajforge.errors import FormatError
from trajforge.reconstruct.paths import session_root
from trajforge.reconstruct.pipeline import all_formats, detect
from trajforge.reconstruct.replay import Replay, replay
from trajforge.records import Event, Session, Task

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Episode:
    """A task's episode: the session's events and its replayed file history."""

    events: tuple[Event, ...]
    state: Replay
    first: int
    last: int

    def versions(self, path: str) -> list[str]:
        """Full contents ``path`` had from before the episode up to its end, in order."""
        found: list[str] = []
        for version in self.state.history.get(path, []):
            if version.index > self.last or version.content is None or version.partial:
                continue
            if version.index >= self.first or not found:
                found.append(version.content)
            else:
                found[-1] = version.content
        return found

    def shell_outputs(self) -> list[tuple[str, str]]:
        """(command, output) of every shell call in the episode that exited 0 (or unknown)."""
        calls: dict[str, Event] = {}
        found = []
        for event in self.events[self.first : self.last + 1]:
            if event.kind == "tool_call" and event.call_id:
                calls[event.call_id] = event
            elif event.kind == "tool_result" and event.tool_kind == "shell":
                call = calls.get(event.call_id or "")
                if call and call.command and not event.is_error and event.exit_code in (0, None):
                    found.append((call.command, event.text))
        return found

    def shell_commands(self) -> list[str]:
        """Every shell command the episode ran, in order (whatever its exit code)."""
        events = self.events[self.first : self.last + 1]
        return [e.command for e in events if e.kind == "tool_call" and e.command]

    def assistant_texts(self) -> list[str]:
        """Assistant messages of the episode, in order."""
        events = self.events[self.first : self.last + 1]
        return [e.text for e in events if e.kind == "assistant" and e.text.strip()]


@functools.lru_cache(maxsize=16)
def _sessions(path: str) -> dict[str, Session]:
    fmt = detect(Path(path), all_formats())
    found: dict[str, Session] = {}
    for item in fmt.parse(Path(path)):
        if isinstance(item, Session):
            found[item.header.session_id] = item
    return found


def load_episode(task: Task, base_dirs: tuple[Path, ...] = ()) -> Episode | None:
    """The task's episode, or None when its session file is gone or unreadable."""
    source = Path(task.source.path)
    options = [source] if source.is_absolute() else [d / source for d in (Path.cwd(), *base_dirs)]
    path = next((p for p in options if p.exists()), None)
    if path is None:
        return None
    try:
        session = _sessions(str(path.resolve())).get(task.source.session)
    except (FormatError, OSError, ValueError) as exc:
        log.info("session %s unreadable for %s: %s", path, task.id, exc)
        return None
    if session is None:
        return None
    root = session_root(session.header.cwd, session.events)
    first, last = task.source.events
    return Episode(session.events, replay(session.events, root), first, last)
