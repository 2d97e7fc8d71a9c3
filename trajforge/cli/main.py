"""Entry point: ``trajforge``. Each command lives in its own module and registers here."""

from __future__ import annotations

import logging
import sys

import typer

from trajforge import __version__
from trajforge.cli.common import EXIT_UNUSABLE, err
from trajforge.errors import TrajforgeError

app = typer.Typer(
    name="trajforge",
    help="Turn coding-agent trajectories into verifiable RL tasks.",
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


def _register() -> None:
    from trajforge.cli import (
        dataenv_cmd,
        demo_cmd,
        eval_cmd,
        guard_cmd,
        harness_cmd,
        reconstruct_cmd,
        sandbox_cmd,
        serve_cmd,
        split_cmd,
        train_cmd,
        validate_cmd,
    )

    for module in (
        reconstruct_cmd,
        validate_cmd,
        dataenv_cmd,
        split_cmd,
        guard_cmd,
        harness_cmd,
        train_cmd,
        serve_cmd,
        eval_cmd,
        sandbox_cmd,
        demo_cmd,
    ):
        module.register(app)


def main() -> None:
    """Run the CLI; trajforge errors become one line on stderr and exit code 2."""
    _register()
    try:
        rc = app(standalone_mode=False)
    except TrajforgeError as exc:
        err.print(f"[red]error:[/red] {exc}")
        sys.exit(EXIT_UNUSABLE)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        err.print("[red]aborted[/red]")
        sys.exit(130)
    except typer.TyperException as exc:  # usage errors (bad option, missing argument)
        exc.show(file=sys.stderr)  # type: ignore[attr-defined]
        sys.exit(EXIT_UNUSABLE)
    sys.exit(rc if isinstance(rc, int) else 0)


if __name__ == "__main__":
    main()
