"""The docker sandbox backend: one locked-down container per session, commands by exec.

The container (image from ``trajforge sandbox build-image``) has no network, a read-only
root, tmpfs ``/workspace`` and ``/tmp`` capped at ``Limits.disk_mb``, memory/pids/CPU limits,
no capabilities and ``no-new-privileges``. Its main process (``sleep infinity`` under
docker's init, which reaps orphans) runs as a capability-less root the sandboxed code cannot
signal; every command runs as a per-session unprivileged uid (not the shared 65534, so one
session's RLIMIT_NPROC count never starves another's), and killing "every process of that
uid" after each run (timeouts, daemons left behind) never touches the container itself.
Each run is a single exec of the stdlib helper ``docker_inside.py`` (command, limits,
cleanup and workspace hashes in one round trip). The workspace goes in and out as tar
archives through exec (``put_archive`` cannot write to a read-only root's tmpfs); the host's
copy is never touched. Containers carry a ``trajforge.sandbox=1`` label plus their owner
``host:pid``; orphans of dead owners are reaped when a process opens its first session.
"""

from __future__ import annotations

import logging
import secrets
import signal
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn

from trajforge.closing import Closing
from trajforge.errors import SandboxError
from trajforge.protocols import EnvironmentFolder, Limits, Mounted, RunResult
from trajforge.verifiers.sandbox import docker_exec as dx
from trajforge.verifiers.sandbox.common import (
    SAFE_PATH,
    Snapshot,
    clean_env,
    diff_snapshots,
    normalize_argv,
)
from trajforge.verifiers.sandbox.image import IMAGE_TAG, image_state

log = logging.getLogger(__name__)


HOME = "/tmp/home"
PIDS_HEADROOM = 16
"""pids above ``Limits.pids`` kept free for the helper execs that clean up after a fork bomb."""
WATCHDOG_GRACE_S = 5.0
"""The host kills the command this long after the in-container timeout should have."""
CLIENT_TIMEOUT_S = 120
_PIDS_MARKERS = ("Cannot fork", "fork: Resource temporarily unavailable", "BlockingIOError")
"""stderr of a command whose forks the process cap refused (dash, bash, Python)."""


def _client() -> Any:
    import docker

    return docker.from_env(timeout=CLIENT_TIMEOUT_S)


class DockerSandbox:
    """Sandbox backend on a Docker engine (``docker`` SDK, engine found via ``DOCKER_HOST``)."""

    name = "docker"

    def __init__(self, image: str = IMAGE_TAG, cpus: float = 1.0) -> None:
        self.image = image
        self.cpus = cpus

    def with_environment(self, env: EnvironmentFolder) -> Mounted:
        """An image holding the folder (built once per environment hash), on as many CPUs."""
        from trajforge.verifiers.environments.image import ENV_ROOT, env_image

        tag, paths = env_image(env)
        return Mounted(DockerSandbox(image=tag, cpus=self.cpus), ENV_ROOT, paths, tag)

    def available(self) -> str | None:
        try:
            import docker
        except ImportError:
            return "the docker Python SDK is not installed; `pip install docker`"
        try:
            client = docker.from_env(timeout=10)
            client.ping()
        except docker.errors.DockerException as exc:
            return f"the Docker engine is unreachable ({exc}); start dockerd or set DOCKER_HOST"
        try:
            return self._image_problem(client)
        finally:
            client.close()

    def _image_problem(self, client: Any) -> str | None:
        import docker.errors

        if self.image == IMAGE_TAG:
            return image_state(client)
        try:
            client.images.get(self.image)
        except docker.errors.ImageNotFound:
            return f"image {self.image} is missing"
        return None

    def session(self, workspace: Path, limits: Limits | None = None) -> DockerSession:
        workspace = Path(workspace)
        if not workspace.is_dir():
            raise SandboxError(f"workspace {workspace} is not a directory")
        reason = self.available()
        if reason is not None:
            raise SandboxError(f"docker sandbox unavailable: {reason}")
        client = _client()
        _reap_once(client)
        session = DockerSession(client, self.image, limits or Limits(), self.cpus)
        try:
            session.start(workspace)
        except BaseException:
            session.close()
            raise
        return session


def container_config(image: str, limits: Limits, uid: int, cpus: float) -> dict[str, Any]:
    """Keyword arguments for ``containers.create``: every limit the container enforces."""
    from docker.types import Ulimit

    disk = f"size={limits.disk_mb}m,exec,nosuid,nodev"
    fsize = limits.file_size_mb << 20
    return {
        "image": image,
        "command": ["sleep", "infinity"],
        "init": True,
        "user": "0:0",
        "read_only": True,
        "network_mode": "none",
        "tmpfs": {
            dx.WORKSPACE: f"{disk},uid={uid},gid={uid},mode=0755",
            "/tmp": f"{disk},mode=1777",
        },
        "mem_limit": f"{limits.memory_mb}m",
        "memswap_limit": f"{limits.memory_mb}m",
        "pids_limit": limits.pids + PIDS_HEADROOM,
        "nano_cpus": int(cpus * 1e9),
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "ulimits": [
            Ulimit(name="core", soft=0, hard=0),
            Ulimit(name="fsize", soft=fsize, hard=fsize),
        ],
        "labels": {dx.LABEL: "1", dx.OWNER_LABEL: dx.owner_label()},
        "hostname": "sandbox",
        "environment": {"HOME": HOME},
    }


class DockerSession(Closing):
    """A live container holding one workspace; see :class:`trajforge.protocols.SandboxSession`."""

    def __init__(self, client: Any, image: str, limits: Limits, cpus: float) -> None:
        self.client = client
        self.api = client.api
        self.image = image
        self.limits = limits
        self.cpus = cpus
        self.uid = 100_000 + secrets.randbelow(900_000)
        self.container_id: str | None = None
        self.workspace: Path | None = None
        self._before = Snapshot({})
        self._closed = False

    @property
    def user(self) -> str:
        return f"{self.uid}:{self.uid}"

    def start(self, workspace: Path) -> None:
        """Create and start the container and load ``workspace`` into it."""
        import docker.errors

        self.workspace = workspace
        config = container_config(self.image, self.limits, self.uid, self.cpus)
        try:
            container = self.client.containers.create(**config)
            self.container_id = container.id
            container.start()
        except docker.errors.DockerException as exc:
            raise SandboxError(f"could not start a sandbox container: {exc}") from None
        log.debug("sandbox container %s started (uid %d)", container.short_id, self.uid)
        self._load(workspace)

    def _load(self, workspace: Path) -> None:
        with tempfile.SpooledTemporaryFile(max_size=64 << 20) as spool:
            snap = dx.workspace_tar(workspace, self.uid, spool)
            spool.seek(0)
            dx.exec_with_stdin(self.api, self._cid(), dx.helper_argv("load"), self.user, spool)
        self._before = snap

    def _cid(self) -> str:
        if self._closed or self.container_id is None:
            raise SandboxError("the docker sandbox session is closed")
        return self.container_id

    # --- running -------------------------------------------------------------------------

    def run(
        self,
        command: Sequence[str] | str,
        *,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> RunResult:
        argv = normalize_argv(command)
        limit = self.limits.timeout_s if timeout is None else timeout
        nonce = dx.new_nonce()
        limits = self.limits
        args = [nonce, repr(limit), str(limits.cpu_s), str(limits.file_size_mb << 20)]
        args += [str(limits.pids), HOME, *argv]
        environment = clean_env(HOME, env, SAFE_PATH)
        exec_id = self.api.exec_create(
            self._cid(),
            dx.helper_argv("run", *args),
            user=self.user,
            workdir=dx.WORKSPACE,
            environment=environment,
        )["Id"]
        began = time.monotonic()
        output, watchdog = self._stream(exec_id, nonce, limit)
        wall = time.monotonic() - began
        report = output.finish() or self._recover(exec_id)
        return self._result(argv, output, report, wall, watchdog.is_set())

    def _stream(
        self, exec_id: str, nonce: str, limit: float
    ) -> tuple[dx.ExecOutput, threading.Event]:
        fired = threading.Event()

        def kill() -> None:
            fired.set()
            self._kill_all()

        output = dx.ExecOutput(
            nonce.encode(), self.limits.output_bytes, lambda: self._kill_in_thread()
        )
        timer = threading.Timer(limit + WATCHDOG_GRACE_S, kill)
        timer.daemon = True
        timer.start()
        try:
            for out, err in self.api.exec_start(exec_id, stream=True, demux=True):
                output.feed(out, err)
        finally:
            timer.cancel()
        return output, fired

    def _kill_in_thread(self) -> None:
        threading.Thread(target=self._kill_all, daemon=True).start()

    def _kill_all(self) -> None:
        """Kill every process of the sandbox uid; restart the container if even that fails."""
        import docker.errors

        try:
            nonce = dx.new_nonce()
            dx.read_report(self.api, self._cid(), self.user, dx.helper_argv("kill", nonce), nonce)
        except (SandboxError, docker.errors.DockerException) as exc:
            log.warning("sandbox cleanup exec failed (%s); killing container", exc)
            self.api.kill(self._cid())

    def _recover(self, exec_id: str) -> dict[str, Any]:
        """The runner died before reporting (it was killed): clean up and hash from outside."""
        import docker.errors

        code = self.api.exec_inspect(exec_id).get("ExitCode")
        log.warning("sandbox runner exited %s without a report; cleaning up", code)
        nonce = dx.new_nonce()
        try:
            report = dx.read_report(
                self.api, self._cid(), self.user, dx.helper_argv("kill", nonce), nonce
            )
        except (SandboxError, docker.errors.DockerException) as exc:
            self._broken(f"the sandbox could not be cleaned up after the runner died: {exc}")
        signal_code = -(code - 128) if isinstance(code, int) and code > 128 else code
        return {**report, "exit_code": signal_code, "runner_died": True}

    def _broken(self, why: str) -> NoReturn:
        self.close()
        raise SandboxError(why)

    def _result(
        self,
        argv: tuple[str, ...],
        output: dx.ExecOutput,
        report: dict[str, Any],
        wall: float,
        watchdog: bool,
    ) -> RunResult:
        after = dx.snapshot_from_report(report.get("files", {}))
        changes = diff_snapshots(self._before, after)
        self._before = after
        timed_out = bool(report.get("timed_out")) or watchdog
        stderr = output.stderr.text()
        return RunResult(
            backend="docker",
            command=argv,
            exit_code=report.get("exit_code"),
            stdout=output.stdout.text(),
            stderr=stderr,
            truncated=output.stdout.truncated or output.stderr.truncated,
            timed_out=timed_out,
            killed=_killed(report, output.flooded, timed_out, self.limits, stderr),
            wall_s=float(report.get("wall_s", wall)),
            cpu_s=float(report.get("cpu_s", 0.0)),
            max_rss_kb=int(report.get("max_rss_kb", 0)),
            files=changes,
        )

    # --- workspace -----------------------------------------------------------------------

    def reset(self, workspace: Path | None = None) -> None:
        target = Path(workspace) if workspace is not None else self.workspace
        if target is None:
            raise SandboxError("no workspace to reset to")
        self._load(target)
        self.workspace = target

    def copy_out(self, dest: Path) -> None:
        dest = Path(dest)
        if dest.exists():
            raise SandboxError(f"copy_out destination {dest} already exists")
        exec_id = self.api.exec_create(
            self._cid(), ["tar", "-c", "-C", dx.WORKSPACE, "."], user=self.user
        )["Id"]
        dest.mkdir(parents=True)
        stream = self.api.exec_start(exec_id, stream=True, demux=True)
        errors = dx.untar_into(stream, dest)
        code = self.api.exec_inspect(exec_id)["ExitCode"]
        if code != 0:
            raise SandboxError(f"copying the workspace out failed ({code}): {errors.strip()}")

    # --- teardown ------------------------------------------------------------------------

    def close(self) -> None:
        import docker.errors

        if self._closed:
            return
        self._closed = True
        try:
            if self.container_id is not None:
                self.api.remove_container(self.container_id, force=True, v=True)
        except docker.errors.NotFound:
            log.debug("sandbox container %s was already gone", self.container_id)
        except docker.errors.DockerException as exc:
            log.error("could not remove sandbox container %s: %s", self.container_id, exc)
        finally:
            self.client.close()


def _killed(
    report: dict[str, Any], flooded: bool, timed_out: bool, limits: Limits, stderr: str
) -> Any:
    """Which limit ended the command, from the runner's report and the host's own view."""
    events = report.get("events", {})
    code = report.get("exit_code")
    if timed_out:
        return "timeout"
    if flooded:
        return "output"
    if events.get("oom_kill", 0) > 0 and code == -signal.SIGKILL:
        return "memory"
    if code == -signal.SIGXCPU or (
        code == -signal.SIGKILL and float(report.get("cpu_s", 0)) >= limits.cpu_s - 0.5
    ):
        return "cpu"
    # Forks refused, or processes still filling the uid's cap when the command ended.
    if (
        events.get("pids_max", 0) > 0
        or int(report.get("leftover", 0)) >= limits.pids - 2
        or any(marker in stderr for marker in _PIDS_MARKERS)
    ):
        return "pids"
    return None


_reaped = threading.Event()


def _reap_once(client: Any) -> None:
    """Remove orphaned sandbox containers, once per process (a crashed run leaves them)."""
    import docker.errors

    if _reaped.is_set():
        return
    _reaped.set()
    try:
        removed = dx.reap_leftovers(client)
    except docker.errors.DockerException as exc:
        log.warning("could not reap leftover sandbox containers: %s", exc)
        return
    if removed:
        log.warning("removed %d leftover sandbox container(s)", len(removed))
