"""``trajforge validate OUT`` (the control matrix) and ``trajforge verify TASK_DIR``."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from trajforge.cli.common import EXIT_PARTIAL, err, out, print_json
from trajforge.errors import UsageError
from trajforge.executors import ExecutorConfig, make_executor
from trajforge.protocols import Executor, Sandbox
from trajforge.records import Outcome, Status
from trajforge.registry import EXECUTORS, SANDBOXES, create
from trajforge.taskdir import load_task, task_dirs
from trajforge.verifiers.teacher.teachers import MINED, check_name
from trajforge.verifiers.validate import report, run
from trajforge.verifiers.validate.config import ValidateConfig, load_config
from trajforge.verifiers.validate.context import Context, ContextSpec, build_context
from trajforge.verifiers.validate.report_doc import RunCounts, ValidateReport
from trajforge.verifiers.validate.verify import verify_answer, verify_files

EXECUTOR_HELP = "|".join(EXECUTORS) + ": where tasks are validated (ray needs the ray extra)."


def _sandbox(backend: str) -> Sandbox:
    sandbox: Sandbox = create(SANDBOXES, backend, "sandbox")
    problem = sandbox.available()
    if problem:
        raise UsageError(f"sandbox {backend} is not usable here: {problem}")
    return sandbox


def context(
    backend: str, cfg: ValidateConfig, out_dir: Path, teacher: str = MINED, probe: bool = True
) -> Context:
    """The stage's context (``probe=False`` with ``--executor ray``: each worker probes its own
    sandbox); session paths are also looked up beside OUT."""
    spec = ContextSpec(backend, cfg, teacher, (str(out_dir.resolve().parent),), str(out_dir), probe)
    return build_context(spec)


def _executor(name: str, jobs: int, address: str | None) -> Executor | None:
    """None for local (this process, ``-j`` threads); the named executor otherwise."""
    if name not in EXECUTORS:
        known = ", ".join(EXECUTORS)
        raise typer.BadParameter(
            f"unknown executor {name!r}; known: {known}", param_hint="--executor"
        )
    if name == "local":
        return None
    return make_executor(name, ExecutorConfig(jobs=jobs, address=address))


def validate(
    out_dir: Path = typer.Argument(..., help="Output folder of `trajforge reconstruct` (OUT)."),
    backend: str = typer.Option("local", "--sandbox", help="Sandbox backend: local or docker."),
    teacher: str = typer.Option(
        MINED,
        "--teacher",
        help="Hidden tests: mined (offline) or openai:MODEL (OPENAI_BASE_URL, OPENAI_API_KEY).",
    ),
    jobs: int = typer.Option(
        1,
        "-j",
        "--jobs",
        min=1,
        help="Tasks at a time (local executor: threads sharing one sandbox; 1 = inline).",
    ),
    executor_name: str = typer.Option("local", "--executor", help=EXECUTOR_HELP),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="Ray cluster address (default: RAY_ADDRESS, else local)."
    ),
    config: Path | None = typer.Option(None, "--config", help="TOML file of settings."),
    overrides: list[str] = typer.Option([], "--set", help="Setting override KEY=VALUE."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
) -> None:
    """Run every candidate's control matrix; write evidence into task.json and OUT/report.*."""
    check_name(teacher)
    cfg = load_config(config, overrides)
    if not (out_dir / "tasks").is_dir():
        raise UsageError(
            f"{out_dir}: no tasks/ folder; run `trajforge reconstruct ... -o {out_dir}`"
        )
    executor = _executor(executor_name, jobs, ray_address)
    ctx = context(backend, cfg, out_dir, teacher, probe=executor is None)
    total = len(task_dirs(out_dir))
    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=True, disable=as_json) as bar:
        job = bar.add_task("validate", total=total)
        try:
            rows = run.run(out_dir, ctx, jobs, lambda _row: bar.advance(job), executor)
        finally:
            if executor is not None:
                executor.close()
    doc = report.write_reports(out_dir, backend, ctx.image, cfg)
    ran = RunCounts(
        validated=sum(1 for r in rows if not r.cached), cached=sum(1 for r in rows if r.cached)
    )
    doc = doc.model_copy(update={"run": ran})
    if as_json:
        print_json(doc.model_dump(mode="json"))
    else:
        _print(doc, ran, out_dir)
    raise typer.Exit(EXIT_PARTIAL if any(r.status == Status.ERROR for r in rows) else 0)


def _print(doc: ValidateReport, ran: RunCounts, out_dir: Path) -> None:
    table = Table(title="validation: yield per family")
    for column in ("family", *report.STAGES):
        table.add_column(column.replace("_", " "))
    for family, counts in doc.funnel.items():
        table.add_row(family, *(str(counts[s]) for s in report.STAGES))
    out.print(table)
    said = ", ".join(f"{doc.count(s)} {s}" for s in Status if s != Status.PENDING)
    out.print(
        f"{doc.totals['tasks']} tasks: {said} "
        f"({ran.validated} validated now, {ran.cached} unchanged and cached)"
    )
    for row in doc.tasks:
        if row.status in (Status.ERROR, Status.TIMEOUT):
            out.print(f"[red]{row.status}[/red] {row.id}: {'; '.join(row.reasons)}")
    out.print(f"report: {out_dir / 'report.html'} and {out_dir / 'report.json'}")


def verify(
    task_dir: Path = typer.Argument(..., help="A task folder (OUT/tasks/<id>)."),
    files: Path | None = typer.Option(
        None, "--files", help="Solution files laid over the workspace."
    ),
    whole: bool = typer.Option(
        False,
        "--whole",
        help="--files is the whole final workspace: start files missing from it were deleted.",
    ),
    answer: str | None = typer.Option(None, "--answer", help="Answer text (qa tasks)."),
    backend: str = typer.Option("local", "--sandbox", help="Sandbox backend: local or docker."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Score one candidate solution against a task: reward and per-test results."""
    if (files is None) == (answer is None):
        raise UsageError("give exactly one of --files DIR or --answer TEXT")
    task = load_task(task_dir)
    if task.validation.status != Status.ACCEPTED:
        err.print(
            f"[yellow]warning:[/yellow] task {task.id} is {task.validation.status}, "
            "not accepted: its verifier is not proven"
        )
    if answer is not None:
        result = verify_answer(task, answer)
    else:
        assert files is not None
        result = verify_files(task_dir, task, files, _sandbox(backend), whole)
    if as_json:
        print_json({"task": task.id, **result.model_dump(mode="json", exclude_none=True)})
        return
    out.print(f"reward {result.reward:.2f} ({'passed' if result.passed else 'failed'})")
    for found in result.tampering:
        out.print(f"  [red]tampering[/red] {found}: the check did not run")
    if result.set_aside:
        out.print(f"  set aside, the task's own ran instead: {', '.join(result.set_aside)}")
    for test in result.tests:
        mark = "[green]✓[/green]" if test.outcome == Outcome.PASS else "[red]✗[/red]"
        message = test.message if test.outcome != Outcome.PASS else ""
        out.print(f"  {mark} {test.name} {message}")


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
    app.command("verify")(verify)
