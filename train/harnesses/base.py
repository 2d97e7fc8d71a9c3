"""Shared helpers of the harness runners: where the process runs, a killable subprocess.

A harness runner (``pi.py``, ``opencode.py``, ``hermes.py``) writes its config under the run
folder, starts its CLI and collects the session log through a :class:`Runner`:
:class:`HostRunner` (a temp folder on the host, the workspace beside it) or
``sandboxed.SandboxRunner`` (the same layout inside the local sandbox, the model endpoint
reached through a bridge). The runner maps paths: ``root`` / ``workspace`` are what the harness
sees, ``host_root`` / ``host_workspace`` where the host finds the files after a run.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from trajforge.protocols import HarnessRun
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


class Runner(Protocol):
    """Where one harness run happens: its folders, environment and processes."""

    where: str | None
    """None: on the host; else the sandbox backend (``local``)."""
    root: Path
    """Run folder as the harness sees it (``HOME`` is ``root/home``)."""
    workspace: Path
    """Workspace as the harness sees it (the processes' cwd)."""
    host_root: Path
    """Run folder on the host (where :meth:`fetch` puts files)."""
    host_workspace: Path
    """Workspace on the host (in sync with the harness's after every :meth:`run`)."""

    def write(self, rel: str, text: str) -> Path:
        """Write ``root/rel`` (parents created); its path as the harness sees it."""
        ...

    def env(self, extra: dict[str, str], inherit: bool = True) -> dict[str, str]:
        """Environment of a harness process: ``HOME=root/home`` plus ``extra``.

        ``inherit``: on the host, start from the current environment (secrets dropped);
        a sandbox never inherits.
        """
        ...

    def run(self, argv: list[str], env: dict[str, str], timeout_s: float, stdin: str = "") -> Proc:
        """Run ``argv`` in the workspace; the whole process tree is killed after ``timeout_s``."""
        ...

    def fetch(self, rel: str) -> Path | None:
        """``root/rel`` (file or folder) on the host, copied out when needed; None if missing."""
        ...


@runtime_checkable
class RunnableHarness(Protocol):
    """A harness runner that can run through any :class:`Runner` (host or sandbox)."""

    name: str

    def version(self) -> str | None: ...

    def tool_call(self, action: tuple[str, ...], workspace: Path) -> dict[str, Any]: ...

    def run_with(
        self, request: str, runner: Runner, base_url: str, api_key: str, timeout_s: float
    ) -> HarnessRun:
        """Run the harness on ``request`` through ``runner`` against ``base_url``."""
        ...

    def sandbox_paths(self) -> tuple[list[Path], str | None]:
        """(host folders the CLI needs inside a sandbox, why it cannot run there or None)."""
        ...


class HostRunner:
    """The harness on the host: run folder ``root``, workspace ``root/workspace``."""

    where: str | None = None

    def __init__(self, root: Path, workspace: Path) -> None:
        self.root = self.host_root = root
        self.workspace = self.host_workspace = workspace

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

    def run(self, argv: list[str], env: dict[str, str], timeout_s: float, stdin: str = "") -> Proc:
        return run_process(argv, self.workspace, env, timeout_s, stdin or None)

    def fetch(self, rel: str) -> Path | None:
        path = self.root / rel
        return path if path.exists() else None


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


class HostRunMixin:
    """``Harness.run`` for a :class:`RunnableHarness`: ``run_with`` a :class:`HostRunner` whose
    root is the workspace's parent folder."""

    def run_with(
        self, request: str, runner: Runner, base_url: str, api_key: str, timeout_s: float
    ) -> HarnessRun:
        raise NotImplementedError

    def run(
        self, request: str, workspace: Path, base_url: str, api_key: str, timeout_s: float
    ) -> HarnessRun:
        runner = HostRunner(workspace.parent, workspace)
        return self.run_with(request, runner, base_url, api_key, timeout_s)


def version_of(argv: list[str]) -> str | None:
    """First line printed by ``argv`` (a ``--version`` call), or None when it cannot run."""
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
