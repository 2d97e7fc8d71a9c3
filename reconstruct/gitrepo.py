"""Read-only git plumbing for repository recovery: remotes, commits, trees and blobs.

Everything goes through the ``git`` binary with a timeout; nothing here writes to a checkout.
Blobs are read through one ``git cat-file --batch`` process per repository and cached by id, so
scoring hundreds of commits reads each distinct file version once.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Iterable, Sequence
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


def git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    """stdout of ``git -C repo ARGS`` (fed ``stdin``); GitError when it fails or times out."""
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            input=stdin,
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


@dataclass(frozen=True)
class Commit:
    """One commit of the history: hash, committer time (epoch seconds), parents (first first)."""

    sha: str
    time: int
    parents: tuple[str, ...] = ()


def commit_log(repo: Path) -> list[Commit]:
    """Every commit reachable from any ref, newest (by committer time) first."""
    try:
        out = git(repo, "log", "--all", "--format=%H %ct %P").decode()
    except GitError:
        return []  # an empty repository has no commits
    found = []
    for line in out.splitlines():
        sha, _, rest = line.partition(" ")
        stamp, _, parents = rest.partition(" ")
        if stamp.isdigit():
            found.append(Commit(sha, int(stamp), tuple(parents.split())))
    found.sort(key=lambda c: -c.time)
    return found


def commit_at(repo: Path, sha: str) -> Commit | None:
    """One commit's time and parents (None when the checkout lacks it)."""
    try:
        out = git(repo, "log", "-1", "--format=%H %ct %P", sha, "--").decode().split()
    except GitError:
        return None
    return Commit(out[0], int(out[1]), tuple(out[2:])) if len(out) >= 2 else None


def blob_id(data: bytes) -> str:
    """The id git gives a file holding ``data`` (SHA-1 object format)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def present(repo: Path, oids: Iterable[str]) -> set[str]:
    """Which of the object ids the repository's object store holds (one ``cat-file`` call)."""
    wanted = sorted(set(oids))
    if not wanted:
        return set()
    out = git(repo, "cat-file", "--batch-check", stdin="\n".join(wanted).encode() + b"\n")
    return {line.split()[0] for line in out.decode().splitlines() if not line.endswith("missing")}


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


@dataclass
class Trees:
    """Paths looked up in commits' trees through a :class:`Blobs` process; every tree object is
    parsed once, so commits sharing most of their folders cost little more than one."""

    blobs: Blobs
    parsed: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)

    def lookup(self, commit: str, paths: Sequence[str]) -> dict[str, str]:
        """Blob id of each of ``paths`` in ``commit`` (absent paths, links and submodules left
        out); like :func:`tree_ids`, without a process per commit."""
        root = self._root(commit)
        found: dict[str, str] = {}
        for path in paths if root is not None else ():
            oid: str | None = root
            mode = "40000"
            for part in path.split("/"):
                entry = self._entries(oid).get(part) if oid and mode == "40000" else None
                oid, mode = (entry[1], entry[0]) if entry else (None, "")
            if oid is not None and mode in ("100644", "100755", "100664"):
                found[path] = oid
        return found

    def _root(self, commit: str) -> str | None:
        data = self.blobs.read(commit)
        if not data or not data.startswith(b"tree "):
            return None
        return data[5 : data.index(b"\n")].decode()

    def _entries(self, oid: str) -> dict[str, tuple[str, str]]:
        if oid not in self.parsed:
            self.parsed[oid] = _parse_tree_object(self.blobs.read(oid) or b"", len(oid) // 2)
        return self.parsed[oid]


def _parse_tree_object(data: bytes, width: int) -> dict[str, tuple[str, str]]:
    """Name → (mode, id) of a raw tree object (``<mode> <name>\\0<id bytes>`` entries)."""
    entries: dict[str, tuple[str, str]] = {}
    pos = 0
    while pos < len(data):
        space = data.index(b" ", pos)
        nul = data.index(b"\0", space)
        name = data[space + 1 : nul].decode(errors="surrogateescape")
        entries[name] = (data[pos:space].decode(), data[nul + 1 : nul + 1 + width].hex())
        pos = nul + 1 + width
    return entries


def _pipes(proc: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    assert proc.stdin is not None and proc.stdout is not None
    return proc.stdin, proc.stdout


def tree_paths(repo: Path, commit: str = "HEAD") -> list[str]:
    """Every file path at ``commit`` (names only)."""
    out = git(repo, "ls-tree", "-r", "-z", "--name-only", "--full-tree", commit)
    return [name.decode(errors="surrogateescape") for name in filter(None, out.split(b"\0"))]


def tree_texts(repo: Path, commit: str, subdir: str = "") -> dict[str, str]:
    """Text files under ``subdir`` at ``commit``, relative to ``subdir`` (binary, huge skipped)."""
    return tree_files(repo, commit, subdir)[0]


def tree_files(repo: Path, commit: str, subdir: str = "") -> tuple[dict[str, str], frozenset[str]]:
    """(text files, every file path) under ``subdir`` at ``commit``, relative to ``subdir``."""
    listing = tree_listing(repo, commit, subdir)
    prefix = f"{subdir.rstrip('/')}/" if subdir else ""
    every = frozenset(p[len(prefix) :] for p in listing if p.startswith(prefix))
    files: dict[str, str] = {}
    with Blobs(repo) as blobs:
        for path, (oid, size) in sorted(listing.items()):
            if size > MAX_FILE_BYTES or not path.startswith(prefix):
                continue
            data = blobs.read(oid)
            text = as_text(data) if data is not None else None
            if text is not None:
                files[path[len(prefix) :]] = text
    return files, every
