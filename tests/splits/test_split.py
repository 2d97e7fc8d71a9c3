"""trajforge split: dedup, group-aware stratified held-out selection, dataset layout."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from tests.splits.conftest import derive, varied
from tests.support.inprocess import run_main
from trajforge.errors import UsageError
from trajforge.records import DatasetManifest, DatasetVersions, load_record
from trajforge.splits import select, split
from trajforge.splits.dedup import dedup
from trajforge.splits.split import SplitSpec
from trajforge.splits.tasks import load_task, load_tasks


def manifest_of(dataset: Path) -> DatasetManifest:
    return load_record(DatasetManifest, dataset / "manifest.json")


def test_exact_duplicates_across_harnesses_are_removed(accepted_out: Path) -> None:
    report = load_tasks(accepted_out)
    kept, removed = dedup(report.accepted)
    # the five harnesses recorded the same build scenario: one build task survives exactly
    builds = [t for t in report.accepted if t.task.family == "build"]
    assert len(builds) >= 4
    assert sum(1 for t in kept if t.task.family == "build") == 1
    exact = [d for d in removed if d.kind == "exact"]
    assert exact and all(d.similarity == 1.0 for d in exact)
    kept_ids = {t.task.id for t in kept}
    assert all(d.kept in kept_ids and d.removed not in kept_ids for d in removed)
    assert len(kept) + len(removed) == len(report.accepted)


def test_near_duplicate_is_removed_and_distinct_task_is_kept(accepted_out: Path) -> None:
    tasks = accepted_out / "tasks"
    original = next(p for p in sorted(tasks.iterdir()) if p.name.startswith("repair"))
    near = tasks / "repair-ffffffffffffff01"
    shutil.copytree(original, near)
    data = json.loads((near / "task.json").read_text())
    data["id"] = near.name
    data["instruction"] += " Please keep the change small."
    (near / "task.json").write_text(json.dumps(data))
    distinct = derive(original, tasks, "repair", "other-session", random.Random(1))
    items = [load_task(original), load_task(near), load_task(tasks / distinct)]
    kept, removed = dedup(items)
    assert [d.removed for d in removed] == [near.name]
    assert removed[0].kind == "near" and 0.8 <= removed[0].similarity < 1.0
    assert {t.task.id for t in kept} == {original.name, distinct}
    # a stricter threshold keeps the near duplicate
    kept_strict, _ = dedup(items, threshold=0.99)
    assert near.name in {t.task.id for t in kept_strict}


def test_no_session_straddles_train_and_test(varied_out: Path, tmp_path: Path) -> None:
    dataset = tmp_path / "ds"
    split.run(varied_out, dataset, SplitSpec(("build=4,repair=3,extend=1",), seed=3))
    manifest = manifest_of(dataset)
    sides: dict[str, set[str]] = defaultdict(set)
    for task_id, entry in manifest.tasks.items():
        record = json.loads((varied_out / "tasks" / task_id / "task.json").read_text())
        sides[record["source"]["session"]].add(entry.split)
    assert all(len(s) == 1 for s in sides.values()), sides
    assert {"train", "test"} == {e.split for e in manifest.tasks.values()}


def test_shared_project_file_links_sessions(varied_out: Path) -> None:
    tasks = sorted((varied_out / "tasks").iterdir())
    a, b = tasks[0], tasks[1]
    shared = "def helper():\n    return 'a project file long enough to identify the project'\n"
    for folder in (a, b):
        (folder / "workspace" / "helper.py").write_text(shared)
    items = load_tasks(varied_out).accepted
    group_of = {m: g.id for g in select.groups(items) for m in g.members}
    assert group_of[a.name] == group_of[b.name]
    assert len(set(group_of.values())) < len(items)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stratified_sizes_are_met_exactly(varied_out: Path, tmp_path: Path, seed: int) -> None:
    dataset = tmp_path / "ds"
    summary = split.run(varied_out, dataset, SplitSpec(("build=3,repair=2", "qa=1"), seed=seed))
    test_counts = summary.counts["coding"]["test"]
    assert test_counts == {"build": 3, "qa": 1, "repair": 2}
    assert not summary.shortfalls
    assert manifest_of(dataset).split.achieved == {"build": 3, "qa": 1, "repair": 2}


def test_selection_is_seeded(varied_out: Path, tmp_path: Path) -> None:
    def held(seed: int, name: str) -> set[str]:
        split.run(varied_out, tmp_path / name, SplitSpec(("build=3,repair=2",), seed=seed))
        entries = manifest_of(tmp_path / name).tasks
        return {k for k, e in entries.items() if e.split == "test"}

    first = held(5, "a")
    assert held(5, "b") == first
    assert any(held(seed, f"c{seed}") != first for seed in range(6, 12))


def test_config_totals_and_shortfalls(varied_out: Path, tmp_path: Path) -> None:
    summary = split.run(varied_out, tmp_path / "ds", SplitSpec(("coding=9",)))
    per_family = manifest_of(tmp_path / "ds").split.per_family
    assert sum(per_family.values()) == 9 and set(per_family) == {"build", "extend", "qa", "repair"}
    assert sum(summary.counts["coding"]["test"].values()) <= 9
    short = split.run(varied_out, tmp_path / "ds2", SplitSpec(("qa=50",)))
    assert short.shortfalls and short.shortfalls[0].startswith("qa: wanted 50, selected 4")


def test_bad_targets_and_inputs_are_usage_errors(varied_out: Path, tmp_path: Path) -> None:
    for spec in ("build=x", "nosuch=3", "build=-1"):
        with pytest.raises(UsageError):
            split.run(varied_out, tmp_path / "ds", SplitSpec((spec,)))
    with pytest.raises(UsageError, match="no tasks/ folder"):
        split.run(tmp_path / "missing", tmp_path / "ds")
    (tmp_path / "occupied").mkdir()
    (tmp_path / "occupied" / "keep.txt").write_text("mine")
    with pytest.raises(UsageError, match="not a trajforge dataset"):
        split.run(varied_out, tmp_path / "occupied")
    assert (tmp_path / "occupied" / "keep.txt").read_text() == "mine"


def test_near_threshold_out_of_range_is_a_usage_error(
    varied_out: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(UsageError, match=r"--near-threshold .*: must be in \(0, 1\]"):
            SplitSpec(threshold=bad)
    assert SplitSpec(threshold=1.0).threshold == 1.0
    dataset = tmp_path / "ds"
    args = ("split", str(varied_out), "-o", str(dataset), "--near-threshold", "1.5")
    code, _, stderr = run_main(capsys, *args)
    assert code == 2 and "--near-threshold 1.5: must be in (0, 1]" in stderr
    assert "Traceback" not in stderr and not dataset.exists()


def test_only_accepted_tasks_and_unreadable_ones_are_counted(
    accepted_out: Path, tmp_path: Path
) -> None:
    broken = accepted_out / "tasks" / "build-0000000000000000"
    broken.mkdir()
    (broken / "task.json").write_text("{not json")
    summary = split.run(accepted_out, tmp_path / "ds", SplitSpec(("0",)))
    assert summary.yields["by_status"]["pending"] == 1
    assert summary.yields["by_status"]["unreadable"] == 1
    assert summary.exit_code() == 1
    assert "build-0000000000000000" in summary.problems[0]
    assert all(t.split == "train" for t in manifest_of(tmp_path / "ds").tasks.values())


def test_layout_parquet_card_and_manifest(varied_out: Path, tmp_path: Path) -> None:
    dataset = tmp_path / "ds"
    versions = DatasetVersions(sandbox_image="img@1", guard_bundle="g-2")
    split.run(varied_out, dataset, SplitSpec(("build=2",)), versions=versions)
    manifest = manifest_of(dataset)
    assert manifest.versions.guard_bundle == "g-2" and manifest.versions.sandbox_image == "img@1"
    assert manifest.revision.startswith("r-")
    for rel, digest in manifest.files.items():
        assert hashlib.sha256((dataset / rel).read_bytes()).hexdigest() == digest
    card = (dataset / "README.md").read_text()
    front = yaml.safe_load(card.split("---")[1])
    listed = {
        (c["config_name"], f["split"]): f["path"] for c in front["configs"] for f in c["data_files"]
    }
    for (config, name), pattern in listed.items():
        assert [p.relative_to(dataset).as_posix() for p in dataset.glob(pattern)] == [
            f"data/{config}/{name}-00000-of-00001.parquet"
        ]
    assert set(listed) == {("coding", "train"), ("coding", "test")}
    assert "| coding | test | 2 | 0 | 0 | 0 | 2 |" in card
    assert "Family imbalance: build 11, extend 1, qa 4, repair 7." in card
    table = pq.read_table(dataset / "data/coding/test-00000-of-00001.parquet")
    assert table.num_rows == 2
    assert sorted(table.column("id").to_pylist()) == sorted(
        k for k, e in manifest.tasks.items() if e.split == "test"
    )
    row = table.slice(0, 1).to_pylist()[0]
    assert row["oracle"][0]["path"] == "notes.txt" and row["oracle"][0]["encoding"] == "utf-8"


def test_resplit_gives_identical_bytes(varied_out: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "ds", tmp_path / "b" / "ds"
    split.run(varied_out, a, SplitSpec(("build=2",), seed=1))
    split.run(varied_out, b, SplitSpec(("build=2",), seed=1))
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for rel in files_a:
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_family_imbalance_is_a_known_limit(reconstructed: Path, tmp_path: Path) -> None:
    out = varied(
        reconstructed, tmp_path / "imb", {f"s{i}": ["build"] for i in range(7)} | {"q": ["qa"]}
    )
    split.run(out, tmp_path / "ds")
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "Family imbalance: build 7, qa 1." in card


def test_distinct_tasks_are_never_near_duplicates(reconstructed: Path, tmp_path: Path) -> None:
    # regression: a shingle with a small hash used to win most permutations (false near dups)
    out = varied(reconstructed, tmp_path / "many", {f"s{i}": ["build"] for i in range(300)})
    kept, removed = dedup(load_tasks(out).accepted)
    assert removed == [] and len(kept) == 300
