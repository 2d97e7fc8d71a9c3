"""live_state and delegated: is a thread's deliverable outside its workspace?

A thread is live when what it delivers is live state — a deploy, a restarted service, data
written into a database, settings or files changed on the machine, glue whose only output is
calls to a live service, a request for such an effect — or when its only result is what it
read from outside (no workspace file changed). A check on the way (``docker compose logs``,
a docs page fetched, ``git push`` after each change) does not make workspace code live. Work a
sub-agent did out of sight is ``delegated``. Calls are sorted by :mod:`.triage_calls`; the
lists are in :mod:`.triage_rules_work`.
"""

from __future__ import annotations

import itertools
import posixpath
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from trajforge.reconstruct import triage_rules_work as work
from trajforge.reconstruct.paths import DRIVE, PathViolation, confine, home_of, home_spelling
from trajforge.reconstruct.shell import is_mutating, programs, split_cd
from trajforge.reconstruct.shell_writes import changes
from trajforge.reconstruct.triage_calls import STRENGTH, Call, classify, live_command
from trajforge.records import CHANGE_KINDS, CutOff, Event, Reason

__all__ = [
    "Left",
    "Roots",
    "live_command",
    "live_reason",
    "machine_reader",
    "moved_work",
    "session_roots",
    "workspace_command",
]

OTHERS_CITED = 2
"""How many other calls outside the workspace a live_state detail names."""
SERVICE_TOOLS_SHOWN = 4
"""How many tool names a service-only session's drop names (the most called first)."""

Left = Literal["changes", "answer", "nothing"]
"""What a thread left: changed workspace files, only a final answer, or neither."""

MACHINE_READERS = work.words(
    "ps top htop lsof netstat ss df uname whoami id hostname uptime printenv ifconfig ip "
    "system_profiler sw_vers mdfind mdls pgrep free vm_stat ioreg lsblk"
)
"""Commands that read the machine's state: their output grounds nothing a fresh sandbox
could show again (used for qa grounding, not to drop coding work)."""


def machine_reader(command: str) -> bool:
    """The command reads the machine's state (processes, network, users, disks)."""
    return any(argv[0] in MACHINE_READERS for argv in programs(command))


@dataclass(frozen=True)
class Roots:
    """Where the session works: the replayed workspace root, and folders it moved to."""

    main: str | None
    """The root paths are replayed against (the header's cwd)."""
    others: tuple[str, ...] = ()
    """Project folders the session moved to and worked in (``cd ~/Code/app`` and edits there)."""

    def inside(self, path: str | None) -> bool:
        """``path`` is in one of the roots (relative paths are in the main one)."""
        if not path:
            return True
        full = _absolute(path, home_of(self.main))
        return any(_confined(full or path, root) for root in (self.main, *self.others))


def _confined(path: str, root: str | None) -> bool:
    """``path`` is ``root`` or below it (a relative path: it does not climb out)."""
    if root and posixpath.normpath(path.replace("\\", "/")) == root.rstrip("/"):
        return True
    try:
        confine(path, root)
    except PathViolation:
        return False
    return True


def _absolute(path: str, home: str | None) -> str | None:
    if path.startswith("~/") and home:
        path = home + path[1:]
    return posixpath.normpath(path) if path.startswith("/") else None


def cut_off(
    events: Sequence[Event], cut_offs: Sequence[CutOff], first: int, last: int
) -> str | None:
    """The failure of the span's last cut-off turn when the assistant said nothing after it
    (a "continue" that finished the work leaves the thread finished)."""
    inside = [c for c in cut_offs if first <= c.after <= last]
    if not inside:
        return None
    after = events[inside[-1].after + 1 : last + 1]
    said = any(e.kind == "assistant" and e.text.strip() for e in after)
    return None if said else inside[-1].failure


def ran(events: Sequence[Event], first: int, last: int) -> frozenset[str]:
    """Ids of the span's tool calls that have a result. A call without one never ran: its turn
    was cut off first (pi's aborted message lists the edits it was about to make)."""
    return frozenset(
        e.call_id for e in events[first : last + 1] if e.kind == "tool_result" and e.call_id
    )


def ran_calls(events: Sequence[Event], first: int, last: int) -> Iterator[tuple[int, Event]]:
    """(index, call) of each of the span's tool calls that has a result (see :func:`ran`)."""
    done = ran(events, first, last)
    for index in range(first, min(last, len(events) - 1) + 1):
        event = events[index]
        if event.kind == "tool_call" and event.call_id in done:
            yield index, event


def touched(events: Sequence[Event], first: int, last: int) -> bool:
    """The thread wrote, edited or patched a file or ran a command that may change files
    (whether or not replay could tell what changed); a call that never ran is not counted."""
    return first_change(events, first, last) is not None


def first_change(events: Sequence[Event], first: int, last: int) -> int | None:
    """Event index of the span's first call that changed files or may have (see
    :func:`touched`), or None."""
    for index, event in ran_calls(events, first, last):
        if event.tool_kind in CHANGE_KINDS:
            return index
        if event.tool_kind == "shell" and event.command and is_mutating(event.command):
            return index
    return None


def released(events: Sequence[Event], first: int, last: int) -> str | None:
    """The first release the span carried out (``npm publish``, ``npm run publish``, ``cargo
    publish``, ``gh release …``: ``work.RELEASES``; a version tag pushed: ``work.TAG_PUSH``),
    as "event N: runs `…`", or None. One that failed (``npm run publish`` whose build broke)
    handed nothing out."""
    for index, event in ran_calls(events, first, last):
        found = classify(event, index)
        if found is None or found.kind != "publish" or not _succeeded(events, index):
            continue
        if work.RELEASES.search(found.what):
            return f"event {index}: {found.what}"
        if (tag := work.TAG_PUSH.search(event.command or "")) is not None:
            return f"event {index}: pushes a version tag (`{tag.group(0)}`)"
    return None


def session_roots(events: Sequence[Event], root: str | None) -> Roots:
    """The replay root and the project folders the session moved to: a folder it ``cd``-ed
    into or ran in (a call's recorded cwd) that holds a file its file tools read or changed,
    and that is not the machine's (``work.MACHINE_DIRS``)."""
    home = home_of(root)
    moved: set[str] = set()
    touched: list[str] = []
    for event in events:
        if event.kind != "tool_call":
            continue
        if event.cwd:
            moved.add(event.cwd)
        if event.command:
            cd, _ = split_cd(event.command)
            moved.update([cd] if cd else [])
        if event.path and (path := _absolute(event.path, home)) is not None:
            touched.append(path)
    main = Roots(root)
    others: list[str] = []
    for folder in sorted({p for d in moved if (p := _absolute(d, home)) is not None}):
        if main.inside(folder) or work.MACHINE_DIRS.match(folder) or _under(folder, others):
            continue
        if any(p.startswith(folder.rstrip("/") + "/") for p in touched):
            others.append(folder)
    return Roots(root, tuple(others))


def moved_work(events: Sequence[Event], first: int, last: int, roots: Roots) -> str | None:
    """A file the thread changed in a folder the session moved to (not the replayed root)."""
    if not roots.others:
        return None
    moved = Roots(None, roots.others)
    for event in events[first : last + 1]:
        changes = event.kind == "tool_call" and event.tool_kind in CHANGE_KINDS
        path = event.path if changes else None
        if path and not Roots(roots.main).inside(path) and moved.inside(path):
            return path
    return None


def _under(folder: str, roots: Sequence[str]) -> bool:
    return any(folder == r or folder.startswith(r.rstrip("/") + "/") for r in roots)


def workspace_command(command: str, root: str | None) -> str:
    """The command as it runs from the workspace: the root's absolute spelling (and its ``~``
    one) made relative (``cd /Users/me/proj && grep -rn x src`` → ``cd . && grep -rn x src``)."""
    if not root or root == "/":
        return command
    spellings = [root.rstrip("/")]
    if (home := home_spelling(root)) is not None:
        spellings.append(home.rstrip("/"))
    for spelling in spellings:
        folder = re.escape(spelling)
        command = re.sub(folder + r"/(?=[^\s'\"])", "", command)
        command = re.sub(folder + r"(?![\w./-])", ".", command)
    return command


def live_reason(
    events: Sequence[Event], first: int, last: int, request: str, roots: Roots | str | None,
    left: Left = "changes",
) -> tuple[Reason, str] | None:  # fmt: skip
    """(reason, detail) when the thread's deliverable is outside its workspace.

    ``left``: what the thread left. ``changes`` to workspace files: then only an effect (a
    call that changes live state, or glue for a live-data request) makes it live; publishing
    and observing are steps. An ``answer`` and no changes: a request for an outside effect and
    any outside call are its whole result, and a sub-agent's work is ``delegated``. ``nothing``
    (no change, no answer): the same, except what it only observed (a docs page, a log) on the
    way to a result it never gave.
    """
    where = roots if isinstance(roots, Roots) else Roots(roots)
    calls = [c for i, _ in ran_calls(events, first, last) if (c := _call(events, i, where))]
    effects = [c for c in calls if c.kind == "effect"]
    effect = min(effects, key=lambda c: not _succeeded(events, c.index), default=None)
    if effect is not None:  # the first that succeeded; one that failed only if all did
        return Reason.LIVE_STATE, f"event {effect.index}: {effect.what}{_others(effect, calls)}"
    if left == "changes":
        return _beside_changes(events, (first, last), request, calls)
    for pattern in (work.EFFECT_REQUEST, work.PUBLISH_REQUEST, work.LIVE_DATA_REQUEST):
        if (m := pattern.search(request)) is not None:
            found = m.group(0).strip()
            return (
                Reason.LIVE_STATE,
                f"is about the machine or a service outside the workspace ({found!r})",
            )
    results = [c for c in calls if left == "answer" or c.kind != "observe"]
    if results:
        cited = min(results, key=_weakness)
        reason = Reason.DELEGATED if cited.kind == "delegated" else Reason.LIVE_STATE
        suffix = "" if reason is Reason.DELEGATED else ", and no workspace file changed"
        return reason, f"event {cited.index}: {cited.what}{suffix}{_others(cited, results)}"
    return None


def _weakness(call: Call) -> tuple[int, bool, int]:
    """Sort key: the strongest reach first (an effect, a publish, a command that looks, a path
    only read), then the earliest."""
    return (-STRENGTH.get(call.kind, 0), call.read, call.index)


def _others(cited: Call, calls: Sequence[Call]) -> str:
    """What else reached outside the workspace, strongest first (up to OTHERS_CITED), so a
    detail that cites one call does not hide what the thread mostly did. Paths only read are
    named only beside another read; a call doing what the cited one did is not named again."""
    seen = {cited.what}
    others = []
    for call in sorted(calls, key=_weakness):
        if call.what not in seen and (cited.read or not call.read):
            seen.add(call.what)
            others.append(call)
    named = "; ".join(f"event {c.index}: {c.what}" for c in others[:OTHERS_CITED])
    if len(others) > 1:
        return f" ({len(others)} more calls outside it, among them {named})"
    return f" (also {named})" if others else ""


def _call(events: Sequence[Event], index: int, roots: Roots) -> Call | None:
    event = events[index]
    if event.kind != "tool_call":
        return None
    if event.tool_kind in ("write", "edit") and not roots.inside(event.path):
        return Call(index, "effect", f"changes {event.path}, outside the workspace")
    found = classify(event, index)
    if (found is None or found.kind != "effect") and (path := _written_outside(event, roots)):
        return Call(index, "effect", f"a command changes {path}, outside the workspace")
    read = _read_outside(event, roots) if found is None else None
    if read is not None and _succeeded(events, index):
        return Call(index, "observe", f"reads {read}, outside the workspace", read=True)
    return found


def _succeeded(events: Sequence[Event], index: int) -> bool:
    """The call at ``index`` has a result that is no error (a read that returned nothing
    grounds nothing)."""
    call_id = events[index].call_id
    return any(
        e.kind == "tool_result" and e.call_id == call_id and not e.is_error
        for e in itertools.islice(events, index + 1, None)
    )


_PATH_WORD = re.compile(r"(?<![\w.$-])(?:~/|/|[A-Za-z]:[\\/])[^\s'\"|;&)<>]+")
"""Absolute or home paths a command names, read before parsing it."""

READ_ARGUMENTS = ("path", "file_path", "filePath", "dir", "directory")
"""Arguments of a file, list or search tool (``Glob``, ``LS``, ``grep``) that name where it
reads."""


def _read_outside(event: Event, roots: Roots) -> str | None:
    """A path outside the workspace roots that a file tool or a shell command read
    (``~/.claude/projects/…`` globbed, ``wc -l /home/me/.pi/agent/settings.json``): the machine's
    state, which a fresh sandbox cannot show again. Scratch folders and devices are not; nor is
    anything when the workspace root is not known."""
    if not roots.main or event.tool_kind in CHANGE_KINDS:
        return None
    if event.tool_kind == "shell":
        named_paths = _PATH_WORD.findall(event.command or "")
        if all(p.startswith("/dev/") or roots.inside(p) for p in named_paths):
            return None  # every path it names is the workspace's (most commands): no parse
        named = [w for argv in programs(event.command or "") if argv[0] != "cd" for w in argv[1:]]
    else:
        args = [event.arguments.get(k) for k in READ_ARGUMENTS]
        named = [event.path or "", *(v for v in args if isinstance(v, str))]
    for path in named:
        machine = path.startswith(("/", "~/")) or bool(DRIVE.match(path.replace("\\", "/")))
        machine = machine and not path.startswith("/dev/")
        if machine and not work.SCRATCH_DIRS.match(path) and not roots.inside(path):
            return path
    return None


def _written_outside(event: Event, roots: Roots) -> str | None:
    """A file a shell command wrote, copied, moved or deleted outside the workspace roots
    (``cp theme.json ~/.pi/agent/themes/``, ``rm ~/.config/app/x.json``): the same effect as a
    file tool's edit there. Scratch files (``work.SCRATCH_DIRS``) are not; nor is anything
    when the workspace root is not known."""
    if event.tool_kind != "shell" or not event.command or not roots.main:
        return None
    for change in changes(event.command):
        path = change.path
        if event.cwd and not path.startswith(("/", "~")):
            path = posixpath.join(event.cwd, path)
        if not roots.inside(path) and not work.SCRATCH_DIRS.match(path):
            return change.path
    return None


def _beside_changes(
    events: Sequence[Event], span: tuple[int, int], request: str, calls: Sequence[Call]
) -> tuple[Reason, str] | None:
    """A thread with workspace changes: live only when the request asks for an outside effect
    that the thread carried out (a push or publish that deploys, a release it handed out), or
    asks for data in a live service and ran glue it wrote for it."""
    if (m := work.EFFECT_REQUEST.search(request)) is not None:
        done = next((c for c in calls if c.kind == "publish"), None)
        if done is not None:
            return Reason.LIVE_STATE, (
                f"asks for an effect outside the workspace ({m.group(0)!r}), carried out at "
                f"event {done.index}: {done.what}"
            )
    m = work.RELEASE_REQUEST.search(request)
    if m is not None and (release := released(events, *span)) is not None:
        return Reason.LIVE_STATE, f"asks for a release ({m.group(0)!r}), carried out at {release}"
    m = work.LIVE_DATA_REQUEST.search(request)
    if m is not None and (glue := _ran_own_script(events, span)) is not None:
        return Reason.LIVE_STATE, (
            f"asks for data in a live service ({m.group(0).strip()[:60]!r}); the work is "
            f"glue it ran at event {glue}"
        )
    return None


def _ran_own_script(events: Sequence[Event], span: tuple[int, int]) -> int | None:
    """The event at which the thread ran a file it wrote in the same thread, or None."""
    written: set[str] = set()
    for index in range(span[0], min(span[1], len(events) - 1) + 1):
        event = events[index]
        if event.kind != "tool_call":
            continue
        if event.tool_kind == "write" and event.path:
            written.add(posixpath.basename(event.path))
        elif event.tool_kind == "shell" and event.command:
            words = {posixpath.basename(w) for argv in programs(event.command) for w in argv}
            if words & written:
                return index
    return None


def service_only(events: Sequence[Event]) -> str | None:
    """Why a whole session is one ``live_state`` drop: its agent called tools and every one was
    a service's own (a chat, a sheet, a mailbox, web search), never a file, shell or sub-agent
    tool, so what it did lives in those services; None otherwise (no tool called at all, too)."""
    calls = [e for e in events if e.kind == "tool_call"]
    if not calls or any(not _service_call(e) for e in calls):
        return None
    names = Counter(e.tool or "?" for e in calls)
    shown = ", ".join(name for name, _ in names.most_common(SERVICE_TOOLS_SHOWN))
    if len(names) > SERVICE_TOOLS_SHOWN:
        shown += f" and {len(names) - SERVICE_TOOLS_SHOWN} more"
    return (
        f"the agent only called the tools of the services it works in ({shown}: "
        f"{len(calls)} call(s)), never a file or shell tool: its work lives in those services"
    )


def _service_call(event: Event) -> bool:
    """A call of a service's own tool: no file or shell kind, no sub-agent, no workspace tool
    (``Glob``, ``todowrite``) and no argument that names a path."""
    tool = (event.tool or "").lower()
    if event.tool_kind != "other" or tool in work.DELEGATION_TOOLS | work.WORKSPACE_TOOLS:
        return False
    return not work.PATH_ARGUMENTS & set(event.arguments or {})
