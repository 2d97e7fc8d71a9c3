"""Input plumbing shared by all formats: expand PATHs, open (gzipped) files, stream lines."""

from __future__ import annotations

import _thread
import gc
import gzip
import hashlib
import json
import logging
import os
import re
import threading
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from queue import SimpleQueue
from typing import IO

import orjson

from trajforge.errors import FormatError

log = logging.getLogger(__name__)

HEAD_BYTES = 65536
HASH_ON_A_THREAD = 512 * 1024
"""From this many bytes :func:`sha256_soon` hands the hash to the hashing thread: the hand-over
costs about 0.1 ms at each end on the 2-core benchmark machine, the sha256 of 512 KiB 0.3 ms;
a smaller buffer is hashed at once."""
HAND_OVER_TIMEOUT = 10.0
"""Seconds :func:`sha256_soon` waits for the hashing thread to take a job (it is busy with
another reader thread's at most) before hashing the buffer itself."""
SESSION_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".db", ".ndjson", ".gz")
ARCHIVED = re.compile(r"\.jsonl\.(?:reset|deleted)\.[\w:.+-]+$")
"""OpenClaw keeps a session file it set aside (``/new``, a deleted session) as
``<id>.jsonl.reset.<time>`` / ``<id>.jsonl.deleted.<time>``: still a session."""


class _GcPause:
    """How many readers are inside :func:`gc_paused` (threads may overlap), and whether the
    collector was on when the first went in."""

    lock = threading.Lock()
    depth = 0
    was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while a reader turns one file into records.

    Parsing allocates tens of thousands of containers per megabyte (JSON dicts and lists,
    Events) that all live until the file's Sessions are built, so the collector's generational
    passes walk them again and again and free nothing: about 20 % of the pi reader's time.
    Readers make no reference cycles; reference counting frees as usual, and the collector is
    back on (if it was) as soon as the last reader leaves, so memory stays per file.
    """
    with _GcPause.lock:
        if _GcPause.depth == 0:
            _GcPause.was_enabled = gc.isenabled()
            gc.disable()
        _GcPause.depth += 1
    try:
        yield
    finally:
        with _GcPause.lock:
            _GcPause.depth -= 1
            if _GcPause.depth == 0 and _GcPause.was_enabled:
                gc.enable()


def open_bytes(path: Path) -> IO[bytes]:
    """Open ``path`` for reading, transparently decompressing gzip (several members too)."""
    with path.open("rb") as raw:
        magic = raw.read(2)
    if magic == b"\x1f\x8b":
        return gzip.GzipFile(path, "rb")  # type: ignore[return-value]
    return path.open("rb")


def read_head(path: Path, size: int = HEAD_BYTES) -> bytes:
    """First ``size`` bytes of a file (decompressed); empty for directories."""
    if path.is_dir():
        return b""
    try:
        with open_bytes(path) as fh:
            return fh.read(size)
    except (OSError, EOFError, zlib.error) as exc:
        raise FormatError(f"{path}: cannot read: {exc}") from None


def read_all(path: Path) -> bytes:
    """Whole file, decompressed."""
    try:
        with open_bytes(path) as fh:
            return fh.read()
    except (OSError, EOFError, zlib.error) as exc:
        raise FormatError(f"{path}: cannot read: {exc}") from None


def file_hash(path: Path) -> str:
    """sha256 of the raw bytes of a file (or of the sorted file list+bytes of a directory)."""
    digest = hashlib.sha256()
    if path.is_dir():
        for child in sorted(p for p in path.rglob("*") if p.is_file()):
            digest.update(str(child.relative_to(path)).encode())
            digest.update(child.read_bytes())
    else:
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


class _Digest:
    """The sha256 of one buffer, handed to the hashing thread; calling it waits for the digest
    (and asked again, gives the same one)."""

    __slots__ = ("data", "digest", "done", "started")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.digest: str | None = None
        self.started, self.done = _thread.allocate_lock(), _thread.allocate_lock()
        self.started.acquire()
        self.done.acquire()

    def __call__(self) -> str:
        if self.digest is None:
            with self.done:  # released by the thread once the digest is set (or it failed)
                pass
        if self.digest is None:  # the thread could not hash it (out of memory): hash here
            self.digest = hashlib.sha256(self.data).hexdigest()
        self.data = b""
        return self.digest


def _hash_forever(jobs: SimpleQueue[_Digest]) -> None:
    """The hashing thread: each job says it started, then hashes (hashlib lets go of the GIL
    over a large buffer, so the reader parses on meanwhile) and says it is done."""
    while True:
        job = jobs.get()
        job.started.release()
        try:
            job.digest = hashlib.sha256(job.data).hexdigest()
        except MemoryError:  # the caller finds no digest and hashes the buffer itself
            pass
        finally:
            job.done.release()


_HASHERS: dict[int, tuple[threading.Thread, SimpleQueue[_Digest]]] = {}
"""This process's hashing thread and its job queue, by process id: a forked child (a ``-j N``
pool worker) has no thread of its parent's, so it starts its own."""


def _hasher() -> SimpleQueue[_Digest] | None:
    """This process's hashing thread's queue, the thread started on first use (and again if it
    ever died); None when no thread can be started (a thread limit, interpreter shutdown)."""
    pid = os.getpid()
    hasher = _HASHERS.get(pid)
    if hasher is not None and hasher[0].is_alive():
        return hasher[1]
    jobs: SimpleQueue[_Digest] = SimpleQueue()
    thread = threading.Thread(
        target=_hash_forever, args=(jobs,), name="trajforge-sha256", daemon=True
    )
    try:
        thread.start()
    except RuntimeError:
        return None
    _HASHERS.clear()
    _HASHERS[pid] = (thread, jobs)
    return jobs


def sha256_soon(data: bytes) -> Callable[[], str]:
    """A function returning ``hashlib.sha256(data).hexdigest()``; for a large ``data`` the hash
    runs on the hashing thread from now until the function is called.

    The hand-over waits until the thread has taken the job: the thread needs the GIL for the
    few steps before hashlib lets go of it, and the reader keeps the GIL while it parses, so a
    thread left to wait for it would start hashing only when the reader is done (or after the
    interpreter's 5 ms switch interval). One long-lived thread instead of one per file: no
    thread start (0.12-0.17 ms on the 2-core benchmark machine) for each file.
    """
    jobs = _hasher() if len(data) >= HASH_ON_A_THREAD else None
    if jobs is None:
        digest = hashlib.sha256(data).hexdigest()
        return lambda: digest
    job = _Digest(data)
    jobs.put(job)
    if not job.started.acquire(timeout=HAND_OVER_TIMEOUT):  # a stuck thread: hash here
        job.digest = hashlib.sha256(data).hexdigest()
    return job


def iter_json_lines(path: Path) -> Iterator[tuple[int, object | None, str | None]]:
    """Stream a JSON-lines file: ``(lineno, value, error)``; blank lines are skipped.

    A line that is not JSON (garbage, binary, a truncated last line) yields ``value=None`` and
    an error message, so the caller records a warning and carries on. A line whose strings hold
    raw control characters is read as written: its value *and* a warning saying so.
    """
    try:
        fh = open_bytes(path)
    except OSError as exc:
        raise FormatError(f"{path}: cannot read: {exc.strerror}") from None
    with fh:
        lineno = 0
        try:
            for lineno, raw in enumerate(fh, start=1):
                if not raw.strip():
                    continue
                try:
                    yield lineno, orjson.loads(raw), None
                except orjson.JSONDecodeError as exc:
                    yield lineno, *damaged_line(exc)
        except (OSError, EOFError, zlib.error) as exc:  # truncated or corrupt gzip stream
            yield lineno + 1, None, f"unreadable: {exc}"


CONTROL_CHARACTER = "unexpected control character in string"
"""How orjson says a string holds a raw control character (U+0000..U+001F, tab included)."""


def damaged_line(exc: orjson.JSONDecodeError) -> tuple[object | None, str]:
    """A JSON line orjson rejected: ``(value, warning)`` when its only fault is raw control
    characters inside strings — read as its producer wrote them (``json.loads(strict=False)``)
    — else ``(None, why)``: a damaged line.

    What the lenient read returns must be what orjson could hold (no NaN, no lone surrogate,
    no integer over 64 bits), so a line with another fault beside the control characters stays
    damaged.
    """
    if exc.msg.startswith(CONTROL_CHARACTER):
        try:
            value = json.loads(exc.doc, strict=False, parse_constant=_no_constant)
            orjson.dumps(value)
        except (ValueError, TypeError, RecursionError):  # orjson.JSONEncodeError is a TypeError
            pass
        else:
            code = f"U+{ord(exc.doc[exc.pos]):04X} " if 0 <= exc.pos < len(exc.doc) else ""
            where = f"{code}at column {exc.colno}"
            return value, f"raw control character in a JSON string ({where}): read as written"
    return None, f"not JSON ({exc.msg})"


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def json_line(raw: bytes | memoryview) -> tuple[object | None, str | None]:
    """One JSON line: ``(value, None)``; one with raw control characters in its strings:
    ``(value, warning)``; a damaged one: ``(None, why)`` (see :func:`damaged_line`)."""
    try:
        return orjson.loads(raw), None
    except orjson.JSONDecodeError as exc:
        return damaged_line(exc)


def expand_paths(paths: Iterable[Path]) -> tuple[list[Path], list[str]]:
    """Expand user PATHs into inputs: files, opencode ``storage/`` trees, SQLite files.

    Directories are walked; a directory that is itself an opencode legacy storage tree is kept
    whole. Returns ``(inputs, errors)`` where errors name paths that do not exist.
    """
    inputs: list[Path] = []
    errors: list[str] = []
    for path in paths:
        if not path.exists():
            errors.append(f"{path}: no such file or directory")
        elif path.is_dir():
            inputs.extend(_walk(path))
        else:
            inputs.append(path)
    return inputs, errors


def _is_storage_tree(path: Path) -> bool:
    return (path / "session").is_dir() and (path / "message").is_dir()


def _walk(root: Path) -> Iterator[Path]:
    if _is_storage_tree(root):
        yield root
        return
    for child in sorted(root.iterdir()):
        if child.name.startswith("."):
            continue
        if child.is_dir():
            yield from _walk(child)
        elif is_session_name(child.name):
            yield child


def is_sessions_index(path: Path, head: bytes, *keys: bytes) -> bool:
    """A gateway's ``sessions.json``: a map of session keys to entries holding ``keys``, kept
    beside the session files it indexes (hermes, OpenClaw) — nothing to read."""
    return (
        path.name == "sessions.json"
        and head.lstrip()[:1] == b"{"
        and all(key in head for key in keys)
    )


def is_session_name(name: str) -> bool:
    """Whether a file in a dump is a session by its name: not a pi-share-hf ``manifest.jsonl``,
    a README or a hidden file."""
    if name.startswith(".") or name == "manifest.jsonl" or name.endswith(".md"):
        return False
    return name.endswith(SESSION_SUFFIXES) or ARCHIVED.search(name) is not None
