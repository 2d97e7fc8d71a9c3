"""The harness process inside the local sandbox, with one way out: the model endpoint.

:class:`SandboxRunner` starts a local sandbox session (``trajforge.verifiers.sandbox.local``:
own mount, PID and network namespaces, unprivileged uid, read-only host) on a copy of the run's
workspace, at ``/workspace`` inside. The run folder is ``/home/sandbox/run`` (HOME, config,
session dir) on the sandbox's tmpfs. The sandbox keeps its empty network namespace; the only
thing listening in it is a :class:`~trajforge.train.harnesses.bridge.NetnsBridge` on
``127.0.0.1:PORT`` that forwards to the guard proxy on the host, so every model call still
goes through the guard and nothing else leaves the sandbox.

After every process the sandbox's workspace is copied back over the host workspace (the
verifier scores that copy); :meth:`SandboxRunner.fetch` copies files of the run folder out.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from trajforge.closing import Closing
from trajforge.errors import SandboxError
from trajforge.protocols import Harness, Limits, ProcessResult
from trajforge.records import Budget
from trajforge.train.harnesses.bridge import NetnsBridge
from trajforge.verifiers.sandbox.common import copy_workspace
from trajforge.verifiers.sandbox.local import LocalSandbox, LocalSession

log = logging.getLogger(__name__)

WORKSPACE = Path("/workspace")
"""The workspace as a sandboxed harness sees it."""
RUN_ROOT = Path("/home/sandbox/run")
"""The run folder (HOME = ``home/`` under it) as a sandboxed harness sees it."""
STDIN_FILE = ".stdin"
MEMORY_MB = 65536
"""Address-space limit per process. Node and bun reserve large virtual ranges (WebAssembly
needs > 8 GiB of address space), so this is a guard rail, not a memory budget."""


def harness_limits(budget: Budget) -> Limits:
    """Limits of a harness process: the wall clock, processes and disk of the budget."""
    return Limits(
        timeout_s=budget.timeout_s,
        cpu_s=int(budget.timeout_s) * 16 + 60,
        memory_mb=MEMORY_MB,
        pids=budget.pids,
        disk_mb=budget.disk_mb,
        output_bytes=4_000_000,
    )


def sandbox_blocker(harness: Harness) -> str | None:
    """Why ``harness`` cannot run in the local sandbox here, or None when it can."""
    reason = LocalSandbox().available()
    if reason is not None:
        return reason
    return harness.sandbox_paths()[1]


class SandboxRunner(Closing):
    """A harness run inside one local sandbox session (see the module docstring)."""

    where: str | None = "local"
    root = RUN_ROOT
    workspace = WORKSPACE

    def __init__(
        self, host_root: Path, host_workspace: Path, budget: Budget, expose: Sequence[Path] = ()
    ) -> None:
        self.host_root = host_root
        self.host_workspace = host_workspace
        self.bridge: NetnsBridge | None = None
        self.session: LocalSession = LocalSandbox(expose).session(
            host_workspace, harness_limits(budget)
        )
        try:
            self._mkdir(self.root)
        except BaseException:
            self.session.close()
            raise

    def _host(self, inside: Path) -> Path:
        """A path inside the sandbox as the host reaches it (through the holder's root).

        Raises SandboxError when a component is a symlink: an absolute link made inside would
        resolve against the *host's* root here. Nothing runs in the sandbox between runs, so
        the check cannot race with the sandboxed code.
        """
        host = self.session.root
        for part in inside.relative_to("/").parts:
            host = host / part
            if host.is_symlink():
                raise SandboxError(f"{inside}: {host.name} is a symlink inside the sandbox")
        return host

    def _mkdir(self, inside: Path) -> None:
        """Create ``inside`` and its missing parents under the run folder, owned by the uid."""
        parts = inside.relative_to(self.root.parent).parts
        current = self.root.parent
        for part in parts:
            current = current / part
            host = self._host(current)
            if not host.is_dir():
                host.mkdir()
                os.chown(host, self.session.uid, self.session.uid, follow_symlinks=False)

    def connect(self, url: str) -> str:
        """Bridge to the host endpoint ``url`` (http://127.0.0.1:PORT/...); the URL inside."""
        parts = urlsplit(url)
        if parts.hostname is None or parts.port is None:
            raise SandboxError(f"cannot bridge to {url!r}: expected http://HOST:PORT/...")
        self.bridge = NetnsBridge(self.session.holder_pid, (parts.hostname, parts.port))
        return urlunsplit(parts._replace(netloc=f"127.0.0.1:{self.bridge.port}"))

    def write(self, rel: str, text: str) -> Path:
        inside = self.root / rel
        self._mkdir(inside.parent)
        host = self._host(inside)
        fd = os.open(host, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chown(host, self.session.uid, self.session.uid, follow_symlinks=False)
        return inside

    def env(self, extra: dict[str, str], inherit: bool = True) -> dict[str, str]:
        self._mkdir(self.root / "home")
        return {"HOME": str(self.root / "home"), "TMPDIR": "/tmp", **extra}

    def run(
        self, argv: list[str], env: dict[str, str], timeout_s: float, stdin: str = ""
    ) -> ProcessResult:
        self.write(STDIN_FILE, stdin)
        script = f'cd {shlex.quote(str(self.workspace))} && exec "$@" < {self.root / STDIN_FILE}'
        result = self.session.run(["sh", "-c", script, "sh", *argv], timeout=timeout_s, env=env)
        self._sync_workspace()
        exit_code = None if result.timed_out else result.exit_code
        return ProcessResult(
            exit_code=exit_code,
            timed_out=result.timed_out,
            stdout=result.stdout,
            stderr=result.stderr,
        )

    def _sync_workspace(self) -> None:
        """Replace the host workspace with the sandbox's (symlink-safe copy)."""
        fresh = self.host_workspace.with_name(self.host_workspace.name + ".sandbox-out")
        if fresh.exists():
            shutil.rmtree(fresh)
        self.session.copy_out(fresh)
        shutil.rmtree(self.host_workspace)
        fresh.rename(self.host_workspace)

    def fetch(self, rel: str) -> Path | None:
        try:
            source = self._host(self.root / rel)
        except SandboxError as exc:
            log.warning("not fetching %s: %s", rel, exc)
            return None
        dest = self.host_root / rel
        if source.is_symlink():
            return None
        if source.is_dir():
            if dest.exists():
                shutil.rmtree(dest)
            dest.mkdir(parents=True)
            copy_workspace(source, dest, logical_root=str(self.root / rel))
        elif source.is_file():
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, dest)
        else:
            return None
        return dest

    def close(self) -> None:
        """Stop the bridge and the sandbox (every process in it dies with it)."""
        if self.bridge is not None:
            self.bridge.close()
            self.bridge = None
        self.session.close()
