"""Which commit a session started from: the recorded one, else the best content match.

Evidence (:mod:`.evidence`) is what the session read of each file before it changed it, and what
it produced itself. Every commit around the session's start is surveyed (:mod:`.history`):

1. A commit holding a file as the session wrote it comes after the session's work began. The
   oldest such commit (from two days before the recorded start on: an older one held that
   content before the session) whose parent holds none is the **session's first commit** (the
   session committed its work, or it was committed later); it and its descendants are no
   candidates, and its parent is where the session's working tree stood. When that first commit
   is the repository's root, the session started before the history: an empty folder.
2. The remaining commits are scored by how many read files they hold exactly as read (a ranged
   or truncated read: contained in it); the best score wins; ties go to commits before the
   session's recorded start, then to the parent of the session's first commit, then to the
   latest (before the start) or the earliest (after it).
3. The share of matches must reach :data:`MIN_MATCH`. At the parent of the session's first
   commit the working tree is known to have been that commit plus uncommitted work, so a read
   file that no candidate commit holds as read is an uncommitted change (listed, the session's
   read content used, not scored); elsewhere every file some searched commit tracks is scored.
   Files no searched commit tracks (generated, ignored, untracked) are listed, not scored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from trajforge.reconstruct.evidence import Evidence, Read
from trajforge.reconstruct.gitrepo import Commit, branch_containing, commit_log, resolve_commit
from trajforge.reconstruct.history import Survey, after_session, survey
from trajforge.records import CommitChosenBy

__all__ = ["MIN_MATCH", "Choice", "Read", "choose", "started_at"]

MIN_MATCH = 0.6
"""Least share of compared files that must equal the commit's content. Below it the commit is
too likely another version of the project (the session's own reads disagree with it), and a
wrong starting tree makes a task whose check passes or fails for the wrong reason; a working
tree with a few uncommitted changes still clears it (those files keep the session's content)."""
SEARCH_BEFORE = 300
"""Commits at or before the session start that are scored (newest first)."""
SEARCH_AFTER = 30
"""Commits after the session start that are scored too (clock skew, amended or rebased work,
and the session's own commits, which tell where it started)."""
AFTER_WINDOW_S = 2 * 86400
"""How long after the session start a commit may be and still be scored."""


@dataclass(frozen=True)
class Choice:
    """The chosen (or best) commit and how well it matched."""

    commit: str | None
    commit_by: CommitChosenBy | None
    branch: str | None = None
    matched: tuple[str, ...] = ()
    unmatched: tuple[str, ...] = ()
    """Scored files that differ at ``commit``."""
    untracked: tuple[str, ...] = ()
    uncommitted: tuple[str, ...] = ()
    """Files that differ at ``commit`` and that no candidate commit holds as read: the working
    tree's uncommitted changes (not scored; only at the parent of the session's first commit)."""
    searched: int = 0
    note: str = ""
    session_commit: str | None = None
    """The first commit holding the session's own work, when one was found."""
    empty_start: bool = False
    """The session started before the repository's first commit (an empty folder)."""

    @property
    def compared(self) -> int:
        return len(self.matched) + len(self.unmatched)

    @property
    def score(self) -> float | None:
        return len(self.matched) / self.compared if self.compared else None

    @property
    def under_session_commit(self) -> bool:
        """The commit is the parent of the session's first commit."""
        return self.session_commit is not None and self.commit is not None

    @property
    def confident(self) -> bool:
        """Recorded by the harness, an empty start, or a content match at or above MIN_MATCH
        (at the parent of the session's first commit, also when no read tells commits apart)."""
        if self.empty_start:
            return True
        if self.commit is None:
            return False
        if self.commit_by == "recorded":
            return True
        if self.score is None:
            return self.under_session_commit
        return self.score >= MIN_MATCH


def started_at(stamp: str | None) -> float | None:
    """Epoch seconds of an ISO session start (None when absent or unreadable)."""
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _window(repo: Path, started: float | None) -> list[Commit]:
    """Commits to score: around the start when it is known, else the newest."""
    log = commit_log(repo)
    if started is None:
        return log[:SEARCH_BEFORE]
    before = [c for c in log if c.time <= started][:SEARCH_BEFORE]
    after = [c for c in log if started < c.time <= started + AFTER_WINDOW_S][-SEARCH_AFTER:]
    return after + before


def choose(
    repo: Path,
    reads: Mapping[str, Read],
    recorded: str | None = None,
    branch: str | None = None,
    started: float | None = None,
    outputs: Mapping[str, frozenset[str]] | None = None,
) -> Choice:
    """The commit of ``repo`` the session started from; evidence keyed by repository path."""
    evidence = Evidence(dict(reads), dict(outputs or {}))
    note = ""
    if recorded:
        full = resolve_commit(repo, recorded)
        if full is not None:
            found = survey(repo, [Commit(full, 0)], Evidence(evidence.reads))
            return _judged(repo, found, full, "recorded", branch)
        note = f"recorded commit {recorded[:12]} is not in this checkout; searched by content. "
    window = _window(repo, started)
    if not window:
        return Choice(None, None, note=note + "the checkout has no commits")
    choice = _search(repo, survey(repo, window, evidence), branch, started)
    return replace(choice, note=note + choice.note)


def _search(repo: Path, found: Survey, branch: str | None, started: float | None) -> Choice:
    """The best candidate of a survey (see the module docstring)."""
    after = after_session(found, repo, None if started is None else started - AFTER_WINDOW_S)
    first = after.first
    candidates = [c for c in found.commits if c.sha not in after.shas]
    parent = first.parents[0] if first is not None and first.parents else None
    if first is not None and not any(found.matched[c.sha] for c in candidates) and not parent:
        return _empty_start(found, first)

    def rank(c: Commit) -> tuple[int, bool, bool, int]:
        early = started is None or c.time <= started
        return (len(found.matched[c.sha]), early, c.sha == parent, c.time if early else -c.time)

    if not candidates:
        return Choice(None, None, searched=len(found.commits), note=_all_after(first))
    pick = max(candidates, key=rank).sha
    scored = candidates if pick == parent else None
    choice = _judged(repo, found, pick, "content_match", branch, scored)
    if pick != parent or first is None:
        return choice
    return replace(choice, session_commit=first.sha, note=_under_note(first, choice))


def _judged(
    repo: Path,
    found: Survey,
    pick: str,
    how: CommitChosenBy,
    branch: str | None,
    candidates: list[Commit] | None = None,
) -> Choice:
    """The record of ``pick``: matched, scored-and-differing, uncommitted and untracked files.

    ``candidates`` (given at the parent of the session's first commit) are the commits whose
    holding a read file as read makes its difference at ``pick`` count against it.
    """
    tree = found.trees[pick]
    matched = found.matched[pick]
    paths = sorted(found.evidence.reads)
    differ = [p for p in paths if p in tree and p not in matched]
    if candidates is None:
        tracked = found.tracked
        unmatched = tuple(p for p in paths if p in tracked and p not in matched)
        untracked = tuple(p for p in paths if p not in tracked)
        uncommitted: tuple[str, ...] = ()
    else:
        held = {p for c in candidates for p in found.matched[c.sha]}
        unmatched = tuple(p for p in differ if p in held)
        uncommitted = tuple(p for p in differ if p not in held)
        untracked = tuple(p for p in paths if p not in tree)
    return Choice(
        commit=pick,
        commit_by=how,
        branch=branch or branch_containing(repo, pick),
        matched=tuple(p for p in paths if p in matched),
        unmatched=unmatched,
        untracked=untracked,
        uncommitted=uncommitted,
        searched=len(found.commits),
    )


def _empty_start(found: Survey, first: Commit) -> Choice:
    held = sorted(found.holding[first.sha])
    return Choice(
        commit=None,
        commit_by="content_match",
        untracked=tuple(sorted(found.evidence.reads)),
        searched=len(found.commits),
        session_commit=first.sha,
        empty_start=True,
        note=(
            f"the session started before the repository's first commit {first.sha[:12]}, which "
            f"already holds {len(held)} file(s) as the session wrote them (e.g. {held[0]}): "
            "the workspace starts empty. "
        ),
    )


def _all_after(first: Commit | None) -> str:
    where = f" (from {first.sha[:12]} on)" if first is not None else ""
    return (
        f"every searched commit already holds files as the session wrote them{where}; "
        "the commit it started from is older than the search. "
    )


def _under_note(first: Commit, choice: Choice) -> str:
    text = (
        f"parent of {first.sha[:12]}, the first commit holding the session's own changes; "
        f"{len(choice.matched)}/{choice.compared} read files as read"
    )
    if choice.uncommitted:
        text += (
            f", {len(choice.uncommitted)} with uncommitted changes no commit before it holds "
            "(not scored; the session's reads are used)"
        )
    return text + ". "
