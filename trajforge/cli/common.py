"""Output helpers shared by CLI commands: results on stdout, progress and logs on stderr."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

import orjson
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

out = Console(soft_wrap=True, highlight=False)
err = Console(stderr=True, soft_wrap=True, highlight=False)

T = TypeVar("T")

EXIT_OK = 0
EXIT_PARTIAL = 1
EXIT_UNUSABLE = 2


def print_json(data: Any) -> None:
    """Write one JSON document to stdout."""
    sys.stdout.write(orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n")
    sys.stdout.flush()


def progress(items: Iterable[T], total: int | None, label: str, quiet: bool = False) -> Iterator[T]:
    """Iterate with a rich progress bar on stderr (hidden when ``quiet`` or not a terminal)."""
    if quiet:
        yield from items
        return
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
