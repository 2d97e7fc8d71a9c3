"""Which commit a session started from: the recorded one, else the best content match.

Evidence is what the session read of each file before it changed it (the first version replay
knows of that file is a read). Each commit around the session's start is scored by how many of
those files it holds with exactly that content (a ranged or truncated read: contained in it);
the best score wins, ties go to the latest commit before the session started. Files no searched
commit tracks (generated, ignored, untracked) are listed but not scored.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from trajforge.reconstruct.gitrepo import (
    Blobs,
    GitError,
    as_text,
    branch_containing,
    commit_times,
    resolve_commit,
    tree_ids,
)
from trajforge.reconstruct.replay import Replay
from trajforge.records import CommitChosenBy

log = logging.getLogger(__name__)

MIN_MATCH = 0.6
"""Least share of compared files that must equal the commit's content. Below it the commit is
too likely another version of the project (the session's own reads disagree with it), and a
wrong starting tree makes a task whose check passes or fails for the wrong reason; a working
tree with a few uncommitted changes still clears it (those files keep the session's content)."""
SEARCH_BEFORE = 300
"""Commits at or before the session start that are scored (newest first)."""
SEARCH_AFTER = 30
"""Commits after the session start that are scored too (clock skew, amended or rebased work)."""
AFTER_WINDOW_S = 2 * 86400
"""How long after the session start a commit may be and still be scored."""


@dataclass(frozen=True)
class Read:
    """What the session saw of a file before it changed it."""

    text: str
    partial: bool


@dataclass(frozen=True)
class Choice:
    """The chosen (or best) commit and how well it matched."""

    commit: str | None
    commit_by: CommitChosenBy | None
    branch: str | None = None
    matched: tuple[str, ...] = ()
    unmatched: tuple[str, ...] = ()
    untracked: tuple[str, ...] = ()
    searched: int = 0
    note: str = ""

    @property
    def compared(self) -> int:
        return len(self.matched) + len(self.unmatched)

    @property
    def score(self) -> float | None:
        return len(self.matched) / self.compared if self.compared else None

    @property
    def confident(self) -> bool:
        """Recorded by the harness, or a content match at or above MIN_MATCH."""
        if self.commit is None:
            return False
        if self.commit_by == "recorded":
            return True
        return self.score is not None and self.score >= MIN_MATCH


def evidence(state: Replay) -> dict[str, Read]:
    """Files whose first known version is a read: path (session-relative) → what was read."""
    found: dict[str, Read] = {}
    for path, versions in state.history.items():
        first = versions[0]
        if first.origin == "read" and first.content is not None:
            found[path] = Read(first.content, first.partial)
    return found


def _normal(text: str) -> str:
    """Line endings unified and trailing blank space dropped (harnesses trim read output)."""
    return text.replace("\r\n", "\n").rstrip()


@dataclass
class _Scorer:
    """Compares read files with blobs of one repository, each blob once."""

    blobs: Blobs
    reads: dict[str, Read]
    verdicts: dict[tuple[str, str], bool] = field(default_factory=dict)

    def same(self, path: str, oid: str) -> bool:
        key = (path, oid)
        if key not in self.verdicts:
            data = self.blobs.read(oid)
            text = as_text(data) if data is not None else None
            read = self.reads[path]
            if text is None:
                self.verdicts[key] = False
            elif read.partial:
                self.verdicts[key] = _normal(read.text) in text.replace("\r\n", "\n")
            else:
                self.verdicts[key] = _normal(read.text) == _normal(text)
        return self.verdicts[key]


def _window(repo: Path, started: float | None) -> list[tuple[str, int]]:
    """Commits to score: around the start when it is known, else the newest."""
    times = commit_times(repo)
    if started is None:
        return times[:SEARCH_BEFORE]
    before = [c for c in times if c[1] <= started][:SEARCH_BEFORE]
    after = [c for c in times if started < c[1] <= started + AFTER_WINDOW_S][-SEARCH_AFTER:]
    return after + before


def _pick(scored: Sequence[tuple[str, int, int]], started: float | None) -> tuple[str, int]:
    """(commit, matched count): best score; ties → latest before the start, else earliest after."""
    best = max(s[2] for s in scored)
    tied = [s for s in scored if s[2] == best]
    if started is not None:
        before = [s for s in tied if s[1] <= started]
        pick = max(before, key=lambda s: s[1]) if before else min(tied, key=lambda s: s[1])
    else:
        pick = max(tied, key=lambda s: s[1])
    return pick[0], best


def started_at(stamp: str | None) -> float | None:
    """Epoch seconds of an ISO session start (None when absent or unreadable)."""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def choose(
    repo: Path,
    reads: dict[str, Read],
    recorded: str | None = None,
    branch: str | None = None,
    started: float | None = None,
) -> Choice:
    """The commit of ``repo`` the session started from; ``reads`` keyed by repository path."""
    note = ""
    if recorded:
        full = resolve_commit(repo, recorded)
        if full is not None:
            return _judge(repo, reads, [(full, 0)], "recorded", branch)
        note = f"recorded commit {recorded[:12]} is not in this checkout; searched by content. "
    window = _window(repo, started)
    if not window:
        return Choice(None, None, note=note + "the checkout has no commits")
    choice = _judge(repo, reads, window, "content_match", branch, started)
    return Choice(**{**choice.__dict__, "note": note + choice.note})


def _judge(
    repo: Path,
    reads: dict[str, Read],
    window: Sequence[tuple[str, int]],
    how: CommitChosenBy,
    branch: str | None,
    started: float | None = None,
) -> Choice:
    paths = sorted(reads)
    with Blobs(repo) as blobs:
        scorer = _Scorer(blobs, reads)
        trees: dict[str, dict[str, str]] = {}
        for sha, _ in window:
            try:
                trees[sha] = tree_ids(repo, sha, paths) if paths else {}
            except GitError as exc:
                log.debug("%s: %s", repo, exc)
                trees[sha] = {}
        tracked = {p for tree in trees.values() for p in tree}
        scored = [
            (sha, stamp, sum(1 for p, oid in trees[sha].items() if scorer.same(p, oid)))
            for sha, stamp in window
        ]
        commit, _ = _pick(scored, started)
        tree = trees[commit]
        matched = tuple(p for p in paths if p in tree and scorer.same(p, tree[p]))
    unmatched = tuple(p for p in paths if p in tracked and p not in matched)
    untracked = tuple(p for p in paths if p not in tracked)
    return Choice(
        commit=commit,
        commit_by=how,
        branch=branch or branch_containing(repo, commit),
        matched=matched,
        unmatched=unmatched,
        untracked=untracked,
        searched=len(window),
    )
