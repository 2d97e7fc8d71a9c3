"""Held-out tasks of a dataset revision, rebuilt as task folders for rollouts.

``dataset.path`` is a dataset revision folder (``trajforge split``: ``manifest.json`` +
``data/<config>/<split>-*.parquet``), a local hub (``trajforge push --to DIR``: a git
repository with one tag per revision, checked out at ``dataset.revision``) or
``hf://datasets/ORG/NAME``; opening and rebuilding are :mod:`trajforge.splits.materialise`'s.
Each task folder is rebuilt byte for byte under ``OUT/tasks/<id>/``.
"""

from __future__ import annotations

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajforge.errors import RecordError, UsageError
from trajforge.records import DatasetManifest
from trajforge.splits.layout import read_rows
from trajforge.splits.materialise import HF_PREFIX, Revision, open_revision, write_task
from trajforge.taskdir import load_task
from trajforge.train.evaluation.config import DatasetRef


@dataclass(frozen=True)
class EvalTask:
    """One held-out task, rebuilt as a folder."""

    id: str
    """Task id."""
    family: str
    """Task family."""
    folder: Path
    """Rebuilt task folder (``task.json``, ``workspace/``, ``oracle/``, ``tests/``)."""


@dataclass(frozen=True)
class LoadedDataset:
    """The tasks of one revision and split, with what identifies them."""

    revision: str
    """Manifest revision."""
    manifest_sha256: str
    """sha256 of the revision's ``manifest.json``."""
    split: str
    """Split evaluated."""
    tasks: tuple[EvalTask, ...]
    """Tasks, sorted by family then id."""


def _select(rows: list[dict[str, Any]], ref: DatasetRef) -> list[dict[str, Any]]:
    rows = sorted(rows, key=lambda r: (str(r["family"]), str(r["id"])))
    if ref.families:
        rows = [r for r in rows if r["family"] in ref.families]
    if ref.max_tasks_per_family is not None:
        seen: dict[str, int] = {}
        kept = []
        for r in rows:
            seen[r["family"]] = seen.get(r["family"], 0) + 1
            if seen[r["family"]] <= ref.max_tasks_per_family:
                kept.append(r)
        rows = kept
    return rows


def _rows(folder: Path, manifest: DatasetManifest, split: str) -> list[dict[str, Any]]:
    splits = {s for per_config in manifest.counts.values() for s in per_config}
    if split not in splits:
        known = ", ".join(sorted(splits)) or "none"
        raise UsageError(f"dataset.split {split!r}: not in {folder} (splits: {known})")
    rows: list[dict[str, Any]] = []
    for parquet in sorted((folder / "data").glob(f"*/{split}-*.parquet")):
        rows.extend(read_rows(parquet))
    return rows


def _check_revision(ref: DatasetRef, revision: Revision, plain: bool) -> None:
    """A plain folder must be the asked revision (a hub's tag names it by itself)."""
    if plain and revision.manifest.revision != ref.revision:
        raise UsageError(
            f"dataset.revision {ref.revision!r}: {ref.path} is revision "
            f"{revision.manifest.revision!r}; set dataset.revision to it or point dataset.path "
            "at the right revision"
        )


def _task(folder: Path) -> EvalTask:
    task = load_task(folder)
    if task.id != folder.name:
        raise RecordError(f"{folder / 'task.json'}: field 'id': {task.id!r} != folder name")
    return EvalTask(task.id, task.family, folder)


def load_dataset(ref: DatasetRef, out: Path) -> LoadedDataset:
    """The selected tasks of ``ref`` rebuilt under ``out/tasks``; UsageError when unusable."""
    remote = ref.path.startswith(HF_PREFIX)
    path = Path(ref.path).expanduser()
    if not remote and not path.exists():
        raise UsageError(f"dataset.path {ref.path!r}: not found (run `trajforge demo` first?)")
    with tempfile.TemporaryDirectory(prefix="trajforge-eval-data-") as tmp:
        location = ref.path if remote else str(path)
        revision = open_revision(location, ref.revision, Path(tmp))
        _check_revision(ref, revision, plain=not remote and revision.folder == path)
        digest = hashlib.sha256((revision.folder / "manifest.json").read_bytes()).hexdigest()
        rows = _select(_rows(revision.folder, revision.manifest, ref.split), ref)
        if not rows:
            raise UsageError(
                f"dataset {ref.path!r} revision {ref.revision!r} split {ref.split!r}: no tasks "
                "(check dataset.split and dataset.families)"
            )
        tasks = tuple(_task(write_task(row, out / "tasks")) for row in rows)
    return LoadedDataset(revision.manifest.revision, digest, ref.split, tasks)
