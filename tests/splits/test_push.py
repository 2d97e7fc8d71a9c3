"""trajforge push --to DIR: a local git repository in Hub layout, read back with `datasets`."""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path

import pytest

from trajforge.errors import UsageError
from trajforge.records import DatasetManifest, Task, dump_record, load_record
from trajforge.splits import select, split
from trajforge.splits.dedup import dedup
from trajforge.splits.localgit import PushError, checkout
from trajforge.splits.push import hub_repo_id, push
from trajforge.splits.tasks import PACKED, load_tasks

datasets = pytest.importorskip("datasets", reason="SKIPPED: `datasets` is not installed")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def commits(repo: Path) -> int:
    return int(git(repo, "rev-list", "--all", "--count"))


def tags(repo: Path) -> list[str]:
    return git(repo, "tag", "--list").split()


def one_group_targets(out: Path) -> tuple[str, ...]:
    """Held-out targets that exactly fit one group of the deduplicated tasks."""
    kept, _ = dedup(load_tasks(out).accepted)
    group = select.groups(kept)[0]
    return (",".join(f"{f}={n}" for f, n in group.families.items()),)


@pytest.fixture
def dataset(accepted_out: Path, tmp_path: Path) -> Path:
    path = tmp_path / "ds"
    summary = split.run(accepted_out, path, split.SplitSpec(one_group_targets(accepted_out)))
    assert not summary.shortfalls
    return path


def unpack(files: list[dict[str, str]]) -> dict[str, bytes]:
    return {
        f["path"]: base64.b64decode(f["content"])
        if f["encoding"] == "base64"
        else f["content"].encode()
        for f in files
    }


def folder_bytes(root: Path) -> dict[str, bytes]:
    if not root.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_round_trip_through_load_dataset(accepted_out: Path, dataset: Path, tmp_path: Path) -> None:
    repo = tmp_path / "hub"
    result = push(dataset, str(repo), "v1")
    assert result.created and tags(repo) == ["v1"]
    clone = checkout(repo, "v1", tmp_path / "clone")
    manifest = load_record(DatasetManifest, clone / "manifest.json")
    cache = str(tmp_path / "hf-cache")  # a fresh cache: the rows come from the files pushed
    loaded = datasets.load_dataset(str(clone), "coding", revision="v1", cache_dir=cache)
    assert set(loaded) == {"train", "test"}
    seen: dict[str, str] = {}
    for name in loaded:
        for row in loaded[name]:
            seen[row["id"]] = name
            task_dir = accepted_out / "tasks" / row["id"]
            assert row["task_json"] == dump_record(load_record(Task, task_dir / "task.json"))
            for folder in PACKED:
                assert unpack(row[folder]) == folder_bytes(task_dir / folder), (row["id"], folder)
    assert seen == {k: e.split for k, e in manifest.tasks.items()}
    kept = (
        {t.task.id for t in load_tasks(dataset.parent.parent / "out").accepted} if False else None
    )
    assert kept is None


def load_tasks_record(task_dir: Path) -> str:
    from trajforge.records import Task, dump_record

    return dump_record(load_record(Task, task_dir / "task.json"))


def test_repush_identical_content_makes_no_commit(dataset: Path, tmp_path: Path) -> None:
    repo = tmp_path / "hub"
    first = push(dataset, str(repo), "v1")
    again = push(dataset, str(repo), "v1")
    renamed = push(dataset, str(repo), "v1-copy")
    assert commits(repo) == 1
    assert not again.created and not renamed.created
    assert first.commit == again.commit == renamed.commit
    assert tags(repo) == ["v1", "v1-copy"]


def test_new_content_new_commit_and_tags_are_immutable(
    accepted_out: Path, dataset: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "hub"
    push(dataset, str(repo), "v1")
    other = tmp_path / "ds2"
    split.run(accepted_out, other, revision="second")
    result = push(other, str(repo), "v2")
    assert result.created and commits(repo) == 2
    assert git(repo, "rev-parse", "main") == result.commit
    with pytest.raises(UsageError, match=r"already exists .* other content"):
        push(other, str(repo), "v1")
    assert git(repo, "rev-parse", "v1^{commit}") != result.commit


def test_corrupt_dataset_is_refused_and_nothing_is_pushed(dataset: Path, tmp_path: Path) -> None:
    repo = tmp_path / "hub"
    parquet = next(dataset.glob("data/*/*.parquet"))
    parquet.write_bytes(parquet.read_bytes()[:-10])
    with pytest.raises(UsageError, match="differs from the sha256"):
        push(dataset, str(repo), "v1")
    assert not repo.exists() or not tags(repo)


def test_failure_at_the_ref_update_leaves_no_partial_revision(
    accepted_out: Path, dataset: Path, tmp_path: Path
) -> None:
    repo = tmp_path / "hub"
    push(dataset, str(repo), "v1")
    main_before = git(repo, "rev-parse", "main")
    other = tmp_path / "ds2"
    split.run(accepted_out, other, revision="second")
    lock = repo / "refs" / "tags" / "v2.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("held by another writer\n")
    with pytest.raises(PushError, match="update-ref"):
        push(other, str(repo), "v2")
    assert tags(repo) == ["v1"]
    assert git(repo, "rev-parse", "main") == main_before
    lock.unlink()
    assert push(other, str(repo), "v2").created


def test_bad_targets(dataset: Path, tmp_path: Path) -> None:
    (tmp_path / "notrepo").mkdir()
    (tmp_path / "notrepo" / "file.txt").write_text("x")
    with pytest.raises(UsageError, match="not a bare git repository"):
        push(dataset, str(tmp_path / "notrepo"), "v1")
    with pytest.raises(UsageError, match="valid git tag"):
        push(dataset, str(tmp_path / "hub"), "bad..name")
    with pytest.raises(UsageError, match="not a dataset folder"):
        push(tmp_path / "notrepo", str(tmp_path / "hub"), "v1")
    assert hub_repo_id("hf://datasets/org/name") == "org/name"
    for bad in ("hf://models/org/name", "hf://datasets/org", "hf://datasets/a/b/c"):
        with pytest.raises(UsageError):
            hub_repo_id(bad)
