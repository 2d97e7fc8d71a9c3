"""The protected set of one task: hidden and visible tests, graders, reward paths, source ids.

It comes from the task (``profile_from_task``) or a JSON file (``--profile FILE``). Only files
named here are protected for sure; name heuristics in the rule bundle only flag. After a
rollout, :func:`changed_files` hashes the protected files again: a change is a block even when
no call was caught.
"""

from __future__ import annotations

import hashlib
import posixpath
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from trajforge.records import Record, load_record
from trajforge.records.base import FROZEN
from trajforge.taskdir import load_task

Role = Literal["hidden_test", "overlay_test", "visible_test", "grader", "reward", "other"]
TEST_NAMES = ("test_", "_test.", ".test.", ".spec.", "conftest.py")


class ProtectedFile(BaseModel):
    """One protected file."""

    model_config = FROZEN

    path: str
    """Path as the agent sees it: absolute, or relative to the profile's workspace."""
    role: Role
    """hidden_test, overlay_test (laid over the agent's file), visible_test, grader, reward…"""
    sha256: str | None = None
    """Content hash at rollout start; when set, a changed file after the rollout is a block."""


class Profile(Record):
    """The protected set of one task (``--profile FILE``)."""

    task_id: str | None = None
    """Task the profile was made from."""
    workspace: str = "/workspace"
    """Directory the agent starts in; relative paths resolve against it."""
    home: str = "/root"
    """Home directory of the agent (``~``)."""
    files: tuple[ProtectedFile, ...] = ()
    """Protected files with their roles and hashes."""
    reward_paths: tuple[str, ...] = ()
    """Reward / result files the verifier writes."""
    source_ids: tuple[str, ...] = ()
    """Ids that locate the task's source: session id, dataset id, upstream commit or PR URL."""
    answer_urls: tuple[str, ...] = ()
    """Task-specific answer stores (URL prefixes) added to the bundle's list."""

    def absolute(self, path: str) -> str:
        """``path`` resolved against the workspace."""
        joined = path if path.startswith("/") else posixpath.join(self.workspace, path)
        return posixpath.normpath(joined)

    def protected(self) -> dict[str, Role]:
        """Absolute protected path → role (reward paths included)."""
        found: dict[str, Role] = {self.absolute(f.path): f.role for f in self.files}
        for path in self.reward_paths:
            found[self.absolute(path)] = "reward"
        return found


def load_profile(path: Path) -> Profile:
    """Read a profile JSON file; errors name the file and field."""
    return load_record(Profile, path)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def profile_from_task(task_dir: Path, workspace: str = "/workspace") -> Profile:
    """The protected set of a task folder: hidden tests, visible tests in the workspace, ids.

    Hidden tests (``task.verifier.tests``) are laid over the agent's files at the same relative
    path when the verifier runs, so writing or reading that path in the workspace touches only
    the agent's own file: they are recorded as ``overlay_test`` (no rule blocks them; the task
    asked the agent to write those tests). Every other test file in the starting workspace is a
    ``visible_test`` the verifier runs as it is, hashed at the start and protected.
    """
    task = load_task(task_dir)
    files: list[ProtectedFile] = []
    tests_dir = task_dir / "tests"
    overlaid = set(task.verifier.tests)
    for rel in task.verifier.tests:
        src = task_dir / rel if (task_dir / rel).is_file() else tests_dir / rel
        digest = _sha256(src) if src.is_file() else None
        files.append(ProtectedFile(path=rel, role="overlay_test", sha256=digest))
    ws = task_dir / task.workspace
    if ws.is_dir():
        for path in sorted(p for p in ws.rglob("*") if p.is_file()):
            rel = path.relative_to(ws).as_posix()
            if rel not in overlaid and any(marker in path.name for marker in TEST_NAMES):
                files.append(ProtectedFile(path=rel, role="visible_test", sha256=_sha256(path)))
    ids = (task.source.session, Path(task.source.path).name, task.id)
    return Profile(
        task_id=task.id,
        workspace=workspace,
        files=tuple(files),
        source_ids=tuple(i for i in ids if len(i) >= 6),
    )


class IntegrityChange(BaseModel):
    """A protected file that changed during the rollout."""

    model_config = FROZEN

    path: str
    """Protected path (as in the profile)."""
    change: Literal["modified", "deleted"]
    """What happened to it."""


def changed_files(profile: Profile, root: Path) -> list[IntegrityChange]:
    """Protected files under ``root`` (the workspace after the rollout) whose hash changed.

    A hidden test that is absent is fine (it is placed only for verification); a visible test
    or grader that is gone counts as deleted.
    """
    changes: list[IntegrityChange] = []
    for item in profile.files:
        if item.sha256 is None or item.role == "overlay_test":
            continue  # an overlay test is the agent's own file until the verifier replaces it
        absolute = profile.absolute(item.path)
        rel = posixpath.relpath(absolute, profile.workspace)
        if rel.startswith(".."):
            continue
        path = root / rel
        if not path.is_file():
            if item.role != "hidden_test":
                changes.append(IntegrityChange(path=item.path, change="deleted"))
        elif _sha256(path) != item.sha256:
            changes.append(IntegrityChange(path=item.path, change="modified"))
    return changes
