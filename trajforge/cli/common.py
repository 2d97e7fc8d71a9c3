"""Output helpers shared by CLI commands: results on stdout, progress and logs on stderr."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import orjson
from rich.console import Console

from trajforge.cli.exits import EXIT_OK as EXIT_OK
from trajforge.cli.exits import EXIT_PARTIAL as EXIT_PARTIAL
from trajforge.cli.exits import EXIT_UNUSABLE as EXIT_UNUSABLE

out = Console(soft_wrap=True, highlight=False)
err = Console(stderr=True, soft_wrap=True, highlight=False)

T = TypeVar("T")


def print_json(data: Any) -> None:
    """Write one JSON document to stdout."""
    option = orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS  # enum keys (statuses) as their value
    sys.stdout.write(orjson.dumps(data, option=option).decode() + "\n")
    sys.stdout.flush()


def progress(items: Iterable[T], total: int | None, label: str, quiet: bool = False) -> Iterator[T]:
    """Iterate with a rich progress bar on stderr (hidden when ``quiet`` or not a terminal:
    a transient bar still leaves an empty line in a log)."""
    if quiet or not err.is_terminal:
        yield from items
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(label, total=total)
        for item in items:
            yield item
            bar.advance(task)


class Stages:
    """One progress line on stderr as each stage of a multi-stage command starts
    (``[3/9] validate: ...``), and how long each took."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = tuple(names)
        self.seconds: dict[str, float] = {}
        """Wall-clock seconds per finished stage, in the order they ran."""

    @contextmanager
    def run(self, name: str, what: str) -> Iterator[None]:
        """Announce stage ``name`` (doing ``what``) and time it."""
        err.print(f"[{self.names.index(name) + 1}/{len(self.names)}] {name}: {what}", markup=False)
        start = time.monotonic()
        try:
            yield
        finally:
            self.seconds[name] = round(time.monotonic() - start, 1)

    def timing(self) -> str:
        """``142 s (reconstruct 0.4 s, validate 61 s, ...)``."""
        parts = ", ".join(f"{name} {_secs(s)}" for name, s in self.seconds.items())
        return f"{sum(self.seconds.values()):.0f} s ({parts})"


def _secs(seconds: float) -> str:
    return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
