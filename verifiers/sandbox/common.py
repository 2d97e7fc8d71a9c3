"""Helpers every sandbox backend shares.

Workspace snapshots and their diff (:class:`FileChanges`), the clean environment with its
secret deny-list, argv normalisation, output capping and a symlink-safe workspace copy.
Nothing here starts a sandbox; ``local.py`` and ``docker.py`` build on these.
"""

from __future__ import annotations

import fnmatch
import hashlib
import logging
import os
import posixpath
import selectors
import shutil
import stat
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from trajforge.errors import SandboxError
from trajforge.protocols import FileChanges

log = logging.getLogger(__name__)

SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""PATH inside a sandbox unless the backend prepends its interpreter's bin directory."""

SECRET_ENV_PATTERNS: tuple[str, ...] = (
    "HF_TOKEN",
    "HUGGING_FACE_HUB_TOKEN",
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "AWS_*",
    "GOOGLE_*",
    "AZURE_*",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "*_TOKEN",
    "*_KEY",
    "*_SECRET",
    "*PASSWORD*",
    "*CREDENTIAL*",
)
"""Environment names (fnmatch, case-insensitive) never passed into a sandbox, even as extras."""

OUTPUT_KILL_FACTOR = 10

KILL_GRACE_S = 5.0
"""How long :func:`capture_output` keeps reading after it asked for the kill."""
"""A command that writes more than this many times ``output_bytes`` on one stream is killed."""


def is_secret_env(name: str) -> bool:
    """True when ``name`` matches :data:`SECRET_ENV_PATTERNS`."""
    upper = name.upper()
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in SECRET_ENV_PATTERNS)


def clean_env(
    home: str, extra: Mapping[str, str] | None = None, path: str = SAFE_PATH
) -> dict[str, str]:
    """The whole environment of a sandboxed command: an allow-list plus non-secret extras."""
    env = {
        "PATH": path,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": home,
        "TERM": "dumb",
    }
    for name, value in (extra or {}).items():
        if is_secret_env(name):
            log.info("dropping secret-looking variable %s from the sandbox environment", name)
            continue
        env[name] = value
    return env


def normalize_argv(command: Sequence[str] | str) -> tuple[str, ...]:
    """A string runs through ``sh -c``; a sequence is the argv itself (must not be empty)."""
    if isinstance(command, str):
        if not command.strip():
            raise SandboxError("empty command")
        return ("sh", "-c", command)
    argv = tuple(str(part) for part in command)
    if not argv:
        raise SandboxError("empty command")
    return argv


# --- snapshots -------------------------------------------------------------------------


@dataclass(frozen=True)
class FileStat:
    """One workspace entry: content hash and size (symlinks hash their target)."""

    sha256: str
    size: int
    mtime_ns: int = 0
    ino: int = 0


@dataclass(frozen=True)
class Snapshot:
    """Relative path → :class:`FileStat` for every file and symlink under a root."""

    files: dict[str, FileStat]
    taken_ns: int = 0


RACY_NS = 50_000_000
"""Files modified this close to the previous snapshot are re-hashed (git's racy-clean rule)."""


def _hash_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _stat_entry(full: str, st: os.stat_result, previous: FileStat | None, cutoff: int) -> FileStat:
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(full).encode("utf-8", "surrogateescape")
        return FileStat("link:" + hashlib.sha256(target).hexdigest(), len(target))
    if (
        previous is not None
        and previous.size == st.st_size
        and previous.mtime_ns == st.st_mtime_ns
        and previous.ino == st.st_ino
        and st.st_mtime_ns < cutoff
    ):
        return previous
    return FileStat(_hash_file(full), st.st_size, st.st_mtime_ns, st.st_ino)


def snapshot(root: Path, previous: Snapshot | None = None) -> Snapshot:
    """Hash every regular file and symlink under ``root`` without following symlinks.

    Hashes from ``previous`` are reused for files whose size, mtime and inode are unchanged
    and that were not modified just before ``previous`` was taken.
    """
    taken = time.time_ns()
    old = previous.files if previous else {}
    cutoff = (previous.taken_ns - RACY_NS) if previous else 0
    files: dict[str, FileStat] = {}
    base = str(root)
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        rel_dir = os.path.relpath(dirpath, base)
        names = list(filenames)
        names += [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]
        for name in names:
            full = os.path.join(dirpath, name)
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            try:
                st = os.lstat(full)
                if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                    files[rel] = _stat_entry(full, st, old.get(rel), cutoff)
            except OSError as exc:  # vanished or unreadable mid-walk
                log.debug("snapshot skipped %s: %s", full, exc)
    return Snapshot(files, taken)


def diff_snapshots(before: Snapshot, after: Snapshot) -> FileChanges:
    """Added, modified and deleted paths between two snapshots, each sorted."""
    old, new = before.files, after.files
    added = sorted(p for p in new if p not in old)
    deleted = sorted(p for p in old if p not in new)
    modified = sorted(p for p in new if p in old and new[p].sha256 != old[p].sha256)
    return FileChanges(added=tuple(added), modified=tuple(modified), deleted=tuple(deleted))


# --- copying ---------------------------------------------------------------------------


@dataclass
class CopyReport:
    """What :func:`copy_workspace` did not copy, and why."""

    files: int = 0
    dropped_symlinks: list[str] = field(default_factory=list)
    """Relative paths of symlinks pointing outside the workspace (not copied)."""
    skipped: list[str] = field(default_factory=list)
    """Relative paths of sockets, fifos and devices (not copied)."""


def link_stays_inside(rel_link: str, target: str, logical_root: str) -> bool:
    """True when a symlink at ``rel_link`` with ``target`` resolves inside the root.

    Resolution is purely textual (``..`` and absolute paths against ``logical_root``), so
    chains of links are each checked on their own when they are copied.
    """
    if posixpath.isabs(target):
        root = posixpath.normpath(logical_root)
        resolved = posixpath.normpath(target)
        return resolved == root or resolved.startswith(root.rstrip("/") + "/")
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel_link), target))
    return joined != ".." and not joined.startswith("../") and not posixpath.isabs(joined)


def _relative_target(rel_link: str, target: str, logical_root: str) -> str:
    """An in-workspace absolute link target rewritten relative to the link."""
    if not posixpath.isabs(target):
        return target
    inside = posixpath.relpath(posixpath.normpath(target), posixpath.normpath(logical_root))
    return posixpath.relpath(inside, posixpath.dirname(rel_link) or ".")


def _chown(path: str, owner: tuple[int, int] | None) -> None:
    if owner is not None:
        os.lchown(path, owner[0], owner[1])


def _copy_entry(src: str, dst: str, rel: str, ctx: _CopyContext) -> None:
    st = os.lstat(src)
    if stat.S_ISLNK(st.st_mode):
        target = os.readlink(src)
        if not link_stays_inside(rel, target, ctx.logical_root):
            ctx.report.dropped_symlinks.append(rel)
            log.warning("not copying symlink %s -> %s: points outside the workspace", rel, target)
            return
        os.symlink(_relative_target(rel, target, ctx.logical_root), dst)
    elif stat.S_ISREG(st.st_mode):
        shutil.copyfile(src, dst, follow_symlinks=False)
        os.chmod(dst, stat.S_IMODE(st.st_mode))
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
        ctx.report.files += 1
    elif stat.S_ISDIR(st.st_mode):
        os.mkdir(dst, 0o755)
        _copy_tree(src, dst, rel, ctx)
        os.chmod(dst, stat.S_IMODE(st.st_mode) | 0o700)
    else:
        ctx.report.skipped.append(rel)
        return
    _chown(dst, ctx.owner)


@dataclass
class _CopyContext:
    logical_root: str
    owner: tuple[int, int] | None
    report: CopyReport


def _copy_tree(src_dir: str, dst_dir: str, rel_dir: str, ctx: _CopyContext) -> None:
    for entry in sorted(os.listdir(src_dir)):
        rel = entry if not rel_dir else f"{rel_dir}/{entry}"
        _copy_entry(os.path.join(src_dir, entry), os.path.join(dst_dir, entry), rel, ctx)


def copy_workspace(
    src: Path,
    dest: Path,
    *,
    logical_root: str | None = None,
    owner: tuple[int, int] | None = None,
) -> CopyReport:
    """Copy ``src``'s contents into the existing directory ``dest`` without leaving ``src``.

    Symlinks are copied as links only when they resolve inside ``src`` (absolute targets are
    judged against ``logical_root``, default ``src`` itself, and rewritten relative); all
    others are dropped and listed in the report. ``owner`` (uid, gid) chowns every copy.
    """
    if not src.is_dir():
        raise SandboxError(f"workspace {src} is not a directory")
    ctx = _CopyContext(logical_root or str(src.resolve()), owner, CopyReport())
    try:
        _copy_tree(str(src), str(dest), "", ctx)
    except OSError as exc:
        raise SandboxError(f"copying workspace {src} to {dest} failed: {exc}") from exc
    return ctx.report


def clear_dir(path: Path, keep: Sequence[str] = ()) -> None:
    """Remove everything inside ``path``, keeping the directory itself (it may be a mount).

    ``keep``: paths relative to ``path`` that stay, with the folders leading to them (host
    folders bound read-only there, such as a virtual environment exposed under /tmp).
    """
    for entry in os.scandir(path):
        inner = [k.partition("/")[2] for k in keep if k.partition("/")[0] == entry.name]
        if not entry.is_dir(follow_symlinks=False):
            os.unlink(entry.path)
        elif "" in inner:
            continue
        elif inner:
            clear_dir(Path(entry.path), inner)
        else:
            shutil.rmtree(entry.path)


# --- output ----------------------------------------------------------------------------


@dataclass
class CappedBuffer:
    """Keeps the first ``cap`` bytes of a stream and counts the rest."""

    cap: int
    data: bytearray = field(default_factory=bytearray)
    seen: int = 0

    def feed(self, chunk: bytes) -> None:
        room = self.cap - len(self.data)
        if room > 0:
            self.data += chunk[:room]
        self.seen += len(chunk)

    @property
    def truncated(self) -> bool:
        return self.seen > self.cap

    def text(self) -> str:
        """The kept bytes decoded as UTF-8 (bad bytes replaced), with a truncation note."""
        body = bytes(self.data).decode("utf-8", "replace")
        if self.truncated:
            body += f"\n[... truncated: {self.seen - self.cap} more bytes not kept]\n"
        return body


@dataclass
class Captured:
    """Result of :func:`capture_output`."""

    stdout: CappedBuffer
    stderr: CappedBuffer
    timed_out: bool = False
    output_killed: bool = False

    @property
    def truncated(self) -> bool:
        return self.stdout.truncated or self.stderr.truncated


def capture_output(
    stdout: IO[bytes],
    stderr: IO[bytes],
    *,
    cap: int,
    deadline: float,
    kill: Callable[[], None],
) -> Captured:
    """Read both pipes until EOF, keeping ``cap`` bytes of each.

    ``kill`` is called once when ``deadline`` (a ``time.monotonic`` value) passes or a stream
    exceeds :data:`OUTPUT_KILL_FACTOR` × ``cap``; reading then continues to EOF.
    """
    result = Captured(CappedBuffer(cap), CappedBuffer(cap))
    buffers = {stdout.fileno(): result.stdout, stderr.fileno(): result.stderr}
    limit = max(cap, 1) * OUTPUT_KILL_FACTOR
    killed = False
    give_up = float("inf")
    with selectors.DefaultSelector() as sel:
        for stream in (stdout, stderr):
            sel.register(stream, selectors.EVENT_READ)
        while sel.get_map():
            now = time.monotonic()
            wait = deadline - now
            if wait <= 0 and not killed:
                result.timed_out, killed = True, True
                kill()
            if now > give_up:
                log.warning("pipes still open %.0f s after the kill; giving up", KILL_GRACE_S)
                break
            if killed and give_up == float("inf"):
                give_up = now + KILL_GRACE_S
            for key, _ in sel.select(timeout=max(wait, 0.05) if not killed else 1.0):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf = buffers[key.fd]
                buf.feed(chunk)
                if buf.seen > limit and not killed:
                    result.output_killed, killed = True, True
                    kill()
    return result
