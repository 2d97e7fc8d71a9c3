"""A root command group that imports a subcommand's module only when that subcommand runs.

``trajforge --help`` lists every command from a registry of name → (module, one-line help)
without importing any command module; ``trajforge guard check`` imports ``guard_cmd`` alone.
Each module keeps its ``register(app)`` function and its commands keep their docstrings and
options: loading a module registers it on a scratch ``typer.Typer`` and takes the click
commands typer builds from it, so ``trajforge <cmd> --help`` is what it was.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, NamedTuple

import typer
from typer.core import TyperCommand, TyperGroup
from typer.main import get_group


class Lazy(NamedTuple):
    """Where a command lives and what ``trajforge --help`` says about it."""

    module: str
    """Module whose ``register(app: typer.Typer)`` adds the command: ``.guard_cmd`` (relative
    to ``trajforge.cli``) or a full dotted path."""
    summary: str
    """The first paragraph of the command's help, shown in the root listing (a test checks it
    matches the command's own help)."""


class _Placeholder(TyperCommand):
    """Stands for a command whose module is not imported yet; only ever listed, never run."""


def load_module(module: str) -> dict[str, Any]:
    """The click commands (and groups) ``module.register`` adds, by name."""
    scratch = typer.Typer()
    importlib.import_module(module, package="trajforge.cli").register(scratch)
    return dict(get_group(scratch).commands)


class LazyGroup(TyperGroup):
    """Root group: placeholders for every registered command, swapped for the real command the
    first time one is resolved (to run it or to show its own help)."""

    registry: Mapping[str, Lazy] = {}
    """Commands by name, in listing order; a subclass sets it (``registry = COMMANDS``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._listing = False
        for name, entry in self.registry.items():
            self.commands.setdefault(name, _Placeholder(name=name, help=entry.summary))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = self.commands.get(cmd_name)
        if isinstance(command, _Placeholder) and not self._listing:
            command = self.load(cmd_name)
        return command

    def load(self, cmd_name: str) -> Any:
        """Import the module of ``cmd_name`` and put every command it registers in place."""
        module = self.registry[cmd_name].module
        for name, command in load_module(module).items():
            if name in self.commands and not isinstance(self.commands[name], _Placeholder):
                continue
            self.commands[name] = command
        command = self.commands[cmd_name]
        if isinstance(command, _Placeholder):
            raise RuntimeError(f"{module}.register() did not add the command {cmd_name!r}")
        return command

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """List commands from their placeholders: the root help imports no command module."""
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False
