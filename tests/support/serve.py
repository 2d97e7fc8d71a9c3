"""Start ``trajforge serve`` as a real process and wait for its ready line (shared by tests)."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
READY_TIMEOUT_S = 300


def serve_argv(*args: str, verbose: bool = False) -> list[str]:
    """The command line of ``trajforge [-v] serve ARGS``."""
    return [sys.executable, "-m", "trajforge.cli.main", *(["-v"] if verbose else []), "serve",
            *args]  # fmt: skip


def start_serve(
    env: dict[str, str], log: Path, *args: str, verbose: bool = False
) -> subprocess.Popen[str]:
    """``trajforge serve ARGS`` in the background: stdout piped, stderr to ``log``."""
    with log.open("w") as err:  # the child keeps its own copy of the descriptor
        return subprocess.Popen(
            serve_argv(*args, verbose=verbose), stdout=subprocess.PIPE, stderr=err, text=True,
            cwd=REPO, env=env,
        )  # fmt: skip


def ready_line(proc: subprocess.Popen[str], log: Path) -> dict[str, Any]:
    """The server's JSON ready line (a dead or silent server fails the test with its log)."""
    assert proc.stdout is not None
    readable, _, _ = select.select([proc.stdout], [], [], READY_TIMEOUT_S)
    line = proc.stdout.readline() if readable else ""
    if not line:
        proc.kill()
        pytest.fail(f"trajforge serve did not start: {log.read_text()[-2000:]}")
    ready: dict[str, Any] = json.loads(line)
    return ready


@contextmanager
def serving(
    env: dict[str, str], log: Path, *args: str, verbose: bool = False
) -> Iterator[dict[str, Any]]:
    """A running ``trajforge serve ARGS --json``; yields its ready line, stops it after."""
    proc = start_serve(env, log, *args, "--json", verbose=verbose)
    try:
        yield ready_line(proc, log)
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=30)
