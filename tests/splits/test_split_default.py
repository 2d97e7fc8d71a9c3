"""trajforge split without --eval-per-family: a share of each family is held out, group-aware,
and what could not be held out is reported with its reason."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from tests.splits.conftest import varied
from tests.support.inprocess import run_main
from trajforge.records import DatasetManifest, load_record
from trajforge.splits import select, split
from trajforge.splits.split import SplitSpec
from trajforge.splits.tasks import load_tasks

# build: 20 sessions of one task; repair: 7 sessions; qa: two sessions of 3 tasks each;
# extend: 3 tasks of one session (one group: cannot be split without leakage)
PLAN = (
    {f"b{i:02d}": ["build"] for i in range(20)}
    | {f"r{i}": ["repair"] for i in range(7)}
    | {"qa-one": ["qa"] * 3, "qa-two": ["qa"] * 3}
    | {"solo": ["extend"] * 3}
)


@pytest.fixture
def planned(reconstructed: Path, tmp_path: Path) -> Path:
    return varied(reconstructed, tmp_path / "planned", PLAN)


def manifest_of(dataset: Path) -> DatasetManifest:
    return load_record(DatasetManifest, dataset / "manifest.json")


def sides_per_group(dataset: Path) -> dict[str, set[str]]:
    sides: dict[str, set[str]] = defaultdict(set)
    for entry in manifest_of(dataset).tasks.values():
        sides[entry.group].add(entry.split)
    return sides


def sessions_per_side(out: Path, dataset: Path) -> dict[str, set[str]]:
    sides: dict[str, set[str]] = defaultdict(set)
    for task_id, entry in manifest_of(dataset).tasks.items():
        record = json.loads((out / "tasks" / task_id / "task.json").read_text())
        sides[entry.split].add(record["source"]["session"])
    return sides


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_default_holds_out_a_share_of_each_family(planned: Path, tmp_path: Path, seed: int) -> None:
    dataset = tmp_path / "ds"
    summary = split.run(planned, dataset, SplitSpec(seed=seed))
    # build 15% of 20 = 3; repair 15% of 7 → 1; qa 15% of 6 → 1, but its groups hold 3 tasks
    # each: one whole group goes (3 of 6, never both); extend is one group: nothing
    assert summary.counts["coding"]["test"] == {"build": 3, "qa": 3, "repair": 1}
    assert summary.counts["coding"]["train"] == {"build": 17, "extend": 3, "qa": 3, "repair": 6}
    assert all(len(s) == 1 for s in sides_per_group(dataset).values())
    sessions = sessions_per_side(planned, dataset)
    assert not sessions["train"] & sessions["test"]
    assert len({s for s in sessions["test"] if s.startswith("qa-")}) == 1
    held = summary.held_out
    assert {f: (h.tasks, h.groups, h.target, h.held_out) for f, h in held.items()} == {
        "build": (20, 20, 3, 3),
        "extend": (3, 1, 0, 0),
        "qa": (6, 2, 1, 3),
        "repair": (7, 7, 1, 1),
    }
    assert held["qa"].held_out_groups == 1 and held["build"].held_out_groups == 3
    assert list(summary.not_held_out) == ["extend"]
    assert "all 3 tasks are in one group" in summary.not_held_out["extend"]
    assert summary.holdout_rule.startswith("default: 15% of each family")
    assert not summary.shortfalls
    manifest = manifest_of(dataset)
    assert manifest.split.targets == {}
    assert manifest.split.per_family == {"build": 3, "extend": 0, "qa": 1, "repair": 1}
    assert manifest.split.achieved == {"build": 3, "extend": 0, "qa": 3, "repair": 1}
    card = (dataset / "README.md").read_text()
    assert "Held-out shortfall: extend: not held out: all 3 tasks are in one group" in card


def test_seven_tasks_from_three_projects_hold_out_one_project(
    reconstructed: Path, tmp_path: Path
) -> None:
    """The report of issue 30: 7 accepted qa tasks from 3 projects all went to train."""
    out = varied(
        reconstructed, tmp_path / "qa7", {"p1": ["qa"] * 3, "p2": ["qa"] * 2, "p3": ["qa"] * 2}
    )
    summary = split.run(out, tmp_path / "ds")
    assert summary.counts["coding"]["test"] == {"qa": 2}
    assert summary.counts["coding"]["train"] == {"qa": 5}
    sessions = sessions_per_side(out, tmp_path / "ds")
    assert len(sessions["test"]) == 1 and not sessions["train"] & sessions["test"]
    assert summary.not_held_out == {}


def test_single_task_family_and_shared_group_stay_in_train(
    varied_out: Path, tmp_path: Path
) -> None:
    dataset = tmp_path / "ds"
    summary = split.run(varied_out, dataset)
    # extend is one task, in the group (session multi-a) it shares with a build and a repair
    assert summary.not_held_out == {
        "extend": "a single task: holding it out would leave the family without train tasks"
    }
    extend = [t for t, e in manifest_of(dataset).tasks.items() if e.family == "extend"]
    assert manifest_of(dataset).tasks[extend[0]].split == "train"
    assert "multi-a" in sessions_per_side(varied_out, dataset)["train"]
    assert all(len(s) == 1 for s in sides_per_group(dataset).values())
    test = summary.counts["coding"]["test"]
    assert set(test) == {"build", "qa", "repair"} and all(n >= 1 for n in test.values())


def test_default_targets_rounding_and_bounds(varied_out: Path) -> None:
    groups = select.groups(load_tasks(varied_out).accepted)
    sizes = select.family_sizes(groups)
    assert sizes == {"build": (11, 10), "extend": (1, 1), "qa": (4, 4), "repair": (7, 7)}
    # 15% of 11 = 1.65 → 2; of 4 = 0.6 → at least 1; of 7 = 1.05 → 1; one group → 0
    assert select.default_targets(groups) == {"build": 2, "extend": 0, "qa": 1, "repair": 1}
    # half up, and never every task: 50% of 7 = 3.5 → 4; 100% of 4 → 3
    assert select.default_targets(groups, 0.5)["repair"] == 4
    assert select.default_targets(groups, 1.0) == {"build": 10, "extend": 0, "qa": 3, "repair": 6}


def test_two_task_family_in_two_groups_holds_out_one(reconstructed: Path, tmp_path: Path) -> None:
    out = varied(reconstructed, tmp_path / "two", {"a": ["repair"], "b": ["repair"]})
    for seed in range(4):
        summary = split.run(out, tmp_path / f"ds{seed}", SplitSpec(seed=seed))
        assert summary.counts["coding"]["test"] == {"repair": 1}
        assert summary.counts["coding"]["train"] == {"repair": 1}


def test_eval_per_family_zero_holds_out_nothing(
    planned: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dataset = tmp_path / "ds"
    args = ("split", str(planned), "-o", str(dataset), "--eval-per-family", "0", "--json")
    code, stdout, _ = run_main(capsys, *args)
    assert code == 0
    summary = json.loads(stdout)
    assert all(e.split == "train" for e in manifest_of(dataset).tasks.values())
    assert not any(summary["counts"]["coding"]["test"].values())
    assert summary["holdout_rule"] == "--eval-per-family 0"
    assert summary["not_held_out"] == {
        f: "--eval-per-family sets its target to 0" for f in ("build", "extend", "qa", "repair")
    }
    assert summary["shortfalls"] == [] and manifest_of(dataset).split.shortfalls == ()


def test_explicit_targets_are_kept_as_given(planned: Path, tmp_path: Path) -> None:
    summary = split.run(planned, tmp_path / "ds", SplitSpec(("build=2,qa=1",)))
    # qa's groups (3 tasks each) do not fit 1: an explicit target is not overshot
    assert summary.counts["coding"]["test"] == {"build": 2}
    assert summary.shortfalls == [
        "qa: wanted 1, selected 0 (not enough tasks, or the remaining groups are larger than "
        "the gap)"
    ]
    assert summary.not_held_out["repair"] == "no --eval-per-family target covers it"
    assert summary.not_held_out["qa"].startswith("no group of its 2 fits a target of 1")
    assert manifest_of(tmp_path / "ds").split.shortfalls == tuple(summary.shortfalls)


def test_cli_prints_and_json_carries_the_held_out_summary(
    planned: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, stdout, stderr = run_main(capsys, "split", str(planned), "-o", str(tmp_path / "a"))
    assert code == 0, stderr
    lines = stdout.splitlines()
    held = next(line for line in lines if line.startswith("held out ("))
    assert held.startswith("held out (default: 15% of each family")
    assert held.endswith(
        "build 3 of 20 (3 of 20 groups), qa 3 of 6 (1 of 2 groups), repair 1 of 7 (1 of 7 groups)"
    )
    assert "not held out: extend: all 3 tasks are in one group" in stdout
    args = ("split", str(planned), "-o", str(tmp_path / "b"), "--json")
    code, stdout, stderr = run_main(capsys, *args)
    assert code == 0, stderr
    summary = json.loads(stdout)
    assert {f: h["held_out"] for f, h in summary["held_out"].items()} == {
        "build": 3,
        "extend": 0,
        "qa": 3,
        "repair": 1,
    }
    assert summary["held_out"]["qa"] == {
        "tasks": 6,
        "groups": 2,
        "target": 1,
        "held_out": 3,
        "held_out_groups": 1,
    }
    assert list(summary["not_held_out"]) == ["extend"]
    assert summary["holdout_rule"].startswith("default: 15%")
    test_counts = Counter(
        e.family for e in manifest_of(tmp_path / "b").tasks.values() if e.split == "test"
    )
    assert test_counts == {"build": 3, "qa": 3, "repair": 1}
