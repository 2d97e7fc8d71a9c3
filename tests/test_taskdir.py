"""The task-folder owner: families read before a folder is opened, atomic saves, listing."""

from __future__ import annotations

from pathlib import Path

import pytest

from trajforge.taskdir import TASK_FILE, read_family, task_dirs, write_atomic


@pytest.mark.parametrize(
    ("text", "family"),
    [
        ('{"family": "data", "id": 3}', "data"),  # read without validating the record
        ('{"family": 7}', None),
        ('{"id": "x"}', None),
        ('["family", "data"]', None),
        ("{not json", None),
        ("", None),
    ],
)
def test_read_family_never_raises(tmp_path: Path, text: str, family: str | None) -> None:
    (tmp_path / TASK_FILE).write_text(text)
    assert read_family(tmp_path) == family


def test_read_family_of_a_folder_without_task_json(tmp_path: Path) -> None:
    assert read_family(tmp_path) is None


def test_task_dirs_skip_staging_and_files(tmp_path: Path) -> None:
    root = tmp_path / "tasks"
    for name in ("qa-b", "build-a", ".staging-x"):
        (root / name).mkdir(parents=True)
    (root / "notes.txt").write_text("x")
    assert [p.name for p in task_dirs(tmp_path)] == ["build-a", "qa-b"]
    assert task_dirs(tmp_path / "missing") == []


def test_write_atomic_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / TASK_FILE
    write_atomic(target, "one\n")
    write_atomic(target, "two\n")
    assert target.read_text() == "two\n"
    assert [p.name for p in tmp_path.iterdir()] == [TASK_FILE]
