"""What a session's replay tells about its repository's history, for commit recovery.

Two kinds of evidence, both keyed by session-relative path:

- **reads**: what the session saw of a file before it changed it (the first version replay
  knows of the file is a read). The commit the session started from holds these files as read,
  unless the working tree had uncommitted changes in them.
- **outputs**: contents the session itself produced (a write, an edit or a patch) that differ
  from what it first read. A commit holding one of them was made after the session's work
  began (by the session, or later with its work in it), so it is not where the session started;
  the first such commit's parent is. Only contents of at least :data:`MIN_OUTPUT_LINES`
  non-blank lines count: an empty ``__init__.py`` or a one-line ``.gitignore`` the session
  (re)wrote may have been in the history all along.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from trajforge.reconstruct.replay import Replay

MIN_OUTPUT_LINES = 3
"""Least non-blank lines of a produced content for it to mark a commit as after the session."""
_PRODUCED = frozenset({"write", "edit", "patch"})


@dataclass(frozen=True)
class Read:
    """What the session saw of a file before it changed it."""

    text: str
    partial: bool


@dataclass(frozen=True)
class Evidence:
    """Reads and outputs of one session, keyed by repository path once :meth:`under` is applied."""

    reads: dict[str, Read]
    outputs: dict[str, frozenset[str]] = field(default_factory=dict)
    """Path → normalised contents the session produced (see :func:`normal`)."""

    def under(self, subdir: str) -> Evidence:
        """The same evidence with every path prefixed by ``subdir`` (the session's folder)."""
        if not subdir:
            return self
        prefix = subdir.rstrip("/") + "/"
        return Evidence(
            {prefix + p: r for p, r in self.reads.items()},
            {prefix + p: o for p, o in self.outputs.items()},
        )


def normal(text: str) -> str:
    """Line endings unified and trailing blank space dropped (harnesses trim read output)."""
    return text.replace("\r\n", "\n").rstrip()


def reads(state: Replay) -> dict[str, Read]:
    """Files whose first known version is a read: path → what was read."""
    found: dict[str, Read] = {}
    for path, versions in state.history.items():
        first = versions[0]
        if first.origin == "read" and first.content is not None:
            found[path] = Read(first.content, first.partial)
    return found


def outputs(state: Replay) -> dict[str, frozenset[str]]:
    """Contents the session produced for each path, other than the one it first read."""
    found: dict[str, frozenset[str]] = {}
    for path, versions in state.history.items():
        first = versions[0]
        before = normal(first.content) if first.origin == "read" and first.content else None
        made = {
            normal(v.content)
            for v in versions
            if v.origin in _PRODUCED and v.content is not None and not v.partial
        }
        made = {m for m in made if m != before and _specific(m)}
        if made:
            found[path] = frozenset(made)
    return found


def collect(state: Replay) -> Evidence:
    """Reads and outputs of a replay (made without a base)."""
    return Evidence(reads(state), outputs(state))


def _specific(text: str) -> bool:
    return sum(1 for line in text.splitlines() if line.strip()) >= MIN_OUTPUT_LINES


def same_text(read: Read, text: str) -> bool:
    """Whether a file holding ``text`` is what the session read (a ranged read: contained)."""
    if read.partial:
        return normal(read.text) in text.replace("\r\n", "\n")
    return normal(read.text) == normal(text)


def holds_output(made: frozenset[str], text: str) -> bool:
    """Whether a file holding ``text`` holds one of the session's own contents."""
    return normal(text) in made


def full_reads(found: Mapping[str, Read]) -> dict[str, str]:
    """The whole-file reads (ranged and truncated ones left out)."""
    return {p: r.text for p, r in found.items() if not r.partial}
