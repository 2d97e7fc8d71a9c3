"""Code that runs *inside* the docker sandbox container (stdlib only, Python 3.11).

``docker.py`` sends this file's source as ``python3 -I -S -c SOURCE MODE ARGS...`` in each
exec, so one exec does a whole job:

- ``run NONCE TIMEOUT CPU_S FSIZE NPROC HOME ARGV...``: run ARGV in its own session with hard
  rlimits and a wall-clock timeout, kill every process of the sandbox uid afterwards (daemons
  included), hash the workspace and write NONCE + a report (a Python literal) as the last
  bytes on stdout.
- ``kill NONCE``: kill every process of the sandbox uid but itself, then report like ``run``
  (used when the runner itself was killed, or by the host's watchdog).
- ``load``: kill everything, empty the workspace and unpack the tar arriving on stdin.

Per-run start-up cost matters (the docker backend promises ≤ 100 ms per reused run), so the
hot path imports only builtin modules: no json/re/enum/subprocess.
"""

from __future__ import annotations

import _signal
import os
import resource
import sys
import time
from collections.abc import Mapping

try:
    from _sha256 import sha256
except ImportError:  # pragma: no cover - Pythons built without the builtin module
    from hashlib import sha256

WORKSPACE = "/workspace"
CGROUP_FILES = {
    "oom_kill": ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"),
    "pids_max": ("/sys/fs/cgroup/pids/pids.events", "/sys/fs/cgroup/pids.events"),
}
SIGKILL = 9


class Timeout(Exception):
    pass


def counter(name: str) -> int:
    """A cgroup event counter (v1 or v2 layout); 0 when unreadable."""
    key = "oom_kill" if name == "oom_kill" else "max"
    for path in CGROUP_FILES[name]:
        try:
            with open(path) as fh:
                for line in fh:
                    parts = line.split()
                    if len(parts) == 2 and parts[0] == key:
                        return int(parts[1])
        except (OSError, ValueError):
            continue
    return 0


def live_others(me: int) -> int:
    """How many non-zombie processes of our uid other than ``me`` exist."""
    uid = str(os.getuid())
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/status") as fh:
                status = fh.read()
        except OSError:
            continue
        state = owner = ""
        for line in status.splitlines():
            if line.startswith("State:"):
                state = line.split()[1]
            elif line.startswith("Uid:"):
                owner = line.split()[1]
        if owner == uid and state != "Z":
            count += 1
    return count


def kill_all(budget_s: float = 3.0) -> tuple[bool, int]:
    """SIGKILL every process of this uid but ourselves until none is left (or the budget).

    Returns whether that worked and how many processes the first sweep found still alive
    (a fork bomb leaves the process table of its uid full).
    """
    me = os.getpid()
    end = time.monotonic() + budget_s
    found = -1
    while time.monotonic() < end:
        try:
            os.kill(-1, SIGKILL)
        except ProcessLookupError:
            return True, max(found, 0)
        alive = live_others(me)
        found = alive if found < 0 else found
        if not alive:
            return True, found
        time.sleep(0.002)
    return False, found


def hash_workspace() -> dict[str, tuple[str, int]]:
    """Relative path → (sha256, size) for files and symlinks, without following links."""
    files: dict[str, tuple[str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(WORKSPACE):
        names = filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in names:
            full = os.path.join(dirpath, name)
            files[os.path.relpath(full, WORKSPACE)] = hash_entry(full)
    return files


def hash_entry(full: str) -> tuple[str, int]:
    try:
        if os.path.islink(full):
            target = os.readlink(full).encode("utf-8", "surrogateescape")
            return "link:" + sha256(target).hexdigest(), len(target)
        digest = sha256()
        size = 0
        with open(full, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
                size += len(chunk)
        return digest.hexdigest(), size
    except OSError as exc:
        return f"unreadable:{exc.errno}", 0


def child(argv: list[str], limits: list[int], error_fd: int) -> None:
    """In the forked child: new session, hard rlimits, exec; report exec errors on a pipe."""
    try:
        os.setsid()
        os.chdir(WORKSPACE)
        for kind, value in zip(
            (resource.RLIMIT_CPU, resource.RLIMIT_FSIZE, resource.RLIMIT_NPROC),
            limits,
            strict=True,
        ):
            hard = resource.getrlimit(kind)[1]
            if hard != resource.RLIM_INFINITY:
                value = min(value, hard)
            resource.setrlimit(kind, (value, value))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.execvp(argv[0], argv)
    except OSError as exc:
        os.write(error_fd, f"{exc.errno}:{exc.strerror}".encode())
    finally:
        os._exit(127)


def _alarm(signum: int, frame: object) -> None:
    raise Timeout()


def wait_child(pid: int, timeout: float) -> tuple[int, bool]:
    """The child's wait status, and whether the timeout struck (everything then killed)."""
    _signal.signal(_signal.SIGALRM, _alarm)
    _signal.setitimer(_signal.ITIMER_REAL, max(timeout, 0.001))
    try:
        _, status, _ = os.wait4(pid, 0)
        _signal.setitimer(_signal.ITIMER_REAL, 0)
        return status, False
    except Timeout:
        kill_all()
        try:
            _, status, _ = os.wait4(pid, 0)
        except ChildProcessError:  # reaped just before the alarm fired
            status = SIGKILL
        return status, True


def start(argv: list[str], limits: list[int]) -> tuple[int | None, str]:
    """Fork and exec; (pid, "") or (None, why it could not start)."""
    read_fd, write_fd = os.pipe()
    try:
        pid = os.fork()
    except OSError as exc:
        return None, f"fork failed: {exc.strerror}"
    if pid == 0:
        os.close(read_fd)
        child(argv, limits, write_fd)
    os.close(write_fd)
    error = os.read(read_fd, 4096).decode(errors="replace")
    os.close(read_fd)
    if error:
        os.waitpid(pid, 0)
        return None, error.split(":", 1)[-1]
    return pid, ""


def run(args: list[str]) -> None:
    nonce, timeout, cpu_s, fsize, nproc, home, *argv = args
    before = {name: counter(name) for name in CGROUP_FILES}
    os.makedirs(home, exist_ok=True)
    began = time.monotonic()
    pid, error = start(argv, [int(cpu_s), int(fsize), int(nproc)])
    code: int | None = None
    timed_out = False
    if pid is None:
        sys.stderr.write(f"sandbox: cannot run {argv[0]!r}: {error}\n")
    else:
        status, timed_out = wait_child(pid, float(timeout))
        code = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - began
    cleaned, leftover = kill_all()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = {
        "exit_code": code,
        "timed_out": timed_out,
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "max_rss_kb": usage.ru_maxrss,
        "events": {name: counter(name) - before[name] for name in CGROUP_FILES},
        "cleaned": cleaned,
        "leftover": leftover,
        "files": hash_workspace(),
    }
    emit(nonce, report)


def emit(nonce: str, report: Mapping[str, object]) -> None:
    sys.stderr.flush()
    sys.stdout.flush()
    data = memoryview(nonce.encode() + repr(report).encode())
    while data:
        data = data[os.write(1, data) :]


def load() -> None:
    import shutil
    import tarfile

    kill_all()
    for entry in os.scandir(WORKSPACE):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)
    # The archive is the host's own (trusted); bookworm's 3.11.2 predates extraction filters.
    with tarfile.open(fileobj=sys.stdin.buffer, mode="r|") as archive:
        archive.extractall(WORKSPACE)


def main(argv: list[str]) -> int:
    mode = argv[1] if len(argv) > 1 else ""
    if mode == "run":
        run(argv[2:])
    elif mode == "kill":
        cleaned, leftover = kill_all()
        emit(argv[2], {"cleaned": cleaned, "leftover": leftover, "files": hash_workspace()})
    elif mode == "load":
        load()
    else:
        sys.stderr.write(f"unknown mode {mode!r}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
