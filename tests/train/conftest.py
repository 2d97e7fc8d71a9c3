"""Shared fixtures of the train tests: accepted tasks built for real from the pi fixtures."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from trajforge.records import Task, load_record

REPO = Path(__file__).resolve().parents[2]
SESSIONS = REPO / "tests" / "fixtures" / "sessions" / "pi"


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "trajforge.cli.main", *args]
    return subprocess.run(argv, capture_output=True, text=True, check=False, cwd=REPO)


@pytest.fixture(scope="session")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Accepted tasks by family, built from the pi repair and build fixture sessions."""
    out = tmp_path_factory.mktemp("replay-tasks")
    made = _cli(
        "reconstruct", str(SESSIONS / "repair.jsonl"), str(SESSIONS / "build.jsonl"), "-o", str(out)
    )
    assert made.returncode == 0, made.stderr
    checked = _cli("validate", str(out), "--set", "max_mutants=2", "--json")
    assert checked.returncode == 0, checked.stderr
    found: dict[str, Path] = {}
    for task_dir in sorted((out / "tasks").iterdir()):
        task = load_record(Task, task_dir / "task.json")
        assert task.validation.status == "accepted", (task.id, task.validation.reasons)
        found[task.family] = task_dir
    assert set(found) == {"build", "extend", "repair"}
    return found


@pytest.fixture(scope="session")
def dataset(tasks: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset revision (all tasks in train) of the same accepted tasks."""
    out = next(iter(tasks.values())).parent.parent
    data = tmp_path_factory.mktemp("train-data") / "dataset"
    split = _cli("split", str(out), "-o", str(data), "--eval-per-family", "0", "--revision", "t1")
    assert split.returncode == 0, split.stderr
    return data


@pytest.fixture(scope="session")
def models(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return {"TRAJFORGE_MODELS": str(tmp_path_factory.mktemp("models"))}
