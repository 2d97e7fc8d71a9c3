"""Which tool calls reach outside the workspace, and how: effect, publish, observe, delegated.

An *effect* changes a host, the machine, an account or a service; *publish* hands the
workspace's result to a remote; *observe* reads live state or runs the person's own build to
look at it; *delegated* hands the work to a sub-agent. :mod:`.triage_live` decides from these
whether a thread's deliverable is live. The lists are in :mod:`.triage_rules_work`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from trajforge.reconstruct import triage_rules_work as work
from trajforge.reconstruct.shell import programs
from trajforge.records import Event

Kind = Literal["effect", "publish", "observe", "delegated"]
STRENGTH: dict[str, int] = {"effect": 3, "publish": 2, "observe": 1}


@dataclass(frozen=True)
class Call:
    """A call that reaches outside the workspace."""

    index: int
    """Event index."""
    kind: Kind
    what: str
    """What it does, for the drop's detail."""
    read: bool = False
    """It only read a path outside the workspace (a ``find``, an ``ls``): the weakest
    observation, cited last."""


def classify(event: Event, index: int) -> Call | None:
    """How a tool call reaches outside the workspace, or None when it does not."""
    tool = (event.tool or "").lower()
    if tool in work.DELEGATION_TOOLS:
        return Call(index, "delegated", f"work handed to a sub-agent ({event.tool})")
    if tool in work.LIVE_TOOLS:
        return Call(index, "observe", f"the {event.tool} tool reads the web")
    if event.tool_kind == "shell" and event.command:
        found = classify_command(event.command)
        return Call(index, found[0], f"runs {found[1]}") if found else None
    return None


def live_command(command: str) -> str | None:
    """What in a shell command reaches outside the workspace (any kind), or None."""
    found = classify_command(command)
    return found[1] if found else None


def classify_command(command: str) -> tuple[Kind, str] | None:
    """(kind, what) of the strongest outside reach in a shell command, or None."""
    found: list[tuple[Kind, str]] = []
    if work.MACHINE_INSTALL.search(command):
        found.append(("effect", "a global package install (the machine's tools)"))
    elif (m := work.REMOTE_URL.search(command)) is not None:
        request = re.split(r"[|;&\n]", command[m.start() :], maxsplit=1)[0].strip()
        kind: Kind = "effect" if work.REMOTE_WRITE.search(request) else "observe"
        found.append((kind, f"a request to a remote host ({request[:80]})"))
    found += [f for argv in programs(command) if (f := _argv(argv, command))]
    found += [f for inner in embedded(command) if (f := classify_command(inner))]
    return _strongest(found)


SCRIPT_ON_STDIN = re.compile(r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n(.*?)\n\s*\2\b", re.DOTALL)
"""A here-document: its tag and its body (group 3)."""
PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")
STARTED = re.compile(
    r"(?:subprocess\.(?:run|call|check_call|check_output|Popen)|os\.(?:system|popen))\(\s*"
    r"(\[[^\]]*\]|[rbf]?(['\"]).*?(?<!\\)\2)",
    re.DOTALL,
)
"""A program a Python script starts: its argv list or its command string (group 1)."""
STRING = re.compile(r"[rbf]?(['\"])(.*?)(?<!\\)\1", re.DOTALL)


def embedded(command: str) -> list[str]:
    """The commands a script this command runs runs in turn: a here-document fed to a shell
    (``bash <<EOF … EOF``) is shell; one fed to Python (``python3 - <<EOF``), or Python's ``-c``
    code, starts the programs of its ``subprocess`` and ``os.system`` calls. A here-document
    fed to anything else (``cat > notes.md <<EOF``) is data."""
    found: list[str] = []
    for m in SCRIPT_ON_STDIN.finditer(command):
        readers = list(programs(command[: m.start()].rsplit("\n", 1)[-1]))
        reader = readers[-1][0] if readers else ""
        if reader in work.SHELLS:
            found.append(m.group(3))
        elif PYTHON.match(reader):
            found += python_started(m.group(3))
    return found


def python_started(code: str) -> list[str]:
    """The commands Python ``code`` starts through ``subprocess`` or ``os.system``, as shell
    lines (an argv list's string items joined)."""
    lines = []
    for m in STARTED.finditer(code):
        called = m.group(1)
        if called.startswith("["):
            lines.append(" ".join(s for _, s in STRING.findall(called)))
        else:
            lines += [s for _, s in STRING.findall(called)][:1]
    return [line for line in lines if line.strip()]


def _strongest(found: Sequence[tuple[Kind, str]]) -> tuple[Kind, str] | None:
    """The strongest of ``found`` (the first of equals), or None."""
    return max(found, key=lambda f: STRENGTH.get(f[0], 0), default=None)


def _argv(argv: Sequence[str], command: str) -> tuple[Kind, str] | None:
    """The outside reach of one simple command (wrappers and ``bash -c`` looked through)."""
    name, args = argv[0], list(argv[1:])
    if name in work.PRIVILEGE:  # as root: the machine, whatever the program
        return "effect", f"`{' '.join([name, *_verbs(args)[:2]])}`"
    if name in work.WRAPPERS:
        inner = _verbs(args)
        return _argv(inner, command) if inner else None
    if name in work.SHELLS and "-c" in args[:-1]:
        return classify_command(args[args.index("-c") + 1])
    if PYTHON.match(name) and "-c" in args[:-1]:
        started = python_started(args[args.index("-c") + 1])
        return _strongest([f for line in started if (f := classify_command(line))])
    if name in work.REMOTE_SHELLS:
        return _remote(args)
    if name in work.EFFECT_PROGRAMS:
        return _effect_program(name, args)
    if name in work.DATABASE_CLIENTS:
        kind: Kind = "effect" if work.DATABASE_WRITE.search(command) else "observe"
        return kind, f"`{name}` ({'writes' if kind == 'effect' else 'reads'} a database)"
    return _subcommand(name, args, command)


def _verbs(args: Sequence[str]) -> list[str]:
    return [a for a in args if not a.startswith("-")]


def _reads(args: Sequence[str]) -> bool:
    verbs = _verbs(args)[: work.READ_DEPTH]
    if any(v in work.READ_VERBS or v.startswith(("describe-", "list-", "get-")) for v in verbs):
        return True
    return any(a in work.READ_FLAGS for a in args)


def _effect_program(name: str, args: Sequence[str]) -> tuple[Kind, str] | None:
    if name == "rsync" and not any(work.REMOTE_SPEC.match(a) for a in _verbs(args)):
        return None  # a local copy
    if _reads(args) and name not in ("scp", "sftp", "rsync"):
        return "observe", f"`{' '.join([name, *_verbs(args)[:2]])}`"
    return "effect", f"`{' '.join([name, *_verbs(args)[:1]])}`"


def _subcommand(name: str, args: Sequence[str], command: str) -> tuple[Kind, str] | None:
    verbs = _verbs(args)
    sub = verbs[0] if verbs else ""
    label = f"`{name} {sub}`" if sub else f"`{name}`"
    if name in ("gh", "glab"):
        return _forge(name, verbs, command)
    if sub in work.PUBLISH_SUBCOMMANDS.get(name, ()):
        return "publish", label
    if sub == "run" and name in work.RUN_SCRIPTS and set(verbs[1:2]) & work.RELEASE_SCRIPTS:
        return "publish", f"`{name} run {verbs[1]}`"  # the project's own publish script
    if sub in work.EFFECT_SUBCOMMANDS.get(name, ()):
        return "effect", label
    if name == "git" and sub == "remote" and not set(verbs[1:2]) & work.GIT_REMOTE_READS:
        return None  # lists or edits the local config
    if sub in work.OBSERVE_SUBCOMMANDS.get(name, ()) or name in work.OBSERVE_PROGRAMS:
        return "observe", label
    return None


def _forge(name: str, verbs: Sequence[str], command: str) -> tuple[Kind, str]:
    """``gh``/``glab``: reading the forge observes, a pull request or release publishes, the
    rest (issues, secrets, ``gh api -X POST``) changes an account."""
    label = f"`{' '.join([name, *verbs[:2]])}`"
    if len(verbs) > 1 and verbs[1] in work.GITHUB_READS:
        return "observe", label
    if verbs and verbs[0] in work.PUBLISH_SUBCOMMANDS[name]:
        return "publish", label
    if verbs and verbs[0] in work.EFFECT_SUBCOMMANDS[name]:
        return "effect", label
    writes = work.REMOTE_WRITE.search(command) or " -f " in command
    return ("effect" if verbs[:1] == ["api"] and writes else "observe"), label


def _remote(args: Sequence[str]) -> tuple[Kind, str]:
    """``ssh host CMD``: observing only when every program of CMD reads."""
    verbs = _ssh_words(args)
    if len(verbs) < 2:
        return "effect", "`ssh` (an interactive login)"
    remote = " ".join(verbs[1:])
    for argv in programs(remote):
        name = argv[0] if argv[0] not in work.WRAPPERS or len(argv) < 2 else argv[1]
        inner = argv[1:] if name == argv[0] else argv[2:]
        sub = _verbs(inner)[:1]
        reads = name in work.REMOTE_READS and (
            name not in ("docker", "systemctl", "git", "kubectl")
            or _reads(inner)
            or (name == "git" and sub and sub[0] in work.GIT_READS)
        )
        if not reads:
            return "effect", f"`ssh {verbs[0]} {name}` on a host"
    return "observe", f"`ssh {verbs[0]}` reading a host"


def _ssh_words(args: Sequence[str]) -> list[str]:
    """ssh's host and remote command, its options (and their values) left out."""
    found: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg.startswith("-"):
            skip = arg in work.SSH_VALUE_FLAGS
        else:
            found.append(arg)
    return found
