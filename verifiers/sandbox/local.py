"""The ``local`` sandbox backend: Linux namespaces, rlimits, no daemon.

A session starts one holder process (``_holder.py``) that owns a private mount namespace
with a pivoted, mostly read-only root and an empty network namespace. Each run enters those
namespaces with ``nsenter``, gets a fresh PID namespace (so every process it leaves behind
dies with it) and drops to a session-private uid with ``setpriv``; ``prlimit`` applies the
rlimits. See ``docs/sandbox.md`` for exactly what is and is not isolated.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Literal

import psutil

from trajforge.closing import Closing
from trajforge.errors import SandboxError, SandboxTimeout
from trajforge.protocols import EnvironmentFolder, Limits, Mounted, RunResult
from trajforge.verifiers.sandbox.common import (
    SAFE_PATH,
    Snapshot,
    capture_output,
    clean_env,
    clear_dir,
    copy_workspace,
    diff_snapshots,
    normalize_argv,
    snapshot,
)

log = logging.getLogger(__name__)

HOLDER = Path(__file__).with_name("_holder.py")
TOOLS = ("nsenter", "unshare", "setpriv", "prlimit", "perl")
SANDBOX_HOME = "/home/sandbox"
START_TIMEOUT_S = 20.0
UID_RANGE = (2_000_000, 2_000_000_000)
MEMORY_MARKERS = ("MemoryError", "Cannot allocate memory", "std::bad_alloc", "out of memory")
Killed = Literal["timeout", "memory", "cpu", "output", "pids"] | None
INIT = r"""
my $fd = shift @ARGV;
open(my $st, ">&=", $fd) or die "trajforge-init: status fd $fd: $!\n";
my $pid = fork() // die "trajforge-init: fork: $!\n";
if ($pid == 0) {
    close($st);
    exec { $ARGV[0] } @ARGV;
    print STDERR "trajforge-init: cannot run $ARGV[0]: $!\n";
    exit 127;
}
my $status = 0;
while ((my $w = waitpid(-1, 0)) > 0) { if ($w == $pid) { $status = $?; last; } }
syswrite($st, "$status\n");
exit(($status & 127) ? 128 + ($status & 127) : $status >> 8);
"""
"""PID 1 of each run's PID namespace: runs the command as its child (so it keeps normal
signal semantics), reaps orphans and reports the raw wait status on a pipe."""
PACKAGE_DIRS = ("site-packages", "dist-packages")
_PIDS_MARKERS = ("fork: Resource temporarily unavailable", "fork: retry", "BlockingIOError")


def _interpreter_paths() -> list[str]:
    """Host directories that hold the running Python and its packages (exposed read-only
    inside): its prefixes, and every package folder on its path, which a ``.pth`` file or a
    parent virtual environment may have put outside them."""
    paths = {sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parent.parent)}
    paths.update(p for p in sys.path if Path(p).name in PACKAGE_DIRS and Path(p).is_dir())
    return sorted(str(Path(p).resolve()) for p in paths)


def _sandbox_path() -> str:
    dirs = [str(Path(sys.executable).parent), str(Path(sys.prefix) / "bin"), *SAFE_PATH.split(":")]
    return ":".join(dict.fromkeys(dirs))


@lru_cache(maxsize=1)
def _probe() -> str | None:
    """Start and stop one throwaway session; the reason it failed, or None."""
    with tempfile.TemporaryDirectory(prefix="trajforge-probe-") as tmp:
        try:
            LocalSession(Path(tmp), Limits(disk_mb=16), ()).close()
        except SandboxError as exc:
            return f"the local sandbox cannot start here: {exc}"
    return None


class LocalSandbox:
    """Namespaces + rlimits on this machine; needs Linux, root and util-linux."""

    name = "local"
    image = "host"

    def __init__(self, expose: Sequence[Path] = ()) -> None:
        self.expose = tuple(str(Path(p).resolve()) for p in expose)
        """Extra host directories under /root, /home or /tmp to show read-only inside."""

    def available(self) -> str | None:
        if not sys.platform.startswith("linux"):
            return "the local sandbox needs Linux namespaces; use --backend docker elsewhere"
        if os.geteuid() != 0:
            return (
                "the local sandbox needs root (it mounts a private root and switches to a "
                "private uid); run as root or use --backend docker"
            )
        missing = [tool for tool in TOOLS if shutil.which(tool) is None]
        if missing:
            return f"missing {', '.join(missing)}; install util-linux"
        return _probe()

    def session(self, workspace: Path, limits: Limits | None = None) -> LocalSession:
        reason = self.available()
        if reason is not None:
            raise SandboxError(reason)
        return LocalSession(Path(workspace), limits or Limits(), self.expose)

    def with_environment(self, env: EnvironmentFolder) -> Mounted:
        """The folder exposed read-only where it is on the host."""
        shown = LocalSandbox(expose=(*(Path(p) for p in self.expose), env.folder))
        return Mounted(shown, str(env.folder), (), str(env.folder))


class LocalSession(Closing):
    """One live local sandbox: a holder process and its workspace on a capped tmpfs."""

    def __init__(self, workspace: Path, limits: Limits, expose: Sequence[str]) -> None:
        if not workspace.is_dir():
            raise SandboxError(f"workspace {workspace} is not a directory")
        self.limits = limits
        self.uid = UID_RANGE[0] + secrets.randbelow(UID_RANGE[1] - UID_RANGE[0])
        self._dir = Path(tempfile.mkdtemp(prefix="trajforge-sbx-"))
        self._holder: subprocess.Popen[bytes] | None = None
        self._snap = Snapshot({})
        self._source = workspace
        self.dropped_symlinks: list[str] = []
        """Symlinks of the last copied-in workspace that pointed outside it (not copied)."""
        shown = [*_interpreter_paths(), *expose]
        self._kept_in_tmp = tuple(p.removeprefix("/tmp/") for p in shown if p.startswith("/tmp/"))
        """Exposed host folders bound inside the sandbox's /tmp (kept when /tmp is cleared)."""
        try:
            self._start(shown)
            self.reset(workspace)
        except BaseException:
            self.close()
            raise

    # --- lifecycle -------------------------------------------------------------------

    def _start(self, expose: list[str]) -> None:
        config = [str(self._dir), str(self.uid), str(self.limits.disk_mb), *expose]
        self._holder = subprocess.Popen(
            [sys.executable, "-I", "-S", str(HOLDER), *config],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self._holder.stdout is not None
        ready, _, _ = select.select([self._holder.stdout], [], [], START_TIMEOUT_S)
        if not ready:
            raise SandboxTimeout(f"sandbox holder did not start within {START_TIMEOUT_S:.0f} s")
        line = self._holder.stdout.readline().decode(errors="replace").strip()
        if line != "ready":
            self._holder.kill()
            stderr = self._holder.stderr.read() if self._holder.stderr else b""
            detail = line or stderr.decode(errors="replace").strip()
            raise SandboxError(f"sandbox setup failed: {detail or 'holder exited'}")
        log.debug("local sandbox holder %d ready (uid %d)", self._holder.pid, self.uid)

    @property
    def holder_pid(self) -> int:
        """PID of the process holding the namespaces (SandboxError once closed)."""
        if self._holder is None or self._holder.poll() is not None:
            raise SandboxError("the sandbox session is closed")
        return self._holder.pid

    @property
    def root(self) -> Path:
        """The sandbox's root directory as seen from the host."""
        return Path(f"/proc/{self.holder_pid}/root")

    @property
    def workspace(self) -> Path:
        """The live workspace (``/workspace`` inside) as seen from the host."""
        return self.root / "workspace"

    def reset(self, workspace: Path | None = None) -> None:
        source = Path(workspace) if workspace is not None else self._source
        if not source.is_dir():
            raise SandboxError(f"workspace {source} is not a directory")
        self._source = source
        root = self.root
        for name in ("workspace", "home/sandbox", "dev/shm"):
            clear_dir(root / name)
        clear_dir(root / "tmp", self._kept_in_tmp)
        report = copy_workspace(source, root / "workspace", owner=(self.uid, self.uid))
        self.dropped_symlinks = report.dropped_symlinks
        self._snap = snapshot(root / "workspace")

    def copy_out(self, dest: Path) -> None:
        dest = Path(dest)
        if dest.exists():
            raise SandboxError(f"copy_out destination {dest} already exists")
        dest.mkdir(parents=True)
        copy_workspace(self.workspace, dest, logical_root="/workspace")

    def close(self) -> None:
        holder, self._holder = self._holder, None
        if holder is not None:
            # The holder keeps no state worth a graceful stop: its namespaces and mounts
            # vanish with it, and every run's processes died with their PID namespace.
            holder.kill()
            holder.wait()
            for stream in (holder.stdin, holder.stdout, holder.stderr):
                if stream is not None:
                    stream.close()
        if self._dir.exists():
            try:
                self._dir.rmdir()
            except OSError as exc:
                log.warning("could not remove sandbox directory %s: %s", self._dir, exc)

    def __del__(self) -> None:
        if getattr(self, "_holder", None) is not None:
            self.close()

    # --- running ---------------------------------------------------------------------

    def _argv(self, argv: Sequence[str], status_fd: int) -> list[str]:
        lim, mib, uid = self.limits, 1 << 20, str(self.uid)
        return [
            "prlimit",
            f"--cpu={lim.cpu_s}:{lim.cpu_s + 1}",
            f"--as={lim.memory_mb * mib}",
            f"--nproc={lim.pids}",
            f"--fsize={lim.file_size_mb * mib}",
            "--core=0",
            "--",
            "nsenter",
            "-t",
            str(self.holder_pid),
            "-m",
            "-n",
            "-r",
            "-w",
            "--",
            "unshare",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount-proc",
            "--",
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--no-new-privs",
            "--bounding-set=-all",
            "--inh-caps=-all",
            "--",
            "perl",
            "-e",
            INIT,
            "--",
            str(status_fd),
            *argv,
        ]

    def _env(self, extra: Mapping[str, str] | None) -> dict[str, str]:
        env = clean_env(SANDBOX_HOME, extra, path=_sandbox_path())
        env.update({"TMPDIR": "/tmp", "USER": "sandbox", "LOGNAME": "sandbox"})
        # Under RLIMIT_AS, the worker thread esbuild's sync API starts in Node (tsx, vite)
        # dies with "Failed to reserve virtual memory for CodeRange" on every cold cache, and
        # each run's /tmp is fresh; esbuild then uses a child process instead.
        env.setdefault("ESBUILD_WORKER_THREADS", "0")
        return env

    def run(
        self,
        command: Sequence[str] | str,
        *,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> RunResult:
        argv = normalize_argv(command)
        limit = self.limits.timeout_s if timeout is None else timeout
        before = self._snap
        start = time.monotonic()
        status_r, status_w = os.pipe()
        try:
            proc = subprocess.Popen(
                self._argv(argv, status_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self._env(env),
                start_new_session=True,
                pass_fds=(status_w,),
            )
        except OSError as exc:
            os.close(status_r)
            raise SandboxError(f"could not start the sandboxed command: {exc}") from exc
        finally:
            os.close(status_w)
        assert proc.stdout is not None and proc.stderr is not None
        with proc.stdout, proc.stderr:
            captured = capture_output(
                proc.stdout,
                proc.stderr,
                cap=self.limits.output_bytes,
                deadline=start + limit,
                kill=lambda: _kill_tree(proc.pid),
            )
        timed_out, status, usage = _wait(proc, start + limit)
        proc.returncode = _command_exit(status_r, status)
        wall = time.monotonic() - start
        self._snap = snapshot(self.workspace, previous=before)
        stderr = captured.stderr.text()
        cpu = usage.ru_utime + usage.ru_stime
        timed_out = captured.timed_out or timed_out
        return RunResult(
            backend="local",
            command=argv,
            exit_code=proc.returncode,
            stdout=captured.stdout.text(),
            stderr=stderr,
            truncated=captured.truncated,
            timed_out=timed_out,
            killed=self._killed(timed_out, captured.output_killed, proc.returncode, cpu, stderr),
            wall_s=round(wall, 6),
            cpu_s=round(cpu, 6),
            max_rss_kb=int(usage.ru_maxrss),
            files=diff_snapshots(before, self._snap),
        )

    def _killed(self, timed_out: bool, output: bool, code: int, cpu: float, stderr: str) -> Killed:
        if timed_out:
            return "timeout"
        if output:
            return "output"
        if code == -signal.SIGXCPU or (code == -signal.SIGKILL and cpu >= self.limits.cpu_s):
            return "cpu"
        if code != 0 and any(marker in stderr for marker in MEMORY_MARKERS):
            return "memory"
        if code != 0 and any(marker in stderr for marker in _PIDS_MARKERS):
            return "pids"
        return None


def _kill_tree(pid: int) -> None:
    """SIGKILL the process group and every descendant (the PID namespace's init included)."""
    try:
        children = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        children = []
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    for child in children:
        try:
            child.kill()
        except psutil.NoSuchProcess:
            continue


def _wait(
    proc: subprocess.Popen[bytes], deadline: float
) -> tuple[bool, int, resource.struct_rusage]:
    """Reap ``proc`` (killing it at ``deadline``): (timed out, wait status, rusage)."""
    timed_out = False
    pidfd = os.pidfd_open(proc.pid)
    try:
        while True:
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([pidfd], [], [], max(remaining, 0))
            if ready:
                break
            timed_out = True
            _kill_tree(proc.pid)
            deadline = time.monotonic() + 5
    finally:
        os.close(pidfd)
    _, status, usage = os.wait4(proc.pid, 0)
    return timed_out, status, usage


def _command_exit(status_r: int, outer_status: int) -> int:
    """The command's exit code as its init reported it, else the outer process's."""
    with os.fdopen(status_r, "rb") as fh:
        reported = fh.read().strip()
    if reported.isdigit():
        return os.waitstatus_to_exitcode(int(reported))
    return os.waitstatus_to_exitcode(outer_status)
