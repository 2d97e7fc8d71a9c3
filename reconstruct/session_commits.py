"""Files the session committed, read back from its repository: what replay lost track of is
known again from the commit that holds it.

A session that commits as it works (``git commit -m "WP1: …"``) leaves its files in the
repository as they were at that moment, after every hook and formatter had run: a file that
``npm run check`` fixed, or that a command replay cannot follow rewrote, is unknown to replay
from there on, but the commit holds it. ``git commit`` prints ``[branch sha] subject`` and a
``N files changed`` line; the commit is looked up by that hash in the checkout, or — when the
history was rebased before it was shared, so the hash changed — as the one commit with the same
subject and the same counts of files, insertions and deletions that the session's starting
commit does not already hold. Replay (:func:`~.replay.replay`, ``commits``) takes the files the
commit changed, and uses them only where it had lost track, only when every file it still knew
equals the commit's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trajforge.reconstruct.episodes import answered
from trajforge.reconstruct.gitrepo import Blobs, GitError, as_text, git, resolve_commit
from trajforge.records import Event

_COMMITTED = re.compile(
    r"(?m)^\[(?P<branch>[^\]\s]+)(?: \([^)\]]*\))? (?P<sha>[0-9a-f]{7,40})\] (?P<subject>.+)$"
)
_STAT = re.compile(
    r"(?m)^\s*(\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?"
)


@dataclass(frozen=True)
class RepoFolder:
    """The session's repository: the checkout, the commit it started from, its folder in it."""

    repo: Path
    start: str
    subdir: str = ""


@dataclass
class _History:
    """Every commit by its subject, read once, when a hash is not found."""

    repo: Path
    subjects: dict[str, list[str]] | None = field(default=None)

    def named(self, subject: str) -> list[str]:
        if self.subjects is None:
            self.subjects = {}
            try:
                out = git(self.repo, "log", "--all", "--format=%H%x09%s").decode()
            except GitError:
                out = ""
            for line in out.splitlines():
                sha, _, text = line.partition("\t")
                self.subjects.setdefault(text, []).append(sha)
        return self.subjects.get(subject, [])


def committed_files(events: Sequence[Event], where: RepoFolder) -> dict[int, dict[str, str]]:
    """Event index of each commit's result → the text files the commit added or changed
    (paths under the session's folder), for the session's commits found in ``where``."""
    history = _History(where.repo)
    found: dict[int, dict[str, str]] = {}
    with Blobs(where.repo) as blobs:
        for index, call, event in answered(events):
            if call.tool_kind != "shell" or "commit" not in (call.command or ""):
                continue
            printed = _COMMITTED.search(event.text or "")
            if printed is None:
                continue
            sha = _resolve(where, printed, _counts(event.text or ""), history)
            files = _changed(where, sha, blobs) if sha is not None else {}
            if files:
                found[index] = files
    return found


def _counts(text: str) -> tuple[int, int, int] | None:
    stat = _STAT.search(text)
    if stat is None:
        return None
    files, added, removed = (int(n or 0) for n in stat.groups())
    return files, added, removed


def _resolve(
    where: RepoFolder,
    printed: re.Match[str],
    counts: tuple[int, int, int] | None,
    history: _History,
) -> str | None:
    """The commit ``git commit`` printed: by its hash, else the one rebased copy of it."""
    subject = printed["subject"].strip()
    sha = resolve_commit(where.repo, printed["sha"])
    if sha is not None and _subject(where.repo, sha) == subject:
        return sha
    if counts is None:
        return None  # a rebased copy is told by its subject and its counts together
    same = [
        s
        for s in history.named(subject)
        if _shortstat(where.repo, s) == counts and not _before(where, s)
    ]
    return same[0] if len(same) == 1 else None


def _before(where: RepoFolder, sha: str) -> bool:
    """Whether ``sha`` is in the history the session started from (so not its commit)."""
    try:
        git(where.repo, "merge-base", "--is-ancestor", sha, where.start)
    except GitError:
        return False
    return True


def _subject(repo: Path, sha: str) -> str | None:
    try:
        return git(repo, "log", "-1", "--format=%s", sha, "--").decode().strip()
    except GitError:
        return None


def _shortstat(repo: Path, sha: str) -> tuple[int, int, int] | None:
    try:
        out = git(repo, "show", "--shortstat", "--format=", sha, "--").decode()
    except GitError:
        return None
    return _counts(out)


def _changed(where: RepoFolder, sha: str, blobs: Blobs) -> dict[str, str]:
    """The text files ``sha`` added or changed under the session's folder, by path in it."""
    try:
        out = git(where.repo, "diff-tree", "-r", "--root", "--no-commit-id", "-z",
                  "--no-renames", sha)  # fmt: skip
    except GitError:
        return {}
    fields = out.decode(errors="surrogateescape").split("\0")
    prefix = f"{where.subdir.strip('/')}/" if where.subdir.strip("/") else ""
    files: dict[str, str] = {}
    for header, name in zip(fields[0::2], fields[1::2], strict=False):
        parts = header.split()  # ":100644 100644 OLD NEW M"
        if len(parts) != 5 or parts[4] not in ("A", "M") or not name.startswith(prefix):
            continue
        data = blobs.read(parts[3])
        text = as_text(data) if data is not None else None
        if text is not None:
            files[name[len(prefix) :]] = text
    return files
