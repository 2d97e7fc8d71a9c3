"""A session's starting files from its repository: find the checkout, choose the commit.

:func:`recover` runs once per session when ``--repos`` / ``--repo-map`` is given. Its
:class:`~trajforge.records.RepoMatch` goes into every task of the session (``source.repo``);
when the match is good its ``base`` (the checkout's text files at the commit, under the
session's folder, with the session's own reads where the commit differs) is what replay
starts from, so each episode's workspace is the repository plus the session's earlier edits.
The checkouts named by the session (cwd, remote, folder names) are tried first; when none of
them matches, every given checkout whose history holds the session's files (``content``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from trajforge.reconstruct.commits import MIN_MATCH, Choice, choose, started_at
from trajforge.reconstruct.evidence import Evidence, collect, full_reads
from trajforge.reconstruct.gitrepo import GitError, tree_files
from trajforge.reconstruct.replay import Replay, replay
from trajforge.reconstruct.repos import STRENGTH, Candidate, RepoSearch, by_content, candidates
from trajforge.reconstruct.session_commits import RepoFolder, committed_files
from trajforge.reconstruct.undo_edits import Commit, recovered_starts
from trajforge.records import RepoMatch, Session

log = logging.getLogger(__name__)

DETACHED = frozenset({"HEAD", ""})
"""Branch names harnesses record for a detached checkout (Claude Code writes ``HEAD``)."""


@dataclass(frozen=True)
class Recovered:
    """The starting files (None: the repository was not used) and the record of the match."""

    base: dict[str, str] | None
    match: RepoMatch
    started_with: frozenset[str] | None = None
    """Every file path of the starting tree (binary and huge ones too), when it is known."""
    commits: dict[int, dict[str, str]] = field(default_factory=dict)
    """The session's own commits found in the checkout: event index → the files each holds."""


def replay_session(
    session: Session,
    root: str | None,
    base: dict[str, str] | None,
    search: RepoSearch | None,
) -> tuple[Replay, RepoMatch | None]:
    """The session's replay from ``--base-repo``, from its recovered repository, or bare."""
    if search is None or base is not None:
        return replay(session.events, root, base), None
    probe = replay(session.events, root)
    recovered = recover(session, probe, search)
    if recovered.base is None:
        return probe, recovered.match
    again = replay(session.events, root, recovered.base, recovered.started_with, recovered.commits)
    return again, recovered.match


_Best = tuple[tuple[bool, float, int], Candidate, Choice]


def recover(session: Session, probe: Replay, search: RepoSearch) -> Recovered:
    """Match the session to a checkout and a commit; ``probe`` is its replay without a base."""
    evidence = collect(probe)
    named = candidates(session.header, search)
    best = _best(named, evidence, session)
    if best is None or not best[2].confident:
        tried = {(c.checkout.path, c.subdir) for c in named}
        found = by_content(full_reads(evidence.reads), search.dirs)
        fresh = [c for c in found if (c.checkout.path, c.subdir) not in tried]
        best = _best(fresh, evidence, session, best)
    if best is None:
        why = "git could not read the checkouts" if named else ""
        return Recovered(None, _not_found(session, search, why))
    _, cand, choice = best
    match = _record(cand, choice, session.header.git.repository_url if session.header.git else None)
    if choice.empty_start:
        return Recovered({}, match, frozenset())
    if not choice.confident or choice.commit is None:
        return Recovered(None, match)
    try:
        files, every = tree_files(cand.checkout.path, choice.commit, cand.subdir)
    except GitError as exc:
        log.warning("%s: %s", cand.checkout.path, exc)
        return Recovered(None, match.model_copy(update={"status": "ambiguous", "detail": str(exc)}))
    for path in match.unmatched:  # the working tree differed from the commit: keep what was read
        read = evidence.reads.get(path)
        if read is not None and not read.partial:
            files[path] = read.text
    if choice.session_commit is not None:  # uncommitted lines the session edited, never read
        where = Commit(cand.checkout.path, choice.session_commit, cand.subdir)
        undone = recovered_starts(session.events, probe, files, where)
        files.update(undone)
        every = every | undone.keys()
        if undone:
            note = (
                f"{len(undone)} file(s) with uncommitted changes the session edited without "
                f"reading them whole recovered by undoing its edits on "
                f"{choice.session_commit[:12]}: {', '.join(sorted(undone))}. "
            )
            match = match.model_copy(update={"detail": match.detail + note})
    commits, match = _own_commits(session, cand, choice.commit, match)
    return Recovered(files, match, every, commits)


def _own_commits(
    session: Session, cand: Candidate, start: str, match: RepoMatch
) -> tuple[dict[int, dict[str, str]], RepoMatch]:
    """The session's commits found in the checkout (:mod:`.session_commits`), said in the
    match's detail."""
    commits = committed_files(session.events, RepoFolder(cand.checkout.path, start, cand.subdir))
    if not commits:
        return commits, match
    note = f"{len(commits)} of the session's commits found in it (files read back). "
    return commits, match.model_copy(update={"detail": match.detail + note})


def _best(
    found: list[Candidate], evidence: Evidence, session: Session, best: _Best | None = None
) -> _Best | None:
    """The best of ``best`` and ``found``: confident first, then score, then the stronger rule."""
    for cand in found:
        choice = _choose(cand, evidence, session)
        if choice is None or (cand.weak and not choice.confident):
            continue  # a checkout weakly held by content is the session's only at a sure commit
        rank = (choice.confident, choice.score or 0.0, -STRENGTH[cand.found_by])
        if best is None or rank > best[0]:
            best = (rank, cand, choice)
    return best


def _choose(cand: Candidate, evidence: Evidence, session: Session) -> Choice | None:
    git = session.header.git
    branch = git.branch if git and git.branch not in DETACHED else None
    keyed = evidence.under(cand.subdir)
    try:
        return choose(
            cand.checkout.path,
            keyed.reads,
            recorded=git.commit if git else None,
            branch=branch,
            started=started_at(session.header.started_at),
            outputs=keyed.outputs,
        )
    except GitError as exc:
        log.warning("%s: %s", cand.checkout.path, exc)
        return None


def _strip(subdir: str, paths: tuple[str, ...]) -> tuple[str, ...]:
    prefix = f"{subdir}/" if subdir else ""
    return tuple(p[len(prefix) :] for p in paths)


def _record(cand: Candidate, choice: Choice, recorded_url: str | None) -> RepoMatch:
    confident = choice.confident
    checkout = cand.checkout
    how = _content_note(cand) if cand.found_by == "content" else ""
    return RepoMatch(
        status="found" if confident else "ambiguous",
        url=recorded_url or (checkout.urls[0] if checkout.urls else None),
        path=str(checkout.path),
        subdir=cand.subdir,
        commit=choice.commit,
        branch=choice.branch,
        found_by=cand.found_by,
        commit_by=choice.commit_by,
        match=round(choice.score, 4) if choice.score is not None else None,
        compared=choice.compared,
        matched=len(choice.matched),
        unmatched=_strip(cand.subdir, choice.unmatched + choice.uncommitted),
        untracked=_strip(cand.subdir, choice.untracked),
        commits_searched=choice.searched,
        detail=how + choice.note + ("" if confident else _why_ambiguous(checkout.path, choice)),
    )


def _content_note(cand: Candidate) -> str:
    return (
        f"found by content: the history of {cand.checkout.path.name} holds {cand.held} of the "
        f"files the session read whole (its cwd, remote and folder names match no checkout). "
    )


def _why_ambiguous(path: Path, choice: Choice) -> str:
    name = path.name
    if choice.commit is None:
        return f"{name}: no commit to start from"
    if not choice.compared:
        return (
            f"nothing the session read before changing it is tracked in {name}, so no commit "
            "can be told from another; give it with --base-repo DIR@REV"
        )
    return (
        f"best of {choice.searched} commits ({choice.commit[:12]}) matches "
        f"{len(choice.matched)}/{choice.compared} files the session read "
        f"(needs {MIN_MATCH:.0%}); give the commit with --base-repo DIR@REV"
    )


def _not_found(session: Session, search: RepoSearch, why: str = "") -> RepoMatch:
    header = session.header
    url = header.git.repository_url if header.git else None
    looked = [f"cwd {header.cwd}" if header.cwd else "no cwd recorded"]
    if url:
        looked.append(f"remote {url}")
    where = ", ".join(search.dirs) or "none given"
    fix = f"--repo-map {header.cwd}=DIR" if header.cwd else "--base-repo DIR@REV"
    detail = (
        f"no checkout matches the session ({'; '.join(looked)}) in --repos {where}, nor holds "
        f"the files it read{'; ' + why if why else ''}; add its checkout with --repos DIR or "
        f"map it with {fix}"
    )
    return RepoMatch(status="not_found", url=url, detail=detail)
