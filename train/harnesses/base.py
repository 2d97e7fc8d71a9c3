"""Shared helpers of the harness runners: a killable subprocess and an isolated environment."""

from __future__ import annotations

import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from trajforge.scrub import Scrubber

TAIL_CHARS = 2000
Action = tuple[str, ...]
"""("read", path) | ("write", path, content) | ("edit", path, old, new) | ("shell", command)."""


@dataclass(frozen=True)
class Proc:
    """Result of one harness process."""

    exit_code: int | None
    timed_out: bool
    stdout: str
    stderr: str


def run_process(
    argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float, stdin: str | None = None
) -> Proc:
    """Run ``argv`` in its own process group; kill the whole group after ``timeout_s``."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(stdin, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return Proc(None, True, out, err)
    return Proc(proc.returncode, False, out, err)


def isolated_env(root: Path, extra: dict[str, str]) -> dict[str, str]:
    """The current environment with HOME under ``root``, secrets dropped, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not _secret_name(k)}
    env["HOME"] = str(root / "home")
    (root / "home").mkdir(parents=True, exist_ok=True)
    env.update(extra)
    return env


def _secret_name(name: str) -> bool:
    upper = name.upper()
    return any(word in upper for word in ("TOKEN", "SECRET", "API_KEY", "PASSWORD"))


def tail(text: str) -> str:
    """The scrubbed last characters of a process output."""
    return Scrubber().text(text[-TAIL_CHARS:])


def absolute(workspace: Path, path: str) -> str:
    """``path`` (relative to the workspace) as an absolute path inside it."""
    return str(workspace / path) if not os.path.isabs(path) else path


def version_of(argv: list[str]) -> str | None:
    """First line printed by ``argv`` (a ``--version`` call), or None when it cannot run."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (proc.stdout or proc.stderr).strip()
    return text.splitlines()[0].strip() if proc.returncode == 0 and text else None
