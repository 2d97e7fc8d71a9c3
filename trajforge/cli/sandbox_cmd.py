"""``trajforge sandbox``: run one command in a sandboxed copy of a workspace.

``sandbox_app`` is the ``sandbox`` sub-command group; other modules add their commands to
it (``build-image`` comes from the docker backend's CLI module) before :func:`register`
attaches it to the main app.
"""

from __future__ import annotations

import importlib
import logging
from pathlib import Path
from typing import Annotated

import typer

from trajforge.cli.common import out, print_json
from trajforge.errors import SandboxError, UsageError
from trajforge.protocols import Limits, RunResult, Sandbox
from trajforge.registry import SANDBOXES, create

log = logging.getLogger(__name__)

sandbox_app = typer.Typer(
    name="sandbox",
    help="Run commands in the sandbox (local namespaces or docker).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXTRA_COMMAND_MODULES = ("trajforge.cli.sandbox_image_cmd",)
"""Modules that add commands to ``sandbox_app`` when imported (optional; skipped if absent)."""

BACKEND_HELP = "|".join(SANDBOXES)
USAGE = "trajforge sandbox run [--backend local|docker] [--timeout S] [--json] WORKDIR -- CMD..."


@sandbox_app.command("run")
def run_command(
    workdir: Annotated[
        Path | None,
        typer.Argument(show_default=False, help="Workspace folder; copied in, never modified."),
    ] = None,
    command: Annotated[
        list[str] | None,
        typer.Argument(metavar="-- CMD...", show_default=False, help="Command and arguments."),
    ] = None,
    backend: Annotated[str, typer.Option("--backend", help=BACKEND_HELP)] = "local",
    timeout: Annotated[
        float | None, typer.Option("--timeout", min=0.1, help="Wall-clock seconds.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the RunResult as JSON.")] = False,
) -> None:
    """Run CMD in a fresh sandboxed copy of WORKDIR and print what it did.

    Exits 0 when the sandbox worked, whatever CMD's own exit code (printed); 2 on bad usage.
    """
    if workdir is None:
        raise UsageError(f"missing WORKDIR; usage: {USAGE}")
    if not command:
        raise UsageError(f"missing CMD; usage: {USAGE}")
    if not workdir.is_dir():
        raise UsageError(f"WORKDIR {workdir} is not a directory")
    result = run_once(backend, workdir, command, timeout)
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        print_result(result)


def run_once(backend: str, workdir: Path, command: list[str], timeout: float | None) -> RunResult:
    """One command in a fresh session of ``backend``."""
    sandbox: Sandbox = create(SANDBOXES, backend, "sandbox backend")
    reason = sandbox.available()
    if reason is not None:
        raise SandboxError(f"sandbox backend {backend!r} is not available: {reason}")
    limits = Limits() if timeout is None else Limits(timeout_s=timeout)
    with sandbox.session(workdir, limits) as session:
        return session.run(command)


def print_result(result: RunResult) -> None:
    """Human-readable summary, then the captured output (no rich markup applied to it)."""
    status = f"exit code: {result.exit_code}"
    if result.killed:
        status += f" (killed: {result.killed})"
    out.print(status, markup=False)
    out.print(
        f"wall: {result.wall_s:.3f} s   cpu: {result.cpu_s:.3f} s   "
        f"max rss: {result.max_rss_kb} KiB   truncated: {'yes' if result.truncated else 'no'}",
        markup=False,
    )
    files = result.files
    changed = [("+", files.added), ("~", files.modified), ("-", files.deleted)]
    count = sum(len(paths) for _, paths in changed)
    out.print(f"files changed: {count}", markup=False)
    for mark, paths in changed:
        for path in paths:
            out.print(f"  {mark} {path}", markup=False)
    for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        out.print(f"--- {name} ---", markup=False)
        if text:
            typer.echo(text, nl=not text.endswith("\n"))


def _load_extra_commands() -> None:
    for name in EXTRA_COMMAND_MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            log.debug("optional sandbox command module %s not present", name)


def register(app: typer.Typer) -> None:
    """Attach the ``sandbox`` group (with any extra commands) to the main app."""
    _load_extra_commands()
    app.add_typer(sandbox_app, name="sandbox")
