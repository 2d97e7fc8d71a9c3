"""Validate on an executor (``trajforge validate --executor ray``): one work item per task.

The driver opens each task as a local run does (:func:`~.per_task.open_task`: a cached or
unreadable task never leaves it), then ships the folder's files as the item. The worker lays
them out in a scratch folder, makes its own
sandbox from the backend *name* (one per worker process), runs the same
:func:`~trajforge.verifiers.validate.per_task.validate_dir` as a local run, and sends back what
that changed: ``task.json`` and the hidden ``tests/`` folder. Only the driver writes into OUT,
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
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import overload

from trajforge.errors import SandboxError
from trajforge.protocols import Executor, WorkOutcome
from trajforge.records import Reason, Status, Validation, finding
from trajforge.verifiers.validate.context import Context, ContextSpec, build_context
from trajforge.verifiers.validate.files import TASK_FILE, write_atomic, write_tree
from trajforge.verifiers.validate.per_task import TaskRow, close_task, open_task, validate_dir
from trajforge.verifiers.validate.single import HIDDEN_DIR

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskJob:
    """One task to validate: its folder name and every file in it (relative path → bytes)."""

    spec: ContextSpec
    name: str
    files: tuple[tuple[str, bytes], ...]


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


def validate_job(job: TaskJob) -> TaskResult:
    """Validate one shipped task folder in scratch space (the Ray task / pool item)."""
    ctx = worker_context(job.spec)
    with tempfile.TemporaryDirectory(prefix="trajforge-validate-task-") as scratch:
        task_dir = Path(scratch) / job.name
        task_dir.mkdir()
        for rel, data in job.files:
            target = task_dir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        row = validate_dir(task_dir, ctx)
        after = read_files(task_dir)
    return _changes(row, dict(job.files), after)


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
    """Task folders read only when the executor submits them (bounded memory)."""

    def __init__(self, spec: ContextSpec, dirs: list[Path]) -> None:
        self.spec, self.dirs = spec, dirs

    def __len__(self) -> int:
        return len(self.dirs)

    @overload
    def __getitem__(self, index: int) -> TaskJob: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[TaskJob]: ...
    def __getitem__(self, index: int | slice) -> TaskJob | Sequence[TaskJob]:
        if isinstance(index, slice):
            return _Jobs(self.spec, self.dirs[index])
        task_dir = self.dirs[index]
        files = tuple(read_files(task_dir).items())
        return TaskJob(self.spec, task_dir.name, files)


def run_on(
    executor: Executor,
    dirs: list[Path],
    ctx: Context,
    out: Path,
    worker: Callable[[TaskJob], TaskResult] = validate_job,
) -> Iterator[TaskRow]:
    """Rows of ``dirs``: cached ones at once, the others as the executor finishes them."""
    todo: list[Path] = []
    for task_dir in dirs:
        opened = open_task(task_dir, ctx)  # cached and unreadable tasks never leave the driver
        if opened.row is None:
            todo.append(task_dir)
        else:
            yield opened.row
    started = time.monotonic()
    for done in executor.map(worker, _Jobs(spec_of(ctx, out), todo)):
        yield _settle(todo[done.index], done, ctx, started)


def _settle(task_dir: Path, done: WorkOutcome[TaskResult], ctx: Context, started: float) -> TaskRow:
    """Write what the worker changed (tests/ first, task.json last); the task's row."""
    result = done.value
    if result is None:
        return _worker_failed(task_dir, done, ctx, started)
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
    task_dir: Path, done: WorkOutcome[TaskResult], ctx: Context, started: float
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
