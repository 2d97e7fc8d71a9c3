"""The validate stage: every task folder under ``OUT/tasks``, in parallel, cached, resumable.

Each finished task's ``task.json`` is rewritten atomically with its validation, so an
interrupted run loses at most the tasks in flight; a re-run skips every task whose cache key
(task files + settings + backend) matches its stored evidence. One broken task never stops
the others: it ends with status ``error`` and the reason.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from trajforge.errors import RecordError, SandboxError
from trajforge.protocols import Executor
from trajforge.records import VERDICTS, Family, Status, Task, Validation
from trajforge.taskdir import TASK_FILE, load_task, save_task, task_dirs
from trajforge.verifiers.sandbox.runtime import check_runtime, needs_of
from trajforge.verifiers.validate.context import Context
from trajforge.verifiers.validate.instruction import finalise
from trajforge.verifiers.validate.single import JUDGES, finish, key_of

log = logging.getLogger(__name__)


class TaskRow(BaseModel):
    """One task's line in the summary."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    """Task id (the folder name when task.json is unreadable)."""
    family: str
    """Task family ('?' when unreadable)."""
    harness: str
    """Harness of the source session."""
    status: Status
    """accepted / rejected / error / timeout."""
    reasons: tuple[str, ...]
    """Why."""
    cached: bool = False
    """The stored validation was still valid; nothing ran."""
    wall_s: float = 0.0
    """Time spent on this task in this run."""


def clean_leftovers(out: Path) -> int:
    """Remove temporary files an interrupted run left in task folders; returns how many."""
    count = 0
    for task_dir in task_dirs(out):
        for tmp in [*task_dir.glob(f".{TASK_FILE}.*.tmp"), *task_dir.glob(".tests.staging")]:
            if tmp.is_dir():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink(missing_ok=True)
            count += 1
    return count


def row_of(task: Task, cached: bool, wall: float) -> TaskRow:
    v = task.validation
    return TaskRow(
        id=task.id,
        family=task.family,
        harness=task.source.harness,
        status=v.status,
        reasons=v.reasons,
        cached=cached,
        wall_s=round(wall, 3),
    )


def validate_dir(task_dir: Path, ctx: Context) -> TaskRow:
    """Validate one task folder through its family's judge and write its task.json; never
    raises for a bad task (its error is the recorded validation)."""
    started = time.monotonic()
    try:
        task = load_task(task_dir)
    except RecordError as exc:
        return TaskRow(
            id=task_dir.name, family="?", harness="?", status=Status.ERROR, reasons=(str(exc),)
        )
    key = files_hash = ""
    try:
        key, files_hash = key_of(task_dir, task, ctx)
        stored = task.validation
        if stored.status in VERDICTS and stored.evidence.cache_key == key:
            return row_of(task, True, time.monotonic() - started)
        task, validation = JUDGES[task.family](task_dir, task, ctx)
        key, files_hash = key_of(task_dir, task, ctx)
    except SandboxError as exc:
        validation = Validation(status=Status.ERROR, reasons=(f"sandbox: {exc}",))
    except Exception as exc:  # one broken task never stops the others; its error is recorded
        log.warning("task %s failed", task_dir.name, exc_info=True)
        validation = Validation(status=Status.ERROR, reasons=(f"{type(exc).__name__}: {exc}",))
    validation = finish(validation, task, key, files_hash, ctx, started)
    task = finalise(task_dir, task.model_copy(update={"validation": validation}), ctx.teacher)
    save_task(task_dir, task)
    return row_of(task, False, time.monotonic() - started)


def run(
    out: Path,
    ctx: Context,
    jobs: int = 1,
    on_done: Callable[[TaskRow], None] | None = None,
    executor: Executor | None = None,
    only: Collection[Family] | None = None,
) -> list[TaskRow]:
    """Validate every task under ``out`` (of the ``only`` families); rows in task-id order.

    With no ``executor``, tasks run in this process (``jobs`` threads share ``ctx``); with one
    (``--executor ray``), each task is a work item (:mod:`.remote`) and this process writes
    what it changed. Before any task, the sandbox's task runtime is checked
    (TaskEnvironmentError when it lacks what these families need).
    """
    clean_leftovers(out)
    families = {d: _family(d) for d in task_dirs(out)}
    dirs = [d for d, f in families.items() if only is None or f in only]
    check_runtime(ctx.sandbox, ctx.backend, needs_of(families[d] for d in dirs))
    if executor is None:
        found = _iterate(dirs, ctx, max(1, jobs))
    else:
        from trajforge.verifiers.validate.remote import run_on

        found = run_on(executor, dirs, ctx, out)
    rows: dict[str, TaskRow] = {}
    for row in found:
        rows[row.id] = row
        if on_done is not None:
            on_done(row)
    return [rows[k] for k in sorted(rows)]


def _family(task_dir: Path) -> str:
    try:
        return load_task(task_dir).family
    except RecordError:
        return "?"  # validate_dir reports it


def _iterate(dirs: list[Path], ctx: Context, jobs: int) -> Iterator[TaskRow]:
    if jobs == 1:
        for task_dir in dirs:
            yield validate_dir(task_dir, ctx)
        return
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="validate") as pool:
        futures = [pool.submit(validate_dir, d, ctx) for d in dirs]
        for future in as_completed(futures):
            yield future.result()
