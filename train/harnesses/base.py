"""Shared helpers of the harness runners: where the process runs, a killable subprocess.

A harness (``pi.py``, ``opencode.py``, ``hermes.py``; the seam is
:class:`trajforge.protocols.Harness`) writes its config under the run folder, starts its CLI and
collects the session log through a :class:`~trajforge.protocols.Runner`: :class:`HostRunner`
(a temp folder on the host, the workspace beside it) or ``sandboxed.SandboxRunner`` (the same
layout inside the local sandbox, the model endpoint reached through a bridge). The runner maps
paths: ``root`` / ``workspace`` are what the harness sees, ``host_root`` / ``host_workspace``
where the host finds the files after a run.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path

from trajforge.protocols import ProcessResult
from trajforge.scrub import Scrubber

TAIL_CHARS = 2000
Action = tuple[str, ...]
"""("read", path) | ("write", path, content) | ("edit", path, old, new) | ("shell", command)."""


class HostRunner:
    """The harness on the host: run folder ``root``, workspace ``root/workspace``."""

    where: str | None = None

    def __init__(self, root: Path, workspace: Path) -> None:
        self.root = self.host_root = root
        self.workspace = self.host_workspace = workspace

    def connect(self, url: str) -> str:
        return url

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def env(self, extra: dict[str, str], inherit: bool = True) -> dict[str, str]:
        if inherit:
            return isolated_env(self.root, extra)
        (self.root / "home").mkdir(parents=True, exist_ok=True)
        return {"HOME": str(self.root / "home"), **extra}

    def run(
        self, argv: list[str], env: dict[str, str], timeout_s: float, stdin: str = ""
    ) -> ProcessResult:
        return run_process(argv, self.workspace, env, timeout_s, stdin or None)

    def fetch(self, rel: str) -> Path | None:
        path = self.root / rel
        return path if path.exists() else None


def run_process(
    argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float, stdin: str | None = None
) -> ProcessResult:
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
        return ProcessResult(exit_code=None, timed_out=True, stdout=out, stderr=err)
    return ProcessResult(exit_code=proc.returncode, timed_out=False, stdout=out, stderr=err)


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
    """First line printed by ``argv`` (a ``--version`` call), or None when it cannot run.

    Asked once per process and executable: the answer is cached under ``argv`` and the
    resolved executable's path and mtime (a reinstall in place is asked again); a failure is
    not cached (``trajforge harness install`` may fix it).
    """
    key = _executable_key(argv)
    if key is None:
        return None
    with _VERSIONS_LOCK:
        known = _VERSIONS.get(key)
    if known is not None:
        return known
    found = _ask_version(argv)
    if found is not None:
        with _VERSIONS_LOCK:
            _VERSIONS[key] = found
    return found


_VERSIONS: dict[tuple[tuple[str, ...], str, int], str] = {}
"""(argv, resolved executable, its mtime) → the version it printed."""
_VERSIONS_LOCK = threading.Lock()


def _executable_key(argv: list[str]) -> tuple[tuple[str, ...], str, int] | None:
    """The cache key of a version call; None when its executable is not there."""
    found = shutil.which(argv[0])
    if found is None:
        return None
    exe = Path(found).resolve()
    try:
        return tuple(argv), str(exe), exe.stat().st_mtime_ns
    except OSError:
        return None


def _ask_version(argv: list[str]) -> str | None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (proc.stdout or proc.stderr).strip()
    return text.splitlines()[0].strip() if proc.returncode == 0 and text else None


UNEXPOSABLE = ("/tmp/", "/proc/", "/sys/", "/dev/")
"""Host folders a local sandbox cannot show (it has its own /tmp)."""


def node_cli_paths(binary: str, needs_node: bool = True) -> tuple[list[Path], str | None]:
    """Install prefixes of an npm CLI (and of node) to show inside a sandbox, or why not."""
    found: list[Path] = []
    for name in (binary, "node") if needs_node else (binary,):
        where = shutil.which(name)
        if where is None:
            return [], f"{name} is not on PATH"
        for path in (Path(where), Path(where).resolve()):
            prefix = path.parent.parent
            if str(prefix).startswith(UNEXPOSABLE) or prefix == Path("/tmp"):
                return [], f"{name} lives under {prefix}, which the local sandbox cannot show"
            found.append(prefix)
    return list(dict.fromkeys(found)), None


def node_path(binary: str, path: str) -> str:
    """``path`` with the folders of ``binary`` and ``node`` in front (deduplicated)."""
    dirs = [str(Path(w).parent) for w in (shutil.which(binary), shutil.which("node")) if w]
    return ":".join(dict.fromkeys([*dirs, *path.split(":")]))
