"""A survey of commits against a session's evidence: which hold its reads, which its outputs.

:func:`survey` lists, for each commit, the read files it holds exactly as read and the files it
holds as the session itself wrote them (each blob read once, through one ``cat-file`` process).
:func:`after_session` then finds the session's first commit: the oldest commit (near the
session) holding the session's own work whose parent holds none of it. That commit and every
commit descending from it came after the session started; its parent is where the session's
working tree stood.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trajforge.reconstruct.evidence import Evidence, holds_output, same_text
from trajforge.reconstruct.gitrepo import Blobs, Commit, Trees, as_text, commit_at

log = logging.getLogger(__name__)


@dataclass
class Survey:
    """Commits (newest first) and what each holds of the evidence."""

    evidence: Evidence
    commits: list[Commit] = field(default_factory=list)
    trees: dict[str, dict[str, str]] = field(default_factory=dict)
    """Commit → evidence path → blob id (paths the commit lacks left out)."""
    matched: dict[str, frozenset[str]] = field(default_factory=dict)
    """Commit → read files it holds exactly as read."""
    holding: dict[str, frozenset[str]] = field(default_factory=dict)
    """Commit → files it holds as the session wrote them."""

    @property
    def tracked(self) -> set[str]:
        """Read files some surveyed commit tracks."""
        reads = self.evidence.reads
        return {p for tree in self.trees.values() for p in tree if p in reads}


@dataclass
class _Verdicts:
    """Blob comparisons of one repository, each (path, blob) decided once."""

    blobs: Blobs
    evidence: Evidence
    cache: dict[tuple[str, str], tuple[bool, bool]] = field(default_factory=dict)
    trees: Trees = field(init=False)

    def __post_init__(self) -> None:
        self.trees = Trees(self.blobs)

    def judge(self, path: str, oid: str) -> tuple[bool, bool]:
        """(holds the file as read, holds it as the session wrote it)."""
        key = (path, oid)
        if key not in self.cache:
            data = self.blobs.read(oid)
            text = as_text(data) if data is not None else None
            read = self.evidence.reads.get(path)
            made = self.evidence.outputs.get(path)
            self.cache[key] = (
                text is not None and read is not None and same_text(read, text),
                text is not None and made is not None and holds_output(made, text),
            )
        return self.cache[key]


def survey(repo: Path, commits: Sequence[Commit], evidence: Evidence) -> Survey:
    """What each of ``commits`` holds of ``evidence``."""
    found = Survey(evidence)
    with Blobs(repo) as blobs:
        verdicts = _Verdicts(blobs, evidence)
        for commit in commits:
            _add(found, commit, verdicts)
    return found


def _add(found: Survey, commit: Commit, verdicts: _Verdicts) -> None:
    paths = sorted(set(found.evidence.reads) | set(found.evidence.outputs))
    tree = verdicts.trees.lookup(commit.sha, paths)
    judged = {p: verdicts.judge(p, oid) for p, oid in tree.items()}
    found.commits.append(commit)
    found.trees[commit.sha] = tree
    found.matched[commit.sha] = frozenset(p for p, (same, _) in judged.items() if same)
    found.holding[commit.sha] = frozenset(p for p, (_, made) in judged.items() if made)


@dataclass(frozen=True)
class After:
    """The session's first commit (None: no commit holds its work) and every commit after it."""

    first: Commit | None
    shas: frozenset[str]
    """Commits holding the session's work, and those descending from the first one."""


def after_session(found: Survey, repo: Path, since: float | None = None) -> After:
    """The session's first commit and the commits that came after the session started.

    Only commits from ``since`` on (a while before the recorded start; None: all) can be the
    session's: an older commit holding a file as the session wrote it had that content before
    (the session restored it). The first commit is the oldest of them whose parent holds none of
    the session's work; its parent is added to the survey when the search did not reach it.
    """
    marked = {
        c.sha for c in found.commits if found.holding[c.sha] and (since is None or c.time >= since)
    }
    firsts = [
        c for c in found.commits if c.sha in marked and not (c.parents and c.parents[0] in marked)
    ]
    if not firsts:
        return After(None, frozenset())
    first = min(firsts, key=lambda c: c.time)
    if first.parents and first.parents[0] not in found.trees:
        _extend(found, repo, first.parents[0])
    return After(first, frozenset(marked | _descendants(found.commits, first.sha)))


def _descendants(commits: Sequence[Commit], root: str) -> set[str]:
    """Surveyed commits that have ``root`` as an ancestor through surveyed commits."""
    children: dict[str, list[str]] = {}
    for commit in commits:
        for parent in commit.parents:
            children.setdefault(parent, []).append(commit.sha)
    seen: set[str] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def _extend(found: Survey, repo: Path, sha: str) -> None:
    commit = commit_at(repo, sha)
    if commit is None:
        return
    with Blobs(repo) as blobs:
        _add(found, commit, _Verdicts(blobs, found.evidence))
