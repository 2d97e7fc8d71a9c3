"""``trajforge dataenv``: data-analysis tasks generated from tables, and their validation.

``build`` writes task folders (``OUT/tasks/data-<hash>/``) whose oracle is a stored polars
query; ``validate`` re-executes every query in the sandbox and checks the answers and the
controls. Exit codes: 0 ok; 1 fewer tasks than asked / some tasks rejected; 2 bad input.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from trajforge.cli.common import (
    EXIT_OK,
    EXIT_PARTIAL,
    EXIT_UNUSABLE,
    err,
    out,
    print_json,
    progress,
)
from trajforge.executors import ExecutorConfig, make_executor
from trajforge.protocols import Executor
from trajforge.records import Status
from trajforge.registry import EXECUTORS

EXECUTOR_HELP = "|".join(EXECUTORS) + ": where drafts' queries run (ray needs the ray extra)."

dataenv_app = typer.Typer(
    name="dataenv",
    help="Data-analysis tasks from CSV / parquet / JSON-lines tables (polars oracles).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _ticker(total: int, label: str, quiet: bool) -> tuple[Callable[[], None], Callable[[], None]]:
    """(advance, finish) driving a progress bar on stderr."""
    bar = iter(progress(iter(range(total + 1)), total, label, quiet=quiet))
    next(bar, None)

    def finish() -> None:
        for _ in bar:
            pass

    def advance() -> None:
        next(bar, None)

    return advance, finish


@dataenv_app.command("build")
def build_command(
    data: Annotated[
        list[Path] | None,
        typer.Argument(
            show_default=False, help="Tables (.csv, .parquet, .jsonl); default: bundled demo."
        ),
    ] = None,
    output: Annotated[Path, typer.Option("-o", "--output", help="Output folder (OUT).")] = Path(),
    count: Annotated[int, typer.Option("--count", "-n", help="How many tasks.")] = 150,
    seed: Annotated[int, typer.Option("--seed", help="Random seed (same seed → same tasks).")] = 0,
    executor_name: Annotated[str, typer.Option("--executor", help=EXECUTOR_HELP)] = "local",
    jobs: Annotated[
        int,
        typer.Option(
            "-j",
            "--jobs",
            min=1,
            help="Drafts at a time (local executor: a process pool; 1 = inline).",
        ),
    ] = 1,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address", help="Ray cluster address (default: RAY_ADDRESS, else local)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Generate COUNT question/answer tasks over DATA into OUT/tasks/."""
    from trajforge.reconstruct.dataenv import build

    if output == Path():
        err.print("[red]error:[/red] missing -o/--output OUT")
        raise typer.Exit(EXIT_UNUSABLE)
    if count < 1:
        err.print(f"[red]error:[/red] --count must be at least 1, got {count}")
        raise typer.Exit(EXIT_UNUSABLE)
    executor = _executor(executor_name, jobs, ray_address)
    start = time.perf_counter()
    advance, finish = _ticker(count, "dataenv build", as_json)
    try:
        report = build(
            list(data or []), output, count=count, seed=seed, on_task=advance, executor=executor
        )
    finally:
        executor.close()
    finish()
    summary: dict[str, Any] = {
        "out": str(output),
        "requested": count,
        "tasks": len(report.ids),
        "written": len(report.written),
        "existing": len(report.existing),
        "families": report.families,
        "difficulties": {str(k): v for k, v in sorted(report.difficulties.items())},
        "dropped": report.dropped,
        "attempts": report.attempts,
        "errors": report.errors,
        "seconds": round(time.perf_counter() - start, 3),
        "ids": report.ids,
    }
    short = len(report.ids) < count
    if as_json:
        print_json(summary)
    else:
        _print_build(summary)
    if short:
        err.print(
            f"[yellow]only {len(report.ids)} of {count} distinct tasks could be generated "
            f"from these tables[/yellow]"
        )
    for error in report.errors:
        err.print(f"[red]failed:[/red] {error}")
    raise typer.Exit(EXIT_PARTIAL if short or report.errors else EXIT_OK)


def _executor(name: str, jobs: int, address: str | None) -> Executor:
    """The executor named by ``--executor`` (a usage error names the known ones)."""
    if name not in EXECUTORS:
        known = ", ".join(EXECUTORS)
        raise typer.BadParameter(
            f"unknown executor {name!r}; known: {known}", param_hint="--executor"
        )
    return make_executor(name, ExecutorConfig(jobs=jobs, address=address, start_method="spawn"))


def _print_build(summary: dict[str, Any]) -> None:
    table = Table(title="data tasks per template family")
    table.add_column("family")
    table.add_column("tasks", justify="right")
    for family, n in sorted(summary["families"].items()):
        table.add_row(family, str(n))
    out.print(table)
    levels = ", ".join(f"{k}: {v}" for k, v in summary["difficulties"].items())
    out.print(f"difficulty levels: {levels}")
    out.print(
        f"tasks: {summary['tasks']} (written {summary['written']}, already present "
        f"{summary['existing']}) → {Path(summary['out']) / 'tasks'} in {summary['seconds']} s"
    )


@dataenv_app.command("validate")
def validate_command(
    output: Annotated[Path, typer.Argument(help="Output folder of `dataenv build`.")],
    backend: Annotated[str, typer.Option("--sandbox", help="Sandbox backend (local).")] = "local",
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Re-execute every stored query in the sandbox and check answers and controls."""
    from trajforge.verifiers.dataenv_run import data_task_dirs, validate_tasks

    total = len(data_task_dirs(output))
    advance, finish = _ticker(total, "dataenv validate", as_json)
    summary = validate_tasks(output, backend=backend, on_task=advance)
    finish()
    if as_json:
        print_json(summary.model_dump(mode="json"))
    else:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(summary.counts.items())) or "no tasks"
        out.print(f"validated {len(summary.tasks)} data tasks in {summary.seconds} s: {counts}")
        for task in summary.tasks:
            if task.status != Status.ACCEPTED:
                out.print(f"[red]{task.status}[/red] {task.id}: {'; '.join(task.reasons)}")
    if not summary.tasks:
        err.print(f"[red]error:[/red] {output}: no data tasks to validate")
        raise typer.Exit(EXIT_UNUSABLE)
    bad = len(summary.tasks) - summary.counts.get(Status.ACCEPTED, 0)
    raise typer.Exit(EXIT_PARTIAL if bad else EXIT_OK)


def register(app: typer.Typer) -> None:
    """Attach ``trajforge dataenv`` to the main app."""
    app.add_typer(dataenv_app, name="dataenv")
