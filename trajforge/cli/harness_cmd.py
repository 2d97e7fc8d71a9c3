"""``trajforge harness install|list`` and ``trajforge replay TASK_DIR --harness NAME``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import typer

from trajforge.cli.common import EXIT_PARTIAL, err, out, print_json
from trajforge.errors import UsageError
from trajforge.registry import HARNESSES, SANDBOXES, create
from trajforge.taskdir import is_task_dir

harness_app = typer.Typer(
    help="Coding-agent CLIs (pi, opencode, hermes) at their pinned versions.",
    no_args_is_help=True,
)


def _step(argv: list[str]) -> dict[str, Any]:
    err.print(f"[bold]$[/bold] {' '.join(argv)}")
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"command": argv, "ok": False, "detail": str(exc)}
    detail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    return {"command": argv, "ok": proc.returncode == 0, "detail": "\n".join(detail)}


def _install_steps(names: list[str], venv: Path) -> list[list[str]]:
    from trajforge.train.harnesses.hermes import PACKAGE as HERMES
    from trajforge.train.harnesses.opencode import PACKAGE as OPENCODE
    from trajforge.train.harnesses.pi import PACKAGE as PI

    npm = [pkg for name, pkg in (("pi", PI), ("opencode", OPENCODE)) if name in names]
    steps: list[list[str]] = []
    if npm:
        if shutil.which("npm") is None:
            raise UsageError("npm not found: install Node.js (>= 20) and npm first")
        steps.append(["npm", "install", "-g", *npm])
    if "hermes" in names:
        if not (venv / "bin" / "python").exists():
            steps.append([sys.executable, "-m", "venv", str(venv)])
        steps.append([str(venv / "bin" / "pip"), "install", "-q", HERMES])
    return steps


def install(
    only: list[str] = typer.Option(
        [], "--only", help="Harness to install (repeatable; default: all)."
    ),
    venv: Path | None = typer.Option(
        None, "--hermes-venv", help="hermes venv (default: ~/.cache/trajforge/hermes-venv)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Install the pinned harness CLIs: pi and opencode via npm, hermes into its own venv."""
    from trajforge.train.harnesses.hermes import default_venv

    names = only or sorted(HARNESSES)
    unknown = [n for n in names if n not in HARNESSES]
    if unknown:
        raise UsageError(f"--only {unknown[0]!r}: known harnesses: {', '.join(sorted(HARNESSES))}")
    target = venv or default_venv()
    target.parent.mkdir(parents=True, exist_ok=True)
    steps = [_step(argv) for argv in _install_steps(names, target)]
    versions = _versions(names, target if venv else None)
    doc = {"steps": steps, "versions": versions, "hermes_venv": str(target)}
    failed = [s for s in steps if not s["ok"]]
    if as_json:
        print_json(doc)
    else:
        for name, version in versions.items():
            out.print(f"{name}: {version or '[red]not installed[/red]'}")
        for step in failed:
            out.print(f"[red]failed[/red] {' '.join(step['command'])}: {step['detail']}")
    if failed:
        raise typer.Exit(EXIT_PARTIAL)


def _versions(names: list[str], venv: Path | None) -> dict[str, str | None]:
    if venv is not None:
        os.environ["TRAJFORGE_HERMES_VENV"] = str(venv)
    return {name: create(HARNESSES, name, "harness").version() for name in names}


def list_cmd(as_json: bool = typer.Option(False, "--json", help="Print as JSON.")) -> None:
    """Installed version of each harness (null when not installed)."""
    versions = _versions(sorted(HARNESSES), None)
    if as_json:
        print_json(versions)
        return
    for name, version in versions.items():
        out.print(f"{name}: {version or '[red]not installed[/red]'}")


def replay(
    task_dir: Path = typer.Argument(..., help="An accepted task folder (OUT/tasks/<id>)."),
    harness: str = typer.Option(..., "--harness", help="pi, opencode or hermes."),
    policy: str = typer.Option(
        "replay",
        "--policy",
        help="replay: the recorded episode; cheat: the cheating script; give_up: answer at once.",
    ),
    session: Path | None = typer.Option(
        None, "--session", help="Source session file (default: the task's source.path)."
    ),
    max_steps: int = typer.Option(50, "--max-steps", help="Step budget (tool-call turns)."),
    timeout: float = typer.Option(120.0, "--timeout", help="Wall-clock budget in seconds."),
    keep: Path | None = typer.Option(
        None, "--keep", help="Keep the run (workspace, session log) in this new folder."
    ),
    backend: str = typer.Option("local", "--sandbox", help="Verifier sandbox: local or docker."),
    on_host: bool | None = typer.Option(
        None,
        "--harness-on-host/--harness-in-sandbox",
        help="Where the harness process runs (default: the local sandbox when usable, "
        "else the host).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Replay a task's recorded episode through a real harness behind the guard; print reward."""
    from trajforge.train.replay import POLICIES, Budget, replay_task
    from trajforge.train.rollout_spec import placement_of, setup_for

    if policy not in POLICIES:
        raise UsageError(f"--policy {policy!r}: expected one of {', '.join(POLICIES)}")
    if not is_task_dir(task_dir):
        raise UsageError(f"{task_dir}: no task.json (expected a folder OUT/tasks/<id>)")
    if keep is not None and keep.exists():
        raise UsageError(f"--keep {keep}: already exists; give a new folder")
    if max_steps < 1 or timeout <= 0:
        raise UsageError("--max-steps must be >= 1 and --timeout > 0")
    sandbox = create(SANDBOXES, backend, "sandbox")
    budget = Budget(max_steps=max_steps, timeout_s=timeout)
    setup = setup_for(harness, sandbox, budget, placement_of(on_host))
    result = replay_task(setup, task_dir, policy, session, keep)
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        _print(result.model_dump(mode="json"))
    if result.status != "ok":
        raise typer.Exit(EXIT_PARTIAL)


def _print(doc: dict[str, Any]) -> None:
    colour = "green" if doc["status"] == "ok" else "red"
    out.print(
        f"[{colour}]{doc['status']}[/{colour}] {doc['task']} via {doc['harness']} "
        f"{doc['harness_version']}: reward {_reward(doc['reward'])}"
    )
    out.print(
        f"  guard: {doc['guard_calls']} calls, {len(doc['blocks'])} blocked; "
        f"session log: {doc['session_tool_calls']} tool calls; wall {doc['wall_s']:.1f}s"
    )
    where = f"{doc['harness_sandbox']} sandbox" if doc["harness_sandbox"] else "host"
    revision = (doc["harness_revision"] or "none seen")[:16]
    out.print(f"  harness ran on: {where}; harness revision {revision}")
    for block in doc["blocks"]:
        out.print(f"  [red]blocked[/red] {block['tool']}: {block['rule']} ({block['reason']})")
    for reason in doc["reasons"]:
        out.print(f"  {reason}")
    if doc["status"] == "error" and doc["stderr_tail"]:
        out.print(doc["stderr_tail"])


def _reward(value: float | None) -> str:
    return "unscored" if value is None else f"{value:.2f}"


def register(app: typer.Typer) -> None:
    harness_app.command("install")(install)
    harness_app.command("list")(list_cmd)
    app.add_typer(harness_app, name="harness")
    app.command("replay")(replay)
