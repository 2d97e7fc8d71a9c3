"""Validate on an executor (``trajforge validate --executor ray``): one work item per task, or
per batch of a batched family (data: up to :data:`~.per_task.BATCH` tasks, as a local run).

The driver opens each task as a local run does (:func:`~.per_task.open_task`: a cached or
unreadable task never leaves it), then ships the folders' files as the item. The worker lays
them out in a scratch folder, makes its own sandbox from the backend *name* (one per worker
process), runs the same :func:`~.per_task.validate_dir` (or :func:`~.per_task.validate_batch`)
as a local run, and sends back what that changed in each folder: ``task.json`` and the hidden
``tests/`` folder. Only the driver writes into OUT,
with the same atomic writes, so files, ids, the cache and resumability are those of a local
run. A worker that failed on every attempt (it raised, or its process died) is recorded as
that task's ``error`` validation, in ``task.json`` and in its row — never dropped.

Session files (for the history checks) are read at the path the task names, so on a cluster
they must be reachable at the same path on every node, as the inputs of ``reconstruct`` are.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import overload

from trajforge.errors import SandboxError
from trajforge.protocols import Executor, WorkOutcome
from trajforge.records import Family, Reason, Status, Validation, finding
from trajforge.verifiers.validate.context import Context, ContextSpec, build_context
from trajforge.verifiers.validate.files import TASK_FILE, write_atomic, write_tree
from trajforge.verifiers.validate.per_task import (
    BATCH,
    TaskRow,
    close_task,
    judge_batch,
    open_task,
    split_work,
    validate_dir,
)
from trajforge.verifiers.validate.single import HIDDEN_DIR

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Folder:
    """One task folder shipped to a worker: its name and every file in it (path → bytes)."""

    name: str
    files: tuple[tuple[str, bytes], ...]


@dataclass(frozen=True)
class TaskJob:
    """One work item: a task folder, or a batch of folders of one batched ``family``."""

    spec: ContextSpec
    folders: tuple[Folder, ...]
    family: Family | None = None
    """Set for a batch (judged by :func:`~.per_task.validate_batch`); None: one task."""


@dataclass(frozen=True)
class TaskResult:
    """A worker's answer: the row, the new ``task.json`` and the new ``tests/`` (if changed)."""

    row: TaskRow
    task_json: str | None
    hidden: dict[str, bytes] | None


def spec_of(ctx: Context, out: Path) -> ContextSpec:
    """The worker spec of a driver context (the driver's cwd joins the session search dirs)."""
    return ctx.spec(out.resolve(), (str(Path.cwd()),))


@functools.lru_cache(maxsize=4)
def worker_context(spec: ContextSpec) -> Context:
    """This worker process's context: built from the spec once per process (its own sandbox,
    probed here: a node without it fails naming itself)."""
    try:
        return build_context(spec)
    except SandboxError as exc:
        raise SandboxError(f"{exc} (on {os.uname().nodename})") from None


def read_files(root: Path) -> dict[str, bytes]:
    """Relative path → bytes of every regular file under ``root``."""
    found: dict[str, bytes] = {}
    if root.is_dir():
        for path in sorted(root.rglob("*")):
            if path.is_file() and not path.is_symlink():
                found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def validate_job(job: TaskJob) -> tuple[TaskResult, ...]:
    """Validate the shipped folders in scratch space (the Ray task / pool item); one result
    per folder, in the folders' order (each row is paired with the folder it was judged in)."""
    ctx = worker_context(job.spec)
    with tempfile.TemporaryDirectory(prefix="trajforge-validate-task-") as scratch:
        dirs = [_lay_out(Path(scratch), folder) for folder in job.folders]
        if job.family is None:
            rows = {task_dir: validate_dir(task_dir, ctx) for task_dir in dirs}
        else:
            rows = dict(judge_batch(dirs, job.family, ctx))
        return tuple(
            _changes(rows[task_dir], dict(folder.files), read_files(task_dir))
            for folder, task_dir in zip(job.folders, dirs, strict=True)
        )


def _lay_out(scratch: Path, folder: Folder) -> Path:
    task_dir = scratch / folder.name
    for rel, data in folder.files:
        target = task_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    task_dir.mkdir(exist_ok=True)
    return task_dir


def _changes(row: TaskRow, before: dict[str, bytes], after: dict[str, bytes]) -> TaskResult:
    """What validation changed; only ``task.json`` and ``tests/`` may change."""
    prefix = f"{HIDDEN_DIR}/"
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    stray = sorted(k for k in changed if k != TASK_FILE and not k.startswith(prefix))
    if stray:
        raise RuntimeError(f"validation changed files outside task.json and tests/: {stray}")
    hidden = {k[len(prefix) :]: v for k, v in after.items() if k.startswith(prefix)}
    text = after.get(TASK_FILE) if TASK_FILE in changed else None
    return TaskResult(
        row=row,
        task_json=text.decode() if text is not None else None,
        hidden=hidden if any(k.startswith(prefix) for k in changed) else None,
    )


class _Jobs(Sequence[TaskJob]):
    """Work items whose folders are read only when the executor submits them (bounded
    memory)."""

    def __init__(self, spec: ContextSpec, groups: list[tuple[list[Path], Family | None]]) -> None:
        self.spec, self.groups = spec, groups

    def __len__(self) -> int:
        return len(self.groups)

    @overload
    def __getitem__(self, index: int) -> TaskJob: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[TaskJob]: ...
    def __getitem__(self, index: int | slice) -> TaskJob | Sequence[TaskJob]:
        if isinstance(index, slice):
            return _Jobs(self.spec, self.groups[index])
        dirs, family = self.groups[index]
        folders = tuple(Folder(d.name, tuple(read_files(d).items())) for d in dirs)
        return TaskJob(self.spec, folders, family)


def _groups(
    dirs: list[Path], families: Mapping[Path, str]
) -> list[tuple[list[Path], Family | None]]:
    """The work items: each batched family's tasks in batches, then every other task alone."""
    batched, single = split_work(dirs, families)
    groups: list[tuple[list[Path], Family | None]] = [
        (mine[i : i + BATCH], family)
        for family, mine in batched.items()
        for i in range(0, len(mine), BATCH)
    ]
    return groups + [([d], None) for d in single]


def run_on(
    executor: Executor,
    dirs: list[Path],
    families: Mapping[Path, str],
    ctx: Context,
    out: Path,
    worker: Callable[[TaskJob], tuple[TaskResult, ...]] = validate_job,
) -> Iterator[TaskRow]:
    """Rows of ``dirs`` (``families``: each one's family, as :func:`~.run.run` read them):
    cached ones at once, the others as the executor finishes them."""
    todo: list[Path] = []
    for task_dir in dirs:
        opened = open_task(task_dir, ctx)  # cached and unreadable tasks never leave the driver
        if opened.row is None:
            todo.append(task_dir)
        else:
            yield opened.row
    started = time.monotonic()
    groups = _groups(todo, families)
    for done in executor.map(worker, _Jobs(spec_of(ctx, out), groups)):
        group = groups[done.index][0]
        if done.value is None:
            yield from (_worker_failed(d, done, ctx, started) for d in group)
        else:
            yield from (_settle(d, r) for d, r in zip(group, done.value, strict=True))


def _settle(task_dir: Path, result: TaskResult) -> TaskRow:
    """Write what the worker changed (tests/ first, task.json last); the task's row."""
    if result.hidden is not None:
        staging = task_dir / f".{HIDDEN_DIR}.staging"
        write_tree(staging, {})
        for rel, data in result.hidden.items():
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            (staging / rel).write_bytes(data)
        shutil.rmtree(task_dir / HIDDEN_DIR, ignore_errors=True)
        staging.rename(task_dir / HIDDEN_DIR)
    if result.task_json is not None:
        write_atomic(task_dir / TASK_FILE, result.task_json)
    return result.row


def _worker_failed(
    task_dir: Path, done: WorkOutcome[tuple[TaskResult, ...]], ctx: Context, started: float
) -> TaskRow:
    """Record a task whose worker failed on every attempt as its ``error`` validation, closed
    as every other verdict is (:func:`~.per_task.close_task`)."""
    failed = finding(
        Reason.INTERNAL_ERROR, f"worker failed after {done.attempts} attempt(s): {done.error}"
    )
    opened = open_task(task_dir, ctx)
    if opened.task is None:  # unreadable now: its row says so, beside the worker's failure
        assert opened.row is not None
        return opened.row.model_copy(update={"findings": (failed, *opened.row.findings)})
    task, opened = opened.task, replace(opened, started=started)
    return close_task(opened, task, Validation(status=Status.ERROR, findings=(failed,)), ctx)
