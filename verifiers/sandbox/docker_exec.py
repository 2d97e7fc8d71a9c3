"""Exec plumbing for the docker backend: the in-container helper, archives, output, leftovers.

Each sandbox operation is one ``docker exec`` of ``python3 -I -S -c <docker_inside.py> MODE``;
its stdout ends with a random nonce followed by a report (a Python literal, parsed with
``ast.literal_eval``: the helper avoids importing json to start faster), split off here.
"""

from __future__ import annotations

import ast
import logging
import os
import secrets
import socket
import stat
import tarfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from trajforge.errors import SandboxError
from trajforge.verifiers.sandbox.common import (
    OUTPUT_KILL_FACTOR,
    CappedBuffer,
    FileStat,
    Snapshot,
    link_stays_inside,
)

log = logging.getLogger(__name__)

INSIDE_SOURCE = (Path(__file__).parent / "docker_inside.py").read_text(encoding="utf-8")
WORKSPACE = "/workspace"
LABEL = "trajforge.sandbox"
OWNER_LABEL = "trajforge.sandbox.owner"
REPORT_LIMIT = 256 << 20
"""Largest report accepted after the nonce (file hashes of a huge workspace)."""


def helper_argv(mode: str, *args: str) -> list[str]:
    """argv running the in-container helper in ``mode``."""
    return ["python3", "-I", "-S", "-c", INSIDE_SOURCE, mode, *args]


def new_nonce() -> str:
    return f"\n@@trajforge-report-{secrets.token_hex(16)}@@"


def snapshot_from_report(files: dict[str, list[Any]]) -> Snapshot:
    return Snapshot({rel: FileStat(str(entry[0]), int(entry[1])) for rel, entry in files.items()})


# --- workspace in ----------------------------------------------------------------------


def workspace_tar(root: Path, uid: int, sink: IO[bytes]) -> Snapshot:
    """Write ``root`` as a tar owned by ``uid`` into ``sink``; returns its snapshot.

    Symlinks leaving the workspace are dropped with a warning, as the local backend does;
    sockets, fifos and devices are skipped.
    """
    if not root.is_dir():
        raise SandboxError(f"workspace {root} is not a directory")
    logical_root = str(root.resolve())
    files: dict[str, FileStat] = {}
    with tarfile.open(fileobj=sink, mode="w|", format=tarfile.PAX_FORMAT) as archive:
        for rel, full in _walk(root):
            member = _member(archive, rel, full, uid, logical_root)
            if member is None:
                continue
            if member.isreg():
                with open(full, "rb") as fh:
                    digest = _HashingReader(fh)
                    archive.addfile(member, digest)
                files[rel] = FileStat(digest.hexdigest(), member.size)
            else:
                archive.addfile(member)
                if member.issym():
                    files[rel] = _link_stat(member.linkname)
    return Snapshot(files)


def _walk(root: Path) -> Iterator[tuple[str, str]]:
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        for name in [*sorted(dirnames), *sorted(filenames)]:
            full = os.path.join(dirpath, name)
            yield os.path.relpath(full, root), full


def _member(
    archive: tarfile.TarFile, rel: str, full: str, uid: int, logical_root: str
) -> tarfile.TarInfo | None:
    st = os.lstat(full)
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        log.warning("not copying %s into the sandbox: not a file, directory or symlink", rel)
        return None
    member = archive.gettarinfo(full, arcname=rel)
    member.uid = member.gid = uid
    member.uname = member.gname = ""
    if member.isdir():
        member.mode |= 0o700
    if member.issym():
        target = member.linkname
        if not link_stays_inside(rel, target, logical_root):
            log.warning("not copying symlink %s -> %s: points outside the workspace", rel, target)
            return None
        if os.path.isabs(target):
            inside = os.path.relpath(os.path.normpath(target), logical_root)
            member.linkname = os.path.relpath(inside, os.path.dirname(rel) or ".")
    return member


def _link_stat(target: str) -> FileStat:
    import hashlib

    raw = target.encode("utf-8", "surrogateescape")
    return FileStat("link:" + hashlib.sha256(raw).hexdigest(), len(raw))


class _HashingReader:
    """A file wrapper hashing what tarfile reads from it."""

    def __init__(self, fh: IO[bytes]) -> None:
        import hashlib

        self._fh = fh
        self._digest = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        chunk = self._fh.read(size)
        self._digest.update(chunk)
        return chunk

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


def exec_with_stdin(api: Any, container: str, argv: list[str], user: str, data: IO[bytes]) -> None:
    """Run ``argv`` in the container feeding ``data`` on stdin; raise on a non-zero exit."""
    exec_id = api.exec_create(container, argv, stdin=True, user=user, workdir=WORKSPACE)["Id"]
    conn = api.exec_start(exec_id, socket=True)
    raw = getattr(conn, "_sock", conn)
    from docker.utils.socket import consume_socket_output, frames_iter

    err: bytes | None = b""
    try:
        try:
            for chunk in iter(lambda: data.read(1 << 20), b""):
                raw.sendall(chunk)
            raw.shutdown(socket.SHUT_WR)
        except OSError as exc:  # the helper died early (e.g. the workspace is too big)
            err = f"{exc.strerror}; ".encode()
        try:
            err = (err or b"") + (consume_socket_output(frames_iter(conn, False), True)[1] or b"")
        except OSError as exc:
            log.debug("reading the load helper's output failed: %s", exc)
    finally:
        conn.close()
    code = api.exec_inspect(exec_id)["ExitCode"]
    if code != 0:
        text = (err or b"").decode("utf-8", "replace").strip()[-2000:]
        raise SandboxError(
            f"loading the workspace into the container failed (exit {code}): {text} "
            "(is the workspace bigger than Limits.disk_mb?)"
        )


# --- output ----------------------------------------------------------------------------


@dataclass
class ExecOutput:
    """stdout/stderr of one exec, capped, with the helper's report split off stdout."""

    nonce: bytes
    cap: int
    on_flood: Callable[[], None]
    stdout: CappedBuffer = field(init=False)
    stderr: CappedBuffer = field(init=False)
    report_bytes: bytearray | None = None
    flooded: bool = False
    _pending: bytes = b""

    def __post_init__(self) -> None:
        self.stdout = CappedBuffer(self.cap)
        self.stderr = CappedBuffer(self.cap)

    def feed(self, out: bytes | None, err: bytes | None) -> None:
        if err:
            self._feed_buffer(self.stderr, err)
        if out:
            self._feed_stdout(out)

    def _feed_stdout(self, chunk: bytes) -> None:
        if self.report_bytes is not None:
            if len(self.report_bytes) + len(chunk) > REPORT_LIMIT:
                raise SandboxError("sandbox report too large")
            self.report_bytes += chunk
            return
        data = self._pending + chunk
        at = data.find(self.nonce)
        if at >= 0:
            self._feed_buffer(self.stdout, data[:at])
            self.report_bytes = bytearray(data[at + len(self.nonce) :])
            self._pending = b""
            return
        keep = len(self.nonce) - 1
        self._feed_buffer(self.stdout, data[:-keep] if len(data) > keep else b"")
        self._pending = data[-keep:] if len(data) > keep else data

    def _feed_buffer(self, buf: CappedBuffer, chunk: bytes) -> None:
        buf.feed(chunk)
        if buf.seen > max(self.cap, 1) * OUTPUT_KILL_FACTOR and not self.flooded:
            self.flooded = True
            self.on_flood()

    def finish(self) -> dict[str, Any] | None:
        """Flush held-back bytes; the parsed report, or None when the helper wrote none."""
        if self._pending:
            self.stdout.feed(self._pending)
            self._pending = b""
        if self.report_bytes is None:
            return None
        try:
            report = ast.literal_eval(bytes(self.report_bytes).decode("utf-8", "replace"))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            log.warning("sandbox report is not a Python literal; ignoring it")
            return None
        return report if isinstance(report, dict) else None


def read_report(api: Any, container: str, user: str, argv: list[str], nonce: str) -> dict[str, Any]:
    """Run a helper exec that only reports; its parsed report."""
    exec_id = api.exec_create(container, argv, user=user, workdir=WORKSPACE)["Id"]
    output = ExecOutput(nonce.encode(), 1 << 16, lambda: None)
    for out, err in api.exec_start(exec_id, stream=True, demux=True):
        output.feed(out, err)
    report = output.finish()
    if report is None:
        text = output.stderr.text().strip()[-2000:]
        raise SandboxError(f"sandbox helper failed in container {container[:12]}: {text}")
    return report


def untar_into(stream: Iterator[tuple[bytes | None, bytes | None]], dest: Path) -> str:
    """Unpack a tar arriving as demuxed exec output into ``dest``; returns stderr text."""
    import tempfile

    errors = bytearray()
    with tempfile.TemporaryFile() as spool:
        for out, err in stream:
            if out:
                spool.write(out)
            if err and len(errors) < 65536:
                errors += err
        spool.seek(0)
        with tarfile.open(fileobj=spool, mode="r:") as archive:
            archive.extractall(dest, filter=_safe_member)
    return errors.decode("utf-8", "replace")


def _safe_member(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo | None:
    try:
        return tarfile.data_filter(member, path)
    except tarfile.FilterError as exc:
        log.warning("not copying %s out of the sandbox: %s", member.name, exc)
        return None


# --- leftovers -------------------------------------------------------------------------


def owner_label() -> str:
    """``host:pid`` of this process, so orphaned containers can be recognised."""
    return f"{socket.gethostname()}:{os.getpid()}"


def reap_leftovers(client: Any | None = None) -> list[str]:
    """Remove sandbox containers whose owning process on this host is gone; their ids.

    Containers owned by other hosts sharing the engine are left alone.
    """
    import docker
    import docker.errors

    client = client or docker.from_env()
    host = socket.gethostname()
    removed: list[str] = []
    for container in client.containers.list(all=True, filters={"label": f"{LABEL}=1"}):
        owner_host, _, pid = container.labels.get(OWNER_LABEL, ":").partition(":")
        if owner_host != host or not pid.isdigit() or _alive(int(pid)):
            continue
        try:
            container.remove(force=True)
            removed.append(container.id)
        except docker.errors.NotFound:
            continue
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
