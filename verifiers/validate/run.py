"""The validate stage: every task folder under ``OUT/tasks``, in parallel, cached, resumable.

Each finished task's ``task.json`` is rewritten atomically with its validation, so an
interrupted run loses at most the tasks in flight; a re-run skips every task whose cache key
(task files + settings + backend) matches its stored evidence. One broken task never stops
the others: it ends with status ``error`` and the reason.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from trajforge.protocols import Executor
from trajforge.records import Family
from trajforge.taskdir import read_family, task_dirs
from trajforge.verifiers.sandbox.runtime import check_runtime, needs_of
from trajforge.verifiers.validate.context import Context
from trajforge.verifiers.validate.per_task import (
    TaskRow,
    clean_leftovers,
    close_task,
    guarded,
    open_task,
    row_of,
    split_work,
    validate_batch,
    validate_dir,
)
from trajforge.verifiers.validate.remote import run_on

log = logging.getLogger(__name__)
__all__ = [
    "TaskRow",
    "clean_leftovers",
    "close_task",
    "guarded",
    "open_task",
    "row_of",
    "run",
    "validate_batch",
    "validate_dir",
]


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
    families = {d: read_family(d) or "?" for d in task_dirs(out)}  # "?": open_task reports it
    dirs = [d for d, f in families.items() if only is None or f in only]
    check_runtime(ctx.sandbox, ctx.backend, needs_of(families[d] for d in dirs))
    if executor is None:
        found = _iterate(dirs, families, ctx, max(1, jobs))
    else:
        found = run_on(executor, dirs, families, ctx, out)
    rows: dict[str, TaskRow] = {}
    for row in found:
        rows[row.id] = row
        if on_done is not None:
            on_done(row)
    return [rows[k] for k in sorted(rows)]


def _iterate(
    dirs: list[Path], families: dict[Path, str], ctx: Context, jobs: int
) -> Iterator[TaskRow]:
    """Batched families first (one batch after the other), then every other task, ``jobs``
    at a time."""
    batched, single = split_work(dirs, families)
    for family, mine in batched.items():
        yield from validate_batch(mine, family, ctx)
    if jobs == 1:
        for task_dir in single:
            yield validate_dir(task_dir, ctx)
        return
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="validate") as pool:
        futures = [pool.submit(validate_dir, d, ctx) for d in single]
        for future in as_completed(futures):
            yield future.result()
