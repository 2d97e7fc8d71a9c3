"""live_state and delegated: does a thread's work reach outside its workspace?

A thread whose tool calls reach a remote host, the machine's configuration, an account or a
service, the web, or files outside the session's folder cannot be re-made in a fresh offline
workspace; nor can work a sub-agent did out of sight. The lists are in :mod:`.triage_rules`.
"""

from __future__ import annotations

from collections.abc import Sequence

from trajforge.reconstruct import triage_rules as rules
from trajforge.reconstruct.paths import PathViolation, confine
from trajforge.reconstruct.shell import programs
from trajforge.records import Event, Reason

MACHINE_READERS = rules.words(
    "ps top htop lsof netstat ss df uname whoami id hostname uptime printenv ifconfig ip "
    "system_profiler sw_vers mdfind mdls pgrep free vm_stat ioreg lsblk"
)
"""Commands that read the machine's state: their output grounds nothing a fresh sandbox
could show again (used for qa grounding, not to drop coding work)."""


def live_command(command: str) -> str | None:
    """What in a shell command reaches outside the workspace, or None."""
    if rules.GLOBAL_INSTALL.search(command):
        return "a global package install"
    if (m := rules.REMOTE_URL.search(command)) is not None:
        return f"a request to a remote host ({m.group(0)[:60]})"
    for argv in programs(command):
        name = argv[0]
        if name in rules.LIVE_PROGRAMS:
            return f"`{name}`"
        subs = rules.LIVE_SUBCOMMANDS.get(name)
        rest = [w for w in argv[1:] if not w.startswith("-")]
        if subs and rest and rest[0] in subs:
            return f"`{name} {rest[0]}`"
    return None


def machine_reader(command: str) -> bool:
    """The command reads the machine's state (processes, network, users, disks)."""
    return any(argv[0] in MACHINE_READERS for argv in programs(command))


def _outside(path: str | None, root: str | None) -> bool:
    if not path:
        return False
    try:
        confine(path, root)
    except PathViolation:
        return True
    return False


def live_reason(
    events: Sequence[Event], first: int, last: int, request: str, root: str | None,
    own_changes: bool = True,
) -> tuple[Reason, str] | None:  # fmt: skip
    """(reason, detail) when the thread's work reaches outside its workspace.

    Delegation to a sub-agent counts only when the thread has no file changes of its own
    (``own_changes``): then its deliverable was made out of sight. Edits the session does
    show are checked against its oracle by validation either way.
    """
    if (m := rules.LIVE_REQUEST.search(request)) is not None:
        return Reason.LIVE_STATE, f"asks for an effect outside the workspace ({m.group(0)!r})"
    for index in range(first, min(last, len(events) - 1) + 1):
        found = _live_call(events[index], root)
        if found is None or (found[0] is Reason.DELEGATED and own_changes):
            continue
        return found[0], f"event {index}: {found[1]}"
    return None


def _live_call(event: Event, root: str | None) -> tuple[Reason, str] | None:
    if event.kind != "tool_call":
        return None
    tool = (event.tool or "").lower()
    if tool in rules.DELEGATION_TOOLS:
        return Reason.DELEGATED, f"work handed to a sub-agent ({event.tool})"
    if tool in rules.LIVE_TOOLS:
        return Reason.LIVE_STATE, f"the {event.tool} tool reads the web"
    if event.tool_kind == "shell" and event.command:
        what = live_command(event.command)
        return (Reason.LIVE_STATE, f"runs {what}") if what else None
    if event.tool_kind in ("write", "edit") and _outside(event.path, root):
        return Reason.LIVE_STATE, f"changes {event.path}, outside the workspace"
    return None
