"""One task folder validated: opened (cached verdicts and unreadable folders answered at once),
judged by its family's judge, closed (its task.json rewritten atomically) — alone, or a batch of
one family at a time. :mod:`.run` drives these over a whole OUT; :mod:`.remote` runs
:func:`validate_dir` on a Ray worker.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from trajforge.errors import RecordError, SandboxError
from trajforge.records import VERDICTS, Family, Finding, Reason, Status, Task, Validation, finding
from trajforge.taskdir import TASK_FILE, load_task, save_task, task_dirs
from trajforge.verifiers.validate.context import Context
from trajforge.verifiers.validate.instruction import finalise
from trajforge.verifiers.validate.single import BATCHED, JUDGES, finish, key_of

log = logging.getLogger(__name__)
BATCH = 50
"""Tasks of a batched family judged in one go (a data batch: one Python start, one polars
import for all their queries)."""


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
    findings: tuple[Finding, ...]
    """Why: closed reasons and their details."""
    cached: bool = False
    """The stored validation was still valid; nothing ran."""
    wall_s: float = 0.0
    """Time spent on this task in this run."""

    @property
    def reasons(self) -> tuple[str, ...]:
        """The findings in words."""
        return tuple(f.detail for f in self.findings)


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
        findings=v.findings,
        cached=cached,
        wall_s=round(wall, 3),
    )


@dataclass(frozen=True)
class Opened:
    """A task folder read for validation: its row when there is nothing to do (unreadable,
    or its stored verdict's cache key still matches), else the task to judge."""

    task_dir: Path
    started: float
    row: TaskRow | None = None
    task: Task | None = None


def open_task(task_dir: Path, ctx: Context) -> Opened:
    """Read a task and check its cache; never raises for a bad task."""
    started = time.monotonic()
    try:
        task = load_task(task_dir)
        key, _ = key_of(task_dir, task, ctx)
    except RecordError as exc:
        found = (finding(Reason.UNREADABLE_TASK, str(exc)),)
        row = TaskRow(
            id=task_dir.name, family="?", harness="?", status=Status.ERROR, findings=found
        )
        return Opened(task_dir, started, row=row)
    except OSError as exc:  # unreadable task files: judged, so the error is recorded
        log.warning("task %s: files unreadable: %s", task_dir.name, exc)
        return Opened(task_dir, started, task=task)
    stored = task.validation
    if stored.status in VERDICTS and stored.evidence.cache_key == key:
        return Opened(task_dir, started, row=row_of(task, True, time.monotonic() - started))
    return Opened(task_dir, started, task=task)


def guarded(
    opened: Opened, judge: Callable[[], tuple[Task, Validation]]
) -> tuple[Task, Validation]:
    """``judge()``, with any failure recorded as the task's ``error`` validation."""
    assert opened.task is not None
    try:
        return judge()
    except SandboxError as exc:
        found = finding(Reason.SANDBOX_ERROR, f"sandbox: {exc}")
        return opened.task, Validation(status=Status.ERROR, findings=(found,))
    except Exception as exc:  # one broken task never stops the others; its error is recorded
        log.warning("task %s failed", opened.task_dir.name, exc_info=True)
        found = finding(Reason.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
        return opened.task, Validation(status=Status.ERROR, findings=(found,))


def close_task(opened: Opened, task: Task, validation: Validation, ctx: Context) -> TaskRow:
    """Add the common evidence, write the instruction, save task.json once; the task's row."""
    try:
        key, files_hash = key_of(opened.task_dir, task, ctx)
    except OSError:
        key = files_hash = ""
    validation = finish(validation, task, key, files_hash, ctx, opened.started)
    task = finalise(
        opened.task_dir, task.model_copy(update={"validation": validation}), ctx.teacher
    )
    save_task(opened.task_dir, task)
    return row_of(task, False, time.monotonic() - opened.started)


def validate_dir(task_dir: Path, ctx: Context) -> TaskRow:
    """Validate one task folder through its family's judge and write its task.json."""
    opened = open_task(task_dir, ctx)
    if opened.row is not None:
        return opened.row
    task = opened.task
    assert task is not None  # open_task gives a row or a task
    judged = guarded(opened, lambda: JUDGES[task.family](task_dir, task, ctx))
    return close_task(opened, *judged, ctx)


def validate_batch(dirs: Sequence[Path], family: Family, ctx: Context) -> Iterator[TaskRow]:
    """Tasks of a family judged many at once (:data:`~.single.BATCHED`), written one by one
    exactly as :func:`validate_dir` writes them."""
    return (row for _, row in judge_batch(dirs, family, ctx))


def judge_batch(
    dirs: Sequence[Path], family: Family, ctx: Context
) -> Iterator[tuple[Path, TaskRow]]:
    """:func:`validate_batch`, each row beside its folder (cached rows come first)."""
    todo = []
    for task_dir in dirs:
        opened = open_task(task_dir, ctx)
        if opened.row is not None:
            yield task_dir, opened.row
        elif opened.task is not None:
            todo.append(opened)
    for start in range(0, len(todo), BATCH):
        chunk = todo[start : start + BATCH]
        items = [(o.task_dir, o.task) for o in chunk if o.task is not None]
        try:
            verdicts = BATCHED[family](items, ctx)
        except Exception:  # the batch failed as a whole: each task on its own
            log.warning("batch of %d %s tasks failed; judged one by one", len(chunk), family)
            for opened in chunk:
                yield opened.task_dir, validate_dir(opened.task_dir, ctx)
            continue
        for opened, validation in zip(chunk, verdicts, strict=True):
            assert opened.task is not None
            yield opened.task_dir, close_task(opened, opened.task, validation, ctx)


def split_work(
    dirs: Sequence[Path], families: Mapping[Path, str]
) -> tuple[dict[Family, list[Path]], list[Path]]:
    """The tasks of each batched family (judged in batches), and every other task (alone)."""
    batched = {f: [d for d in dirs if families[d] == f] for f in BATCHED}
    return batched, [d for d in dirs if families[d] not in BATCHED]
