"""Task files on disk: read a folder into a map, lay maps over each other, write them out."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

from trajforge.records import Task, canonical_json, sha256_hex
from trajforge.taskdir import TASK_FILE, write_atomic

__all__ = ["TASK_FILE", "write_atomic"]


def read_tree(root: Path) -> dict[str, str]:
    """Relative path → text of every regular file under ``root`` (empty when it is absent)."""
    files: dict[str, str] = {}
    if not root.is_dir():
        return files
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            rel = path.relative_to(root).as_posix()
            files[rel] = path.read_text(encoding="utf-8", errors="surrogateescape")
    return files


def layered(*layers: Mapping[str, str]) -> dict[str, str]:
    """Later layers overwrite same-named files of earlier ones."""
    merged: dict[str, str] = {}
    for layer in layers:
        merged.update(layer)
    return merged


def write_tree(dest: Path, files: Mapping[str, str]) -> Path:
    """Write ``files`` under a fresh ``dest`` (cleared first); refuses paths that escape it."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    root = dest.resolve()
    for rel, text in files.items():
        target = (dest / rel).resolve()
        if not target.is_relative_to(root):
            raise ValueError(f"refusing to write {rel!r} outside {dest}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8", errors="surrogateescape")
    return dest


def _hash_folder(digest: hashlib._Hash, root: Path, label: str) -> None:
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            digest.update(f"{label}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())


def content_hash(task_dir: Path, task: Task, folders: Iterable[str]) -> str:
    """sha256 over task.json (without its validation) and every file of ``folders``.

    The record is hashed as it was before its instruction was rewritten (the request in
    ``instruction``, no ``request`` key), so the rewrite after validation keeps the key valid.
    """
    digest = hashlib.sha256()
    record = task.model_dump(mode="json", exclude={"validation", "request"})
    if task.request is not None:
        record["instruction"] = task.request
    digest.update(canonical_json(record))
    for folder in sorted(set(folders)):
        _hash_folder(digest, task_dir / folder, folder)
    return digest.hexdigest()


def cache_key(files_hash: str, config: Mapping[str, object], backend: str) -> str:
    """Key of a validation result: the task's files, the settings and the sandbox backend."""
    return sha256_hex(canonical_json({"files": files_hash, "config": config, "backend": backend}))
