"""What a tool call would do: effects on files, the environment, the network and git history.

Detectors turn every proposed tool call into :class:`Effect` values; rules judge effects, never
raw command strings. Paths in effects are canonical: absolute, normalised against the working
directory tracked across the rollout, ``~`` expanded to the rollout's home.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Literal

EffectKind = Literal[
    "read",  # file content reaches the agent
    "list",  # names of files reach the agent (ls, find, glob)
    "search",  # files are looked up by name pattern (target: root, detail: "-name PATTERN")
    "write",  # a file is created or changed (detail: new content when known)
    "delete",  # a file is removed
    "exec",  # a program runs (target: program name, detail: argv)
    "network",  # something leaves the machine (target: URL / host / index, detail: argv)
    "env-dump",  # environment variables reach the agent (target: name, or * for all)
    "env-set",  # an environment variable is set or unset (target: name, detail: value)
    "git-history",  # git history beyond the working tree is read (detail: argv or ref kind)
    "unparsed",  # part of the call could not be understood (detail: why)
]
EFFECT_KINDS: tuple[str, ...] = (
    "read", "list", "search", "write", "delete", "exec", "network", "env-dump", "env-set",
    "git-history", "unparsed",
)  # fmt: skip

GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Effect:
    """One effect of a tool call."""

    kind: EffectKind
    target: str
    """Canonical path, URL / host, variable name or program name (see :data:`EffectKind`)."""
    detail: str = ""
    """argv, written content, or a reason; rules may match on it."""
    via: str = ""
    """How the effect was reached: ``bash -c``, ``base64 | sh``, ``python -c`` ... (for logs)."""
    tree: bool = False
    """The target is a directory walked recursively (grep -r, find, rm -r)."""
    whole: bool = False
    """A write that replaces the whole file (write tool, ``>``): it may create the file."""


@dataclass
class RolloutState:
    """What the guard remembers across the calls of one rollout."""

    cwd: str
    """Working directory of the next shell command (``cd`` persists, as in pi / Claude Code)."""
    home: str = "/root"
    """Home directory that ``~`` expands to."""
    env: dict[str, str] = field(default_factory=dict)
    """Exported variables set by earlier commands."""
    created: set[str] = field(default_factory=set)
    """Files the agent created in this rollout (never protected by name heuristics)."""
    seen: set[str] = field(default_factory=set)
    """Files read or edited before being written: they existed, so writing them is no creation."""
    files: dict[str, str] = field(default_factory=dict)
    """Content the agent wrote to files, so scripts it later runs can be analysed too."""
    refs: set[str] = field(default_factory=set)
    """Git branches and tags the agent created in this rollout (its own, never another ref)."""


MAX_REMEMBERED_FILE = 200_000


def canonical(path: str, cwd: str, home: str) -> str:
    """``path`` made absolute against ``cwd`` with ``~`` expanded and ``..`` folded."""
    if path == "~" or path.startswith("~/"):
        path = home + path[1:]
    elif path.startswith("file://"):
        path = path[len("file://") :]
    if not path.startswith("/"):
        path = posixpath.join(cwd, path)
    norm = posixpath.normpath(path)
    return "/" + norm.lstrip("/")


def has_glob(text: str) -> bool:
    """True when ``text`` holds a shell glob character."""
    return not GLOB_CHARS.isdisjoint(text)
