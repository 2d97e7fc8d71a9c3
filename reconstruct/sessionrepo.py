"""A session's starting files from its repository: find the checkout, choose the commit.

:func:`recover` runs once per session when ``--repos`` / ``--repo-map`` is given. Its
:class:`~trajforge.records.RepoMatch` goes into every task of the session (``source.repo``);
when the match is good its ``base`` (the checkout's text files at the commit, under the
session's folder, with the session's own reads where the commit differs) is what replay
starts from, so each episode's workspace is the repository plus the session's earlier edits.
"""

from __future__ import annotations

import logging
import posixpath
from dataclasses import dataclass

from trajforge.reconstruct.commits import MIN_MATCH, Choice, Read, choose, evidence, started_at
from trajforge.reconstruct.gitrepo import GitError, tree_texts
from trajforge.reconstruct.replay import Replay, replay
from trajforge.reconstruct.repos import STRENGTH, Candidate, RepoSearch, candidates
from trajforge.records import RepoMatch, Session

log = logging.getLogger(__name__)

DETACHED = frozenset({"HEAD", ""})
"""Branch names harnesses record for a detached checkout (Claude Code writes ``HEAD``)."""


@dataclass(frozen=True)
class Recovered:
    """The starting files (None: the repository was not used) and the record of the match."""

    base: dict[str, str] | None
    match: RepoMatch


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
    return replay(session.events, root, recovered.base), recovered.match


def recover(session: Session, probe: Replay, search: RepoSearch) -> Recovered:
    """Match the session to a checkout and a commit; ``probe`` is its replay without a base."""
    header = session.header
    found = candidates(header, search)
    if not found:
        return Recovered(None, _not_found(session, search))
    reads = evidence(probe)
    best: tuple[tuple[bool, float, int], Candidate, Choice] | None = None
    for cand in found:
        choice = _choose(cand, reads, session)
        if choice is None:
            continue
        rank = (choice.confident, choice.score or 0.0, -STRENGTH[cand.found_by])
        if best is None or rank > best[0]:
            best = (rank, cand, choice)
    if best is None:
        return Recovered(None, _not_found(session, search, "git could not read the checkouts"))
    _, cand, choice = best
    match = _record(cand, choice, header.git.repository_url if header.git else None)
    if not choice.confident or choice.commit is None:
        return Recovered(None, match)
    try:
        files = tree_texts(cand.checkout.path, choice.commit, cand.subdir)
    except GitError as exc:
        log.warning("%s: %s", cand.checkout.path, exc)
        return Recovered(None, match.model_copy(update={"status": "ambiguous", "detail": str(exc)}))
    for path in match.unmatched:  # the working tree differed from the commit: keep what was read
        read = reads.get(path)
        if read is not None and not read.partial:
            files[path] = read.text
    return Recovered(files, match)


def _choose(cand: Candidate, reads: dict[str, Read], session: Session) -> Choice | None:
    git = session.header.git
    branch = git.branch if git and git.branch not in DETACHED else None
    keyed = {_join(cand.subdir, p): r for p, r in reads.items()}
    try:
        return choose(
            cand.checkout.path,
            keyed,
            recorded=git.commit if git else None,
            branch=branch,
            started=started_at(session.header.started_at),
        )
    except GitError as exc:
        log.warning("%s: %s", cand.checkout.path, exc)
        return None


def _join(subdir: str, path: str) -> str:
    return posixpath.join(subdir, path) if subdir else path


def _strip(subdir: str, paths: tuple[str, ...]) -> tuple[str, ...]:
    prefix = f"{subdir}/" if subdir else ""
    return tuple(p[len(prefix) :] for p in paths)


def _record(cand: Candidate, choice: Choice, recorded_url: str | None) -> RepoMatch:
    confident = choice.confident and choice.commit is not None
    checkout = cand.checkout
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
        unmatched=_strip(cand.subdir, choice.unmatched),
        untracked=_strip(cand.subdir, choice.untracked),
        commits_searched=choice.searched,
        detail=(choice.note + ("" if confident else _why_ambiguous(checkout.path.name, choice))),
    )


def _why_ambiguous(name: str, choice: Choice) -> str:
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
        f"no checkout matches the session ({'; '.join(looked)}) in --repos {where}"
        f"{'; ' + why if why else ''}; add its checkout with --repos DIR or map it with {fix}"
    )
    return RepoMatch(status="not_found", url=url, detail=detail)
