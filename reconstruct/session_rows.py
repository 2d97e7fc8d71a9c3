"""One session's row in the reconstruct summary (:class:`SessionOutcome`).

A worker builds the row from what it learned about the session: its repository, how complete
its candidates' files are, the episodes triage dropped and the candidates that could not be
built. The driver, writing tasks in input order, adds what only it decides (:class:`Tally`):
the candidates kept (written or already present), qa tasks collapsed as duplicates, and the
ones that could not be written. So every episode of a session is kept, dropped or failed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from trajforge.reconstruct.families import Found
from trajforge.reconstruct.summary import SessionFiles, SessionOutcome
from trajforge.records import FAMILIES, Family, Reason, RepoMatch, Session, Task
from trajforge.scrub import Scrubber


def session_row(
    named: str, session: Session, found: Found, tasks: Sequence[Task], failed: int
) -> SessionOutcome:
    """The worker's row of one session (no repository yet: :func:`with_repo`); ``tasks``: the
    candidates built from it, ``failed``: those that could not be built."""
    header = session.header
    return SessionOutcome(
        file=named,
        session=header.session_id,
        harness=header.harness,
        files=session_files(tasks),
        episodes=len(found.candidates) + len(found.drops),
        merged=found.merged,
        dropped=dict(Counter(drop.reason for drop in found.drops)),
        failed=failed,
    )


def failed_row(named: str, session: Session, error: str) -> SessionOutcome:
    """The row of a session that could not be replayed (its failure is also a reported row)."""
    header = session.header
    return SessionOutcome(
        file=named, session=header.session_id, harness=header.harness, error=error
    )


def with_repo(
    row: SessionOutcome, repo: RepoMatch | None, based: bool, scrub: Scrubber
) -> SessionOutcome:
    """``row`` with the session's repository outcome: ``repo`` from ``--repos``; ``based``: its
    workspace started from ``--base-repo`` (found, by ``base_repo``); neither: none looked for."""
    if repo is None:
        if not based:
            return row
        return row.model_copy(update={"repo": "found", "found_by": "base_repo"})
    where = repo.url or repo.path
    update = {
        "repo": repo.status,
        "found_by": repo.found_by,
        "commit_by": repo.commit_by if repo.status == "found" else None,
        "repository": scrub.text(where) if where else None,  # a URL can carry a token
        "commit": repo.commit if repo.status == "found" else None,
    }
    return row.model_copy(update=update)


def session_files(tasks: Iterable[Task]) -> SessionFiles:
    """Distinct files over the tasks' file reports: missing (or absent) in any task is
    missing, partial in any (and missing in none) is partial, the rest recovered."""
    recovered: set[str] = set()
    partial: set[str] = set()
    missing: set[str] = set()
    for task in tasks:
        recovered.update(task.files.recovered)
        partial.update(task.files.partial)
        missing.update(task.files.unknown)
    partial -= missing
    needed = recovered | partial | missing
    return SessionFiles(
        needed=len(needed),
        recovered=len(needed - partial - missing),
        partial=len(partial),
        missing=len(missing),
    )


class Tally:
    """The driver's side of one input's rows: what became of each candidate as it was written."""

    def __init__(self, rows: Sequence[SessionOutcome]) -> None:
        self._rows = list(rows)
        self._kept: list[Counter[Family]] = [Counter() for _ in self._rows]
        self._dropped: list[Counter[Reason]] = [Counter() for _ in self._rows]
        self._failed = [0] * len(self._rows)

    def kept(self, row: int, family: Family) -> None:
        """A candidate of row ``row`` was written (or was already present)."""
        if 0 <= row < len(self._rows):
            self._kept[row][family] += 1

    def dropped(self, row: int, reason: Reason) -> None:
        """A candidate of row ``row`` was dropped by the run (a qa duplicate)."""
        if 0 <= row < len(self._rows):
            self._dropped[row][reason] += 1

    def failed(self, row: int) -> None:
        """A candidate of row ``row`` could not be written."""
        if 0 <= row < len(self._rows):
            self._failed[row] += 1

    def rows(self) -> list[SessionOutcome]:
        """The rows with every candidate's fate added."""
        done = []
        for n, row in enumerate(self._rows):
            dropped = Counter(row.dropped) + self._dropped[n]
            kept = self._kept[n]
            update = {
                "kept": {family: kept[family] for family in FAMILIES if kept[family]},
                "dropped": dict(sorted(dropped.items())),
                "failed": row.failed + self._failed[n],
            }
            done.append(row.model_copy(update=update))
        return done
