"""The task folder's layout and atomic writes (``OUT/tasks/<id>/task.json`` and friends)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

TASK_FILE = "task.json"
"""The task record inside a task folder."""
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
