"""The task folder: its layout, loading and atomic saving, and listing them under OUT.

``OUT/tasks/<task_id>/`` holds ``task.json`` (the :class:`~trajforge.records.Task`),
``workspace/`` (what the agent starts from), ``oracle/`` (the completed files), ``tests/``
(hidden tests) and ``probes/N/`` (the session's own failed attempts). Every stage goes through
these names and functions rather than spelling the layout out.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trajforge.records import Task

TASK_FILE = "task.json"
"""The task record inside a task folder."""
HIDDEN_DIR = "tests"
"""Hidden tests inside a task folder."""
TASKS_DIR = "tasks"
"""Task folders inside OUT."""
RECONSTRUCT_SUMMARY = "reconstruct.json"
"""The last ``trajforge reconstruct`` run's summary in OUT (its triage funnel)."""


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file and ``os.replace``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def task_file(task_dir: Path) -> Path:
    """``task_dir/task.json``."""
    return task_dir / TASK_FILE


def is_task_dir(path: Path) -> bool:
    """A folder holding a ``task.json``."""
    return task_file(path).is_file()


def load_task(task_dir: Path) -> Task:
    """The task record of a folder (RecordError naming the file and field when it is bad)."""
    from trajforge.records import Task, load_record

    return load_record(Task, task_file(task_dir))


def read_family(task_dir: Path) -> str | None:
    """The ``family`` field of a folder's task.json, read without validating the record (to
    sort folders by family before each is opened once); None when it cannot be read."""
    import orjson

    try:
        record = orjson.loads(task_file(task_dir).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    family = record.get("family") if isinstance(record, dict) else None
    return family if isinstance(family, str) else None


def save_task(task_dir: Path, task: Task) -> None:
    """Replace the folder's ``task.json`` atomically."""
    from trajforge.records import dump_record

    write_atomic(task_file(task_dir), dump_record(task) + "\n")


def task_dirs(out: Path) -> list[Path]:
    """Task folders under ``OUT/tasks`` (staging folders excluded), sorted by id."""
    root = out / TASKS_DIR
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
