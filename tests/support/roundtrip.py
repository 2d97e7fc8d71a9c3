"""What a session export must give back when read again: the same sessions, events and tasks
(shared by the ATIF and STS export tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trajforge.reconstruct import pipeline
from trajforge.records import Session, Task, load_record


def sessions_by_key(paths: list[Path]) -> dict[tuple[str, str], Session]:
    """Every session in ``paths``, by (harness, session id)."""
    formats = pipeline.all_formats()
    found: dict[tuple[str, str], Session] = {}
    for path in paths:
        for item in pipeline.detect(path, formats).parse(path):
            if isinstance(item, Session):
                found[(item.header.harness, item.header.session_id)] = item
    return found


def events_of(session: Session) -> list[dict[str, Any]]:
    """The session's events without their source positions (which name the file read)."""
    return [e.model_dump(exclude={"source"}) for e in session.events]


def task_ids(out: Path) -> set[str]:
    return {load_record(Task, p).id for p in (out / "tasks").glob("*/task.json")}


def all_task_ids(summary: pipeline.ReconstructSummary, out: Path) -> set[str]:
    """Tasks written plus the qa copies collapsed into them (the same qa scenario in every
    harness is one task; which copy is kept follows input order)."""
    removed = {d.detail.split(":")[0] for d in summary.dropped if d.reason == "duplicate"}
    return task_ids(out) | removed
