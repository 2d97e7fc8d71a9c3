"""``trajforge dataenv validate``: the validate stage restricted to the data family, so the
judge (:mod:`.dataenv_validate`), the cache and the writer are the validate stage's."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from trajforge.errors import UsageError
from trajforge.records import Family, Status
from trajforge.taskdir import is_task_dir
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.context import ContextSpec, build_context
from trajforge.verifiers.validate.run import run

DATA_ONLY: tuple[Family, ...] = ("data",)


class TaskOutcome(BaseModel):
    """Validation outcome of one task."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    """Task id (folder name)."""
    status: Status
    """accepted, rejected, error or timeout."""
    reasons: tuple[str, ...]
    """Why."""


class DataValidation(BaseModel):
    """What ``validate_tasks`` did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    """Version of this summary's schema."""
    out: str
    """The task output folder."""
    backend: str
    """Sandbox backend the queries ran in."""
    counts: dict[str, int]
    """Tasks per status."""
    seconds: float
    """Wall time of the whole validation."""
    tasks: tuple[TaskOutcome, ...]
    """Per-task outcomes, sorted by id."""


def data_task_dirs(out: Path) -> list[Path]:
    """Task folders of ``out`` holding a ``task.json`` (sorted)."""
    tasks = out / "tasks"
    if not tasks.is_dir():
        raise UsageError(f"{out}: no tasks/ folder (run `trajforge dataenv build` first)")
    return sorted(p for p in tasks.iterdir() if is_task_dir(p))


def validate_tasks(
    out: Path,
    *,
    backend: str = "local",
    seed: int = 0,
    on_task: Callable[[], None] | None = None,
) -> DataValidation:
    """Validate every data task under ``out`` (``trajforge dataenv validate``): the validate
    stage restricted to the data family, so the judge, the cache and the writer are its."""
    start = time.perf_counter()
    data_task_dirs(out)  # a clear error when OUT has no tasks/
    ctx = build_context(ContextSpec(backend, ValidateConfig(seed=seed), out_dir=str(out)))
    rows = run(out, ctx, on_done=(lambda _row: on_task()) if on_task else None, only=DATA_ONLY)
    outcomes = [TaskOutcome(id=r.id, status=r.status, reasons=r.reasons) for r in rows]
    counts: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    return DataValidation(
        out=str(out),
        backend=backend,
        counts=counts,
        seconds=round(time.perf_counter() - start, 3),
        tasks=tuple(outcomes),
    )
