"""``trajforge demo``: the whole flow that exists so far, offline, on the bundled sample dumps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

import trajforge
from trajforge.cli.common import EXIT_PARTIAL, err, out, print_json, progress
from trajforge.protocols import Limits, Sandbox
from trajforge.reconstruct import pipeline
from trajforge.records import Task, load_record
from trajforge.registry import SANDBOXES, create

SAMPLES = Path(trajforge.__file__).parent / "samples"
CHECK_TIMEOUT_S = 60.0


def _check(sandbox: Sandbox, task_dir: Path, task: Task) -> dict[str, Any]:
    """Run the task's recorded check on its starting workspace and on its oracle."""
    row: dict[str, Any] = {"id": task.id, "family": task.family, "harness": task.source.harness}
    if task.verifier.command is None or task.oracle is None:
        row["answer"] = task.answer
        return row
    limits = Limits(timeout_s=CHECK_TIMEOUT_S)
    with sandbox.session(task_dir / task.workspace, limits) as box:
        start = box.run(task.verifier.command)
        box.reset(task_dir / task.oracle)
        oracle = box.run(task.verifier.command)
    row.update(
        command=task.verifier.command,
        start_exit=start.exit_code,
        oracle_exit=oracle.exit_code,
        wall_s=round(start.wall_s + oracle.wall_s, 3),
    )
    return row


def demo(
    output: Path = typer.Option(Path("demo-out"), "-o", "--output", help="Where to write tasks."),
    backend: str = typer.Option("local", "--sandbox", help="Sandbox backend for the checks."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
) -> None:
    """Reconstruct the bundled sample sessions, then run each task's check in the sandbox."""
    summary = pipeline.run([SAMPLES], output, "auto")
    sandbox: Sandbox = create(SANDBOXES, backend, "sandbox")
    problem = sandbox.available()
    task_dirs = sorted(p.parent for p in (output / "tasks").glob("*/task.json"))
    rows = []
    if problem:
        err.print(f"[yellow]sandbox {backend} unavailable, checks skipped:[/yellow] {problem}")
    else:
        for task_dir in progress(task_dirs, len(task_dirs), "checks", quiet=as_json):
            rows.append(_check(sandbox, task_dir, load_record(Task, task_dir / "task.json")))
    if as_json:
        print_json({"reconstruct": summary.model_dump(mode="json"), "checks": rows})
    else:
        _print(summary, rows, output)
    failed = summary.exit_code() != 0 or bool(problem)
    raise typer.Exit(EXIT_PARTIAL if failed else 0)


def _verdict(row: dict[str, Any]) -> str:
    if "command" not in row:
        return "answer: " + (row.get("answer") or "")[:60].replace("\n", " ")
    oracle = "oracle passes" if row["oracle_exit"] == 0 else "oracle FAILS"
    if row["start_exit"]:
        return f"start fails, {oracle}"
    return f"start passes too, {oracle}: check alone can't tell"


def _print(summary: pipeline.ReconstructSummary, rows: list[dict[str, Any]], output: Path) -> None:
    sessions = sum(summary.sessions.values())
    out.print(
        f"reconstructed {sessions} sample sessions → {summary.written} new tasks in {output}/tasks"
    )
    table = Table(title="recorded checks run in the sandbox")
    for column in ("task", "harness", "family", "result"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["id"], row["harness"], row["family"], _verdict(row))
    out.print(table)


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
