"""Task folders back from a dataset revision: what ``train`` and ``eval`` run on.

A revision is named by a location and a revision name:

- a dataset folder (``trajforge split`` output: ``manifest.json`` + ``data/``) — taken as is;
- a local git hub (``trajforge push DATASET --to DIR``) — checked out at the revision;
- ``hf://datasets/ORG/NAME`` — downloaded at the revision with ``huggingface_hub``.

Each parquet row holds the exact task record (``task_json``) and its packed folders, so the
task folder is rebuilt byte for byte: ``DEST/<task id>/{task.json, workspace/, oracle/, tests/}``.
"""

from __future__ import annotations

import base64
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajforge.errors import HubError, UsageError
from trajforge.records import DatasetManifest, load_record
from trajforge.splits.layout import data_path, read_rows
from trajforge.splits.localgit import checkout
from trajforge.splits.tasks import PACKED
from trajforge.taskdir import load_task, task_file

log = logging.getLogger(__name__)
HF_PREFIX = "hf://datasets/"


@dataclass(frozen=True)
class Revision:
    """A dataset revision opened on disk."""

    folder: Path
    """Dataset folder (manifest.json + data/)."""
    manifest: DatasetManifest
    """Its manifest."""
    name: str
    """Revision name as asked (or the manifest's, for a plain folder)."""


def open_revision(location: str, revision: str | None, workdir: Path) -> Revision:
    """Open ``location`` at ``revision``; remote or git sources are fetched under ``workdir``."""
    if location.startswith(HF_PREFIX):
        folder = _hf_snapshot(location.removeprefix(HF_PREFIX), revision, workdir)
    else:
        path = Path(location)
        if not path.exists():
            raise UsageError(f"dataset {location}: no such folder")
        if (path / "manifest.json").is_file():
            folder = path
        elif _is_git(path):
            if not revision:
                raise UsageError(f"dataset {location} is a git hub: give its revision (a tag)")
            folder = checkout(path, revision, workdir / "revision")
        else:
            raise UsageError(f"dataset {location}: neither a dataset folder nor a git hub")
    manifest = load_record(DatasetManifest, folder / "manifest.json")
    return Revision(folder, manifest, revision or manifest.revision)


def _is_git(path: Path) -> bool:
    return (path / "HEAD").is_file() or (path / ".git").exists()


def _hf_snapshot(repo_id: str, revision: str | None, workdir: Path) -> Path:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HfHubHTTPError

    try:
        return Path(
            snapshot_download(
                repo_id, repo_type="dataset", revision=revision, local_dir=workdir / "hf"
            )
        )
    except (HfHubHTTPError, OSError) as exc:
        raise HubError(f"hf://datasets/{repo_id}@{revision}: {exc}") from exc


def configs_of(revision: Revision) -> list[str]:
    """Config names of the revision (from its manifest)."""
    return sorted(revision.manifest.counts)


def materialise(
    revision: Revision, split: str, dest: Path, configs: list[str] | None = None
) -> list[Path]:
    """Rebuild the split's task folders under ``dest``; returns them sorted by task id."""
    known = configs_of(revision)
    wanted = configs or known
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        raise UsageError(f"dataset config {unknown}: not in the revision (known: {known})")
    folders: list[Path] = []
    for config in wanted:
        path = revision.folder / data_path(config, split)
        if not path.is_file():
            log.info("no %s split in config %s", split, config)
            continue
        folders.extend(write_task(row, dest) for row in read_rows(path))
    return sorted(folders)


def write_task(row: dict[str, Any], dest: Path) -> Path:
    """One task folder from its parquet row."""
    folder = dest / str(row["id"])
    folder.mkdir(parents=True, exist_ok=True)
    task_file(folder).write_text(str(row["task_json"]))
    (folder / "workspace").mkdir(exist_ok=True)
    for name in PACKED:
        for item in row.get(name) or ():
            target = folder / name / str(item["path"])
            if not target.resolve().is_relative_to(folder.resolve()):
                raise UsageError(f"task {row['id']}: file {item['path']!r} escapes its folder")
            target.parent.mkdir(parents=True, exist_ok=True)
            if item.get("encoding") == "base64":
                target.write_bytes(base64.b64decode(item["content"]))
            else:
                target.write_text(str(item["content"]))
    load_task(folder)
    return folder
