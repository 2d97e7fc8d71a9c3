"""The reconstruct stage end to end: inputs → sessions → replay → candidates → task folders.

The unit of work is one input path (:func:`reconstruct_input`): it runs wherever the executor
puts it (inline, a process pool, a Ray task) and returns the task records and file maps it
built, with its counts. Only the driver (:func:`run`) writes to OUT, in input order, so files,
ids, the summary and resumability are the same under every executor and ``-j``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from trajforge.errors import FormatError
from trajforge.executors import LocalExecutor
from trajforge.protocols import Executor, Format, WorkOutcome
from trajforge.reconstruct.emit import build_task, clean_staging, write_task
from trajforge.reconstruct.families import candidates
from trajforge.reconstruct.formats.detect import all_formats as all_formats  # re-exported
from trajforge.reconstruct.formats.detect import detect, formats_named
from trajforge.reconstruct.formats.shapes import same_sessions
from trajforge.reconstruct.funnel import (
    MAX_DROPS_KEPT,
    Dedup,
    TriageCounts,
    duplicate_row,
    to_records,
)
from trajforge.reconstruct.hub_dumps import Fetched
from trajforge.reconstruct.inputs import expand_paths
from trajforge.reconstruct.paths import session_root
from trajforge.reconstruct.repos import RepoSearch, discover
from trajforge.reconstruct.session_rows import Tally, failed_row, session_row, with_repo
from trajforge.reconstruct.sessionrepo import replay_session
from trajforge.reconstruct.summary import (
    FailedCandidate,
    InputOutcome,
    ReconstructSummary,
    SessionOutcome,
)
from trajforge.records import DatasetOrigin, ParseWarning, Reason, Session, Task, TriageDrop
from trajforge.registry import FORMATS, resolve
from trajforge.scrub import Scrubber
from trajforge.taskdir import RECONSTRUCT_SUMMARY, write_atomic

log = logging.getLogger(__name__)
MAX_WARNINGS_KEPT = 200
R = TypeVar("R")


class ReconstructSpec(BaseModel):
    """What a reconstruct run builds from, beside its inputs (recorded in each task's provenance).

    How the run goes (progress callback, executor) is not part of it: it does not change the
    task folders.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    fmt: str = "auto"
    """Format name, or ``auto`` to sniff."""
    base: dict[str, str] | None = None
    """Starting files from ``--base-repo``, when given."""
    repos: RepoSearch | None = None
    """Where to find each session's repository (``--repos``, ``--repo-map``), when given."""

    def provenance(self) -> dict[str, Any]:
        """The run configuration recorded in each task's provenance (part of its hash)."""
        config: dict[str, Any] = {"format": self.fmt, "base_repo": self.base is not None}
        if self.repos is not None:  # only then, so runs without it keep their provenance
            config["repos"] = True
        return config


PLAIN = ReconstructSpec()
"""Sniff each input's format, no base repository, no repository search."""


class InputJob(BaseModel):
    """One unit of reconstruct work: an input path and how to read it (sent to workers)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    """Input path (file, opencode storage tree or SQLite file)."""
    spec: ReconstructSpec = PLAIN
    """Format, base repository and repository search."""
    same_session_as: str | None = None
    """Another input holding the same session, read instead: this one is only detected."""
    origin: DatasetOrigin | None = None
    """The Hub dataset file this input was downloaded from (``hf://datasets/...``)."""

    @property
    def named(self) -> str:
        """How the summary names this input: the Hub file's URL, else its path."""
        return self.origin.url if self.origin is not None else self.path


class BuiltTask(BaseModel):
    """One task record with the (already scrubbed) file maps to write beside it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: Task
    """The task record."""
    folders: dict[str, dict[str, str]]
    """Folder (workspace, oracle, probes/N) → relative path → file text."""
    row: int = -1
    """Index of its session's row in :attr:`InputResult.session_rows`."""


class InputResult(BaseModel):
    """Everything a worker learned from one input; the driver writes it to OUT."""

    model_config = ConfigDict(extra="forbid")

    outcome: InputOutcome
    """The input's row in the summary."""
    tasks: list[BuiltTask] = Field(default_factory=list)
    """Candidates built from its sessions, in session order."""
    sessions: dict[str, int] = Field(default_factory=dict)
    """Sessions per harness."""
    warnings: list[str] = Field(default_factory=list)
    """First warnings, as ``file:line: message``."""
    skipped_records: dict[str, int] = Field(default_factory=dict)
    """Unused or unknown record types, counted."""
    redactions: dict[str, int] = Field(default_factory=dict)
    """Secrets redacted, by kind (the worker's scrubber counts)."""
    divergences: int = 0
    """Edits that could not be replayed plus confinement violations."""
    failed: list[FailedCandidate] = Field(default_factory=list)
    """Candidates (or whole sessions) that could not be built."""
    dropped: list[TriageDrop] = Field(default_factory=list)
    """Episodes triage dropped, in session order."""
    merged: dict[str, int] = Field(default_factory=dict)
    """Turns folded into threads, per harness."""
    repos: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Sessions per harness by repository outcome (with ``--repos``)."""
    session_rows: list[SessionOutcome] = Field(default_factory=list)
    """One row per session read, in session order (the driver adds what became of each
    candidate as it writes them)."""


def reconstruct_input(job: InputJob) -> InputResult:
    """Read, replay and build the candidates of one input; writes nothing (runs in workers).

    Per-input failures are recorded in ``outcome.error``; tasks built before one stay.
    """
    path = Path(job.path)
    result = InputResult(outcome=InputOutcome(path=job.named, format=None))
    outcome: dict[str, Any] = {"path": job.named, "format": None, "sessions": 0, "warnings": 0}
    scrub = Scrubber()
    try:
        fmt = detect(path, formats_named(job.spec.fmt))
        outcome["format"] = fmt.name
        outcome["same_session_as"] = job.same_session_as
        if job.same_session_as is None:
            for session in _sessions(path, fmt, outcome, result):
                _build_guarded(session, job, scrub, result)
    except FormatError as exc:
        outcome["error"] = str(exc)
    except Exception as exc:  # one broken input never stops the rest: a reported row
        log.debug("input %s failed", path, exc_info=True)
        outcome["error"] = f"{path}: {type(exc).__name__}: {exc}"
    result.outcome = InputOutcome(**outcome)
    result.redactions = dict(scrub.counts)
    return result


def _sessions(
    path: Path, fmt: Format, outcome: dict[str, Any], result: InputResult
) -> Iterator[Session]:
    """Sessions of one input; warnings go into ``result`` and ``outcome``."""
    for item in fmt.parse(path):
        if isinstance(item, ParseWarning):
            _warn(result, outcome, item)
            continue
        for warning in item.warnings:
            _warn(result, outcome, warning)
        for kind, count in item.skipped.items():
            result.skipped_records[kind] = result.skipped_records.get(kind, 0) + count
        outcome["sessions"] += 1
        yield item


def _warn(result: InputResult, outcome: dict[str, Any], warning: ParseWarning) -> None:
    outcome["warnings"] += 1
    if len(result.warnings) < MAX_WARNINGS_KEPT:
        result.warnings.append(f"{warning.file}:{warning.line}: {warning.message}")


def _failure(session: Session, exc: Exception) -> FailedCandidate:
    log.debug("%s: build failed", session.header.source_path, exc_info=True)
    return FailedCandidate(
        file=session.header.source_path,
        session=session.header.session_id,
        stage="build",
        reason=f"{type(exc).__name__}: {exc}",
    )


def _build_guarded(session: Session, job: InputJob, scrub: Scrubber, result: InputResult) -> None:
    """:func:`_build`; a session that breaks it is a reported row, the input's others go on."""
    try:
        _build(session, job, scrub, result)
    except Exception as exc:  # one bad session never ends the input
        failure = _failure(session, exc)
        result.failed.append(failure)
        result.session_rows.append(failed_row(job.named, session, failure.reason))


def _build(session: Session, job: InputJob, scrub: Scrubber, result: InputResult) -> None:
    """Replay one session and add its candidates to ``result``."""
    harness = session.header.harness
    result.sessions[harness] = result.sessions.get(harness, 0) + 1
    root = session_root(session.header.cwd, session.events)
    state, repo = replay_session(session, root, job.spec.base, job.spec.repos)
    if repo is not None:
        per = result.repos.setdefault(harness, {})
        per[repo.status] = per.get(repo.status, 0) + 1
    found = candidates(session.events, state, session.cut_offs, frozenset(session.steers))
    result.dropped.extend(to_records(session, found.drops, scrub))
    result.merged[harness] = result.merged.get(harness, 0) + found.merged
    config = job.spec.provenance()
    row, built = len(result.session_rows), []
    for cand in found.candidates:
        try:
            task, folders = build_task(cand, session, state, scrub, config, repo)
            if job.origin is not None:
                origin = {"dataset": job.origin, "path": job.origin.url}
                task = task.model_copy(update={"source": task.source.model_copy(update=origin)})
        except Exception as exc:  # one bad candidate never ends the session
            result.failed.append(_failure(session, exc))
            continue
        result.tasks.append(BuiltTask(task=task, folders=folders, row=row))
        built.append(task)
    result.divergences += len(state.divergences) + len(state.violations)
    failed = len(found.candidates) - len(built)
    line = session_row(job.named, session, found, built, failed)
    result.session_rows.append(with_repo(line, repo, job.spec.base is not None, scrub))


def run(
    paths: Sequence[Path],
    out: Path,
    spec: ReconstructSpec = PLAIN,
    on_input: Callable[[Path], None] | None = None,
    executor: Executor | None = None,
    hub: Sequence[Fetched] = (),
) -> ReconstructSummary:
    """Reconstruct every input into ``out`` as ``spec`` says; per-input failures are recorded,
    not raised. ``hub``: dataset inputs already fetched (their files follow ``paths``').

    Inputs run on ``executor`` (default: inline, one at a time); this process writes every
    task folder, in input order, so the output does not depend on the executor.
    """
    if spec.fmt != "auto":
        resolve(FORMATS, spec.fmt, "format")  # unknown names fail before any work
    inputs, missing = expand_paths(paths)
    summary = ReconstructSummary()
    summary.inputs.extend(InputOutcome(path=m.split(":")[0], format=None, error=m) for m in missing)
    origins: list[DatasetOrigin | None] = [None] * len(inputs)
    for fetched in hub:
        summary.datasets.append(fetched.dataset)
        if fetched.dataset.error is not None:
            row = InputOutcome(path=fetched.dataset.url, format=None, error=fetched.dataset.error)
            summary.inputs.append(row)
        inputs.extend(Path(f.local) for f in fetched.files)
        origins.extend(f.origin for f in fetched.files)
    out.mkdir(parents=True, exist_ok=True)
    clean_staging(out)
    if spec.repos is not None:
        discover.cache_clear()
    same = same_sessions(inputs, formats_named(spec.fmt))
    jobs = [
        InputJob(
            path=str(p),
            spec=spec,
            same_session_as=str(same[i]) if i in same else None,
            origin=origins[i],
        )
        for i, p in enumerate(inputs)
    ]
    redactions: Counter[str] = Counter()
    dedup = Dedup()
    for done in in_order(_executor(executor).map(reconstruct_input, jobs)):
        result = done.value if done.value is not None else _worker_failed(jobs[done.index], done)
        _merge(summary, result, out, dedup)
        redactions.update(result.redactions)
        if on_input is not None:
            on_input(inputs[done.index])
    summary.redactions = dict(redactions)
    write_atomic(out / RECONSTRUCT_SUMMARY, summary.model_dump_json(indent=2) + "\n")
    return summary


def _executor(executor: Executor | None) -> Executor:
    return executor if executor is not None else LocalExecutor()


def in_order(outcomes: Iterable[WorkOutcome[R]]) -> Iterator[WorkOutcome[R]]:
    """Outcomes arriving in any order, yielded by item index as soon as each prefix is whole."""
    ready: dict[int, WorkOutcome[R]] = {}
    next_index = 0
    for outcome in outcomes:
        ready[outcome.index] = outcome
        while next_index in ready:
            yield ready.pop(next_index)
            next_index += 1


def _worker_failed(job: InputJob, done: WorkOutcome[InputResult]) -> InputResult:
    """The summary row of an input whose worker failed on every attempt."""
    error = f"{job.named}: worker failed after {done.attempts} attempt(s): {done.error}"
    return InputResult(outcome=InputOutcome(path=job.named, format=None, error=error))


def _merge(summary: ReconstructSummary, result: InputResult, out: Path, dedup: Dedup) -> None:
    """Write one input's tasks and fold its counts into the summary."""
    summary.inputs.append(result.outcome)
    summary.failed_candidates.extend(result.failed)
    for harness, count in result.sessions.items():
        summary.sessions[harness] = summary.sessions.get(harness, 0) + count
        _funnel(summary, harness).sessions += count
    for harness, count in result.merged.items():
        _funnel(summary, harness).merged += count
    for harness, statuses in result.repos.items():
        per = summary.repos.setdefault(harness, {})
        for status, count in statuses.items():
            per[status] = per.get(status, 0) + count
    for drop in result.dropped:
        _drop(summary, drop)
    tally = Tally(result.session_rows)
    for built in result.tasks:
        kept = dedup.duplicate_of(built.task)
        if kept is not None:
            _drop(summary, duplicate_row(built.task, kept))
            tally.dropped(built.row, Reason.DUPLICATE)
        elif _write(summary, built, out):
            tally.kept(built.row, built.task.family)
        else:
            tally.failed(built.row)
    summary.session_rows.extend(tally.rows())
    room = MAX_WARNINGS_KEPT - len(summary.warnings)
    summary.warnings.extend(result.warnings[: max(room, 0)])
    for kind, count in result.skipped_records.items():
        summary.skipped_records[kind] = summary.skipped_records.get(kind, 0) + count
    summary.divergences += result.divergences


def _funnel(summary: ReconstructSummary, harness: str) -> TriageCounts:
    return summary.triage.setdefault(harness, TriageCounts())


def _drop(summary: ReconstructSummary, drop: TriageDrop) -> None:
    counts = _funnel(summary, drop.harness).dropped
    counts[drop.reason.value] = counts.get(drop.reason.value, 0) + 1
    if len(summary.dropped) < MAX_DROPS_KEPT:
        summary.dropped.append(drop)


def _write(summary: ReconstructSummary, built: BuiltTask, out: Path) -> bool:
    """Write one task folder (or count it as present); an unwritable one is a reported row.
    False: it could not be written."""
    task = built.task
    try:
        written = write_task(out, task, built.folders)
    except (OSError, ValueError) as exc:  # one unwritable task never stops the run
        summary.failed_candidates.append(
            FailedCandidate(
                file=task.source.path,
                session=task.source.session,
                stage="write",
                reason=f"{type(exc).__name__}: {exc}",
                task_id=task.id,
            )
        )
        return False
    if written:
        summary.written += 1
    else:
        summary.existing += 1
    per = summary.candidates.setdefault(task.source.harness, {})
    per[task.family] = per.get(task.family, 0) + 1
    _funnel(summary, task.source.harness).candidates += 1
    return True
