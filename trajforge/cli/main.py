"""Entry point: ``trajforge``. Each command lives in its own module, named in ``COMMANDS``."""

from __future__ import annotations

import atexit
import gc
import logging
import sys

import typer

from trajforge import __version__
from trajforge.cli.lazy import Lazy, LazyGroup
from trajforge.errors import TrajforgeError

# Every command, in the order `trajforge --help` lists them: name -> (module under
# trajforge.cli whose register(app) adds it, the first paragraph of its help). A new command is
# one entry here; its module is imported only when the command runs or its --help is asked for.
COMMANDS: dict[str, Lazy] = {
    "reconstruct": Lazy(
        ".reconstruct_cmd",
        "Parse sessions, replay their workspaces and write task candidates to OUT/tasks/.",
    ),
    "validate": Lazy(
        ".validate_cmd",
        "Run every candidate's control matrix; write evidence into task.json and OUT/report.*.",
    ),
    "verify": Lazy(
        ".validate_cmd", "Score one candidate solution against a task: reward and per-test results."
    ),
    "split": Lazy(
        ".split_cmd",
        "Dedup accepted tasks, hold out test tasks group-aware, write parquet + card + manifest.",
    ),
    "push": Lazy(
        ".split_cmd",
        "Publish a dataset folder as a revision of a Hub dataset or a local git repository.",
    ),
    "replay": Lazy(
        ".harness_cmd",
        "Replay a task's recorded episode through a real harness behind the guard; print reward.",
    ),
    "train": Lazy(
        ".train_cmd",
        "Train a rank-32 LoRA adapter with GRPO; the task's hidden verifier is the reward.",
    ),
    "serve": Lazy(
        ".serve_cmd",
        "Serve a policy on CPU with vLLM's OpenAI API (+ runtime LoRA with --enable-lora).",
    ),
    "eval": Lazy(
        ".eval_cmd",
        "Run k attempts per held-out task for both arms; write results.parquet and reports.",
    ),
    "demo": Lazy(
        ".demo_cmd",
        "Reconstruct the bundled sample sessions, then validate every task in the sandbox.",
    ),
    "dataenv": Lazy(
        ".dataenv_cmd",
        "Data-analysis tasks from CSV / parquet / JSON-lines tables (polars oracles).",
    ),
    "export": Lazy(".split_cmd", "Export tasks or sessions to other formats."),
    "guard": Lazy(".guard_cmd", "Deterministic tool-call guard: check, audit, serve."),
    "harness": Lazy(
        ".harness_cmd", "Coding-agent CLIs (pi, opencode, hermes) at their pinned versions."
    ),
    "env": Lazy(
        ".env_cmd",
        "Task environments (dependencies + toolchains), built once per hash and cached.",
    ),
    "sandbox": Lazy(".sandbox_cmd", "Run commands in the sandbox (local namespaces or docker)."),
}


class _Root(LazyGroup):
    registry = COMMANDS


app = typer.Typer(
    name="trajforge",
    help="Turn coding-agent trajectories into verifiable RL tasks.",
    cls=_Root,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"trajforge {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log debug messages to stderr."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version."
    ),
) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )


def main() -> None:
    """Run the CLI; trajforge errors become one line on stderr and exit code 2."""
    # At exit the interpreter's last collections walk every object the imports made (pydantic
    # schemas, typing objects): 30-40 ms of a 250 ms `guard check`. Freezing them first skips
    # that walk; atexit handlers and reference-counted cleanup still run, only the finalizers
    # of garbage cycles left at exit do not (which Python never promises at exit).
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    try:
        rc = app(standalone_mode=False)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (TrajforgeError, typer.Abort, typer.TyperException, KeyboardInterrupt) as exc:
        sys.exit(_report(exc))
    sys.exit(rc if isinstance(rc, int) else 0)


def _report(exc: BaseException) -> int:
    """Say on stderr what ended the command; its exit code. The console is imported only here,
    when there is something to say."""
    from rich.markup import escape

    from trajforge.cli.common import EXIT_UNUSABLE, err

    if isinstance(exc, TrajforgeError):  # its text is ours to show as is: "[reconstruct] …"
        err.print(f"[red]error:[/red] {escape(str(exc))}")
        return EXIT_UNUSABLE
    if isinstance(exc, typer.TyperException):  # usage errors (bad option, missing argument)
        exc.show(file=sys.stderr)  # type: ignore[attr-defined]
        return EXIT_UNUSABLE
    err.print("[red]aborted[/red]")
    return 130


if __name__ == "__main__":
    main()
