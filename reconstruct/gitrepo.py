"""Read-only git plumbing for repository recovery: remotes, commits, trees and blobs.

Everything goes through the ``git`` binary with a timeout; nothing here writes to a checkout.
Blobs are read through one ``git cat-file --batch`` process per repository and cached by id, so
scoring hundreds of commits reads each distinct file version once.
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

GIT_TIMEOUT_S = 120
"""Longest one git command may take (a large ``ls-tree`` on a cold cache)."""
MAX_FILE_BYTES = 1_000_000
"""Files larger than this are not copied into a workspace (as ``--base-repo`` does)."""
PATHSPEC_CHUNK = 200
"""Paths per ``ls-tree`` call (keeps the command line short)."""


class GitError(Exception):
    """A git command failed (message: the command and git's last stderr line)."""


def git(repo: Path, *args: str) -> bytes:
    """stdout of ``git -C repo ARGS``; GitError when it fails or times out."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} in {repo}: {exc}") from None
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {args[0]} in {repo}: {lines[-1] if lines else 'failed'}")
    return done.stdout


def toplevel(path: Path) -> Path | None:
    """The checkout holding ``path`` (a directory), or None when it is not in one."""
    if not path.is_dir():
        return None
    try:
        out = git(path, "rev-parse", "--show-toplevel").decode().strip()
    except GitError:
        return None
    return Path(out).resolve() if out else None


def remote_urls(repo: Path) -> tuple[str, ...]:
    """Every remote's fetch URL (origin first)."""
    try:
        out = git(repo, "config", "--get-regexp", r"^remote\..*\.url$").decode()
    except GitError:
        return ()  # no remote configured: git exits 1
    pairs = [line.split(" ", 1) for line in out.splitlines() if " " in line]
    pairs.sort(key=lambda p: (p[0] != "remote.origin.url", p[0]))
    return tuple(url.strip() for _, url in pairs)


def resolve_commit(repo: Path, rev: str) -> str | None:
    """Full hash of ``rev`` when the checkout has it, else None."""
    try:
        out = git(repo, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
    except GitError:
        return None
    return out.decode().strip() or None


def commit_times(repo: Path) -> list[tuple[str, int]]:
    """(hash, committer time) of every commit reachable from any ref, newest first."""
    try:
        out = git(repo, "log", "--all", "--format=%H %ct").decode()
    except GitError:
        return []  # an empty repository has no commits
    found = []
    for line in out.splitlines():
        sha, _, stamp = line.partition(" ")
        if stamp.isdigit():
            found.append((sha, int(stamp)))
    found.sort(key=lambda c: -c[1])
    return found


def branch_containing(repo: Path, commit: str) -> str | None:
    """A local branch whose history holds ``commit`` (the checked-out one first)."""
    try:
        out = git(repo, "branch", "--contains", commit, "--format=%(HEAD) %(refname:short)")
    except GitError:
        return None
    names = [line[2:] for line in sorted(out.decode().splitlines(), reverse=True) if line[2:]]
    return names[0] if names else None


def tree_ids(repo: Path, commit: str, paths: Sequence[str]) -> dict[str, str]:
    """Blob id of each of ``paths`` in ``commit`` (paths absent from its tree are left out)."""
    found: dict[str, str] = {}
    for start in range(0, len(paths), PATHSPEC_CHUNK):
        chunk = paths[start : start + PATHSPEC_CHUNK]
        out = git(repo, "ls-tree", "-z", "--full-tree", commit, "--", *chunk)
        found.update(_parse_tree(out))
    return found


def tree_listing(repo: Path, commit: str, subdir: str = "") -> dict[str, tuple[str, int]]:
    """Path → (blob id, size) of every regular file under ``subdir`` in ``commit``."""
    spec = [subdir] if subdir else []
    out = git(repo, "ls-tree", "-r", "-z", "-l", "--full-tree", commit, "--", *spec)
    files: dict[str, tuple[str, int]] = {}
    for entry in filter(None, out.split(b"\0")):
        meta, _, name = entry.partition(b"\t")
        mode, kind, oid, size = meta.decode().split()
        if kind == "blob" and mode in ("100644", "100755") and size.isdigit():
            files[name.decode(errors="surrogateescape")] = (oid, int(size))
    return files


def _parse_tree(out: bytes) -> dict[str, str]:
    found = {}
    for entry in filter(None, out.split(b"\0")):
        meta, _, name = entry.partition(b"\t")
        mode, kind, oid = meta.decode().split()
        if kind == "blob" and mode != "120000":
            found[name.decode(errors="surrogateescape")] = oid
    return found


def as_text(data: bytes) -> str | None:
    """UTF-8 text of a small non-binary file, else None."""
    if len(data) > MAX_FILE_BYTES or b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


@dataclass
class Blobs:
    """One ``git cat-file --batch`` process reading blobs of one repository, cached by id."""

    repo: Path
    cache: dict[str, bytes | None] = field(default_factory=dict)
    _proc: subprocess.Popen[bytes] | None = None

    def read(self, oid: str) -> bytes | None:
        """The blob's bytes (None when git does not have it)."""
        if oid not in self.cache:
            self.cache[oid] = self._fetch(oid)
        return self.cache[oid]

    def _fetch(self, oid: str) -> bytes | None:
        proc = self._process()
        stdin, stdout = _pipes(proc)
        stdin.write(oid.encode() + b"\n")
        stdin.flush()
        header = stdout.readline().decode().split()
        if len(header) != 3 or not header[2].isdigit():
            return None  # "<oid> missing"
        data = stdout.read(int(header[2]))
        stdout.read(1)  # the newline after the contents
        return data

    def _process(self) -> subprocess.Popen[bytes]:
        if self._proc is None or self._proc.poll() is not None:
            try:
                self._proc = subprocess.Popen(
                    ["git", "-C", str(self.repo), "cat-file", "--batch"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
            except OSError as exc:
                raise GitError(f"git cat-file in {self.repo}: {exc}") from None
        return self._proc

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        stdin, stdout = _pipes(proc)
        stdin.close()
        try:
            proc.wait(timeout=GIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        stdout.close()

    def __enter__(self) -> Blobs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _pipes(proc: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    assert proc.stdin is not None and proc.stdout is not None
    return proc.stdin, proc.stdout


def tree_texts(repo: Path, commit: str, subdir: str = "") -> dict[str, str]:
    """Text files under ``subdir`` at ``commit``, relative to ``subdir`` (binary, huge skipped)."""
    listing = tree_listing(repo, commit, subdir)
    prefix = f"{subdir.rstrip('/')}/" if subdir else ""
    files: dict[str, str] = {}
    with Blobs(repo) as blobs:
        for path, (oid, size) in sorted(listing.items()):
            if size > MAX_FILE_BYTES or not path.startswith(prefix):
                continue
            data = blobs.read(oid)
            text = as_text(data) if data is not None else None
            if text is not None:
                files[path[len(prefix) :]] = text
    return files
