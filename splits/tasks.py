"""Read task folders (``OUT/tasks/<id>/``) with their files packed as maps.

Only accepted tasks go into a dataset; every other task is counted by its validation status.
A task folder that cannot be read is counted as ``unreadable`` with the reason, never raised.
"""

from __future__ import annotations

import base64
import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from trajforge.errors import RecordError, UsageError
from trajforge.records import Status, Task, canonical_json, sha256_hex
from trajforge.taskdir import load_task as read_task
from trajforge.taskdir import task_dirs, task_file

log = logging.getLogger(__name__)

PACKED = ("workspace", "oracle", "tests")
"""Folders of a task packed into a dataset row, as file maps."""

DATA_FAMILIES = frozenset({"data"})
"""Families that go to the ``data_analysis`` config; everything else is ``coding``."""


def config_of(family: str) -> str:
    """Dataset config of a family."""
    return "data_analysis" if family in DATA_FAMILIES else "coding"


@dataclass(frozen=True)
class PackedFile:
    """One file of a task folder."""

    path: str
    """Path relative to its folder (``/``-separated)."""
    content: str
    """Text, or base64 when ``encoding`` is ``base64``."""
    encoding: str = "utf-8"
    """``utf-8`` for text, ``base64`` for bytes that are not UTF-8."""


@dataclass(frozen=True)
class LoadedTask:
    """An accepted task with its packed folders."""

    task: Task
    """The task record."""
    folders: dict[str, tuple[PackedFile, ...]]
    """workspace / oracle / tests → files, sorted by path."""
    content_hash: str
    """sha256 of the record and every packed file."""

    @property
    def config(self) -> str:
        return config_of(self.task.family)


@dataclass
class LoadReport:
    """What was found under ``OUT/tasks``."""

    accepted: list[LoadedTask] = field(default_factory=list)
    """Accepted tasks, sorted by id."""
    by_status: Counter[str] = field(default_factory=Counter)
    """Number of tasks per validation status (plus ``unreadable``)."""
    by_family_status: dict[str, Counter[str]] = field(default_factory=dict)
    """family → status → count."""
    problems: list[str] = field(default_factory=list)
    """Why each unreadable folder could not be used."""


def pack_folder(root: Path) -> tuple[PackedFile, ...]:
    """Every regular file under ``root`` (symlinks refused), sorted by path."""
    if not root.is_dir():
        return ()
    files = []
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            raise RecordError(f"{path}: symlinks are not packed into datasets")
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        data = path.read_bytes()
        try:
            files.append(PackedFile(rel, data.decode("utf-8")))
        except UnicodeDecodeError:
            files.append(PackedFile(rel, base64.b64encode(data).decode(), "base64"))
    return tuple(files)


def content_hash(task: Task, folders: dict[str, tuple[PackedFile, ...]]) -> str:
    """sha256 over the record and the packed files."""
    identity = {
        "task": task.model_dump(mode="json"),
        "files": {
            name: [[f.path, f.encoding, sha256_hex(f.content.encode())] for f in files]
            for name, files in sorted(folders.items())
        },
    }
    return sha256_hex(canonical_json(identity))


def load_task(folder: Path) -> LoadedTask:
    """Load one task folder (RecordError when unusable)."""
    task = read_task(folder)
    if task.id != folder.name:
        raise RecordError(f"{task_file(folder)}: field 'id': {task.id!r} != folder name")
    folders = {name: pack_folder(folder / name) for name in PACKED}
    return LoadedTask(task, folders, content_hash(task, folders))


def load_tasks(out: Path) -> LoadReport:
    """All tasks under ``out/tasks``; accepted ones loaded with their files."""
    if not (out / "tasks").is_dir():
        raise UsageError(f"{out}: no tasks/ folder (run `trajforge reconstruct` first)")
    report = LoadReport()
    for folder in task_dirs(out):
        _load_one(folder, report)
    return report


def _load_one(folder: Path, report: LoadReport) -> None:
    try:
        task = read_task(folder)
    except RecordError as exc:
        report.by_status["unreadable"] += 1
        report.problems.append(str(exc))
        return
    status = str(task.validation.status)
    report.by_status[status] += 1
    report.by_family_status.setdefault(task.family, Counter())[status] += 1
    if status != Status.ACCEPTED:
        return
    try:
        report.accepted.append(load_task(folder))
    except (RecordError, OSError) as exc:
        log.debug("task %s unusable", folder, exc_info=True)
        report.by_status[Status.ACCEPTED] -= 1
        report.by_status["unreadable"] += 1
        report.by_family_status[task.family][Status.ACCEPTED] -= 1
        report.problems.append(str(exc))
