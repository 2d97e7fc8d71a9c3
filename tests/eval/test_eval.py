"""``trajforge eval`` end to end with scripted arms through the real pi CLI.

The replay policy (the task's recorded episode) is the strong arm, ``give_up`` the weak one;
every attempt runs the real harness behind the guard proxy and the hidden verifier in the
local sandbox. Skips loudly when pi is not installed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.eval.conftest import REPO, REVISION, cli, config_text, need_pi
from trajforge.errors import UsageError
from trajforge.records import DeploymentUnit
from trajforge.registry import SANDBOXES, create
from trajforge.train.evaluation.config import DatasetRef, load_config
from trajforge.train.evaluation.dataset import load_dataset
from trajforge.train.evaluation.metrics import compute
from trajforge.train.evaluation.run import Attempt, eval_setup, run_attempt

pytestmark = pytest.mark.slow  # a module fixture validates tasks: dispatched first

FAMILIES = {"repair", "qa"}
BOOT = {"samples": 200, "seed": 0, "confidence": 0.95}
K = 2


@pytest.fixture(scope="module")
def run(dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """One eval run: repair + qa tasks, k=2, both arms, via the CLI with --json."""
    version = need_pi()
    root = tmp_path_factory.mktemp("eval-run")
    config = root / "eval.toml"
    config.write_text(
        config_text(dataset).replace(
            'families = ["build", "extend", "repair", "qa"]', 'families = ["repair", "qa"]'
        )
    )
    out = root / "out"
    proc = cli("eval", "--config", str(config), "--output-dir", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    doc["pi_version"] = version
    return out, doc


def test_one_row_per_attempt(run: tuple[Path, dict[str, Any]]) -> None:
    out, doc = run
    rows = pq.read_table(out / "results.parquet").to_pylist()
    assert len(rows) == len(FAMILIES) * K * 2 == doc["attempts"]
    assert {r["family"] for r in rows} == FAMILIES
    assert len({(r["arm"], r["task"], r["attempt"]) for r in rows}) == len(rows)
    assert all(r["status"] == "ok" and r["reward"] is not None for r in rows), rows
    give_up = [r for r in rows if r["arm"] == "base"]
    assert all(r["calls"] == 0 and r["policy"] == "scripted:give_up" for r in give_up)
    replay = [r for r in rows if r["arm"] == "adapter"]
    assert all(r["calls"] >= 1 and r["success"] for r in replay)


def test_replay_beats_give_up_in_every_family(run: tuple[Path, dict[str, Any]]) -> None:
    _, doc = run
    metrics = doc["metrics"]
    assert set(metrics) == {"all", *FAMILIES}
    for family in FAMILIES:
        base, adapter, diff = (metrics[family][k] for k in ("base", "adapter", "difference"))
        assert adapter["success_rate"] > base["success_rate"], family
        assert adapter[f"pass_at_{K}"] == 1.0 and base[f"pass_at_{K}"] == 0.0
        assert diff["success_rate"] == 1.0 and diff["success_ci"] == [1.0, 1.0]
        assert diff["ci_excludes_zero"] is True
    overall = metrics["all"]["difference"]
    assert overall["paired_tasks"] == len(FAMILIES) and overall["ci_excludes_zero"] is True
    assert metrics["all"]["adapter"]["reward_variance"] == 0.0  # scripted: identical attempts
    # calls per success only beside accuracy: the base arm solved nothing, so no comparison
    assert overall["efficiency"].startswith("not comparable")


def test_reports_name_every_family(run: tuple[Path, dict[str, Any]]) -> None:
    out, _ = run
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    for family in FAMILIES:
        assert f"### {family}" in md and f"<h3>{family}</h3>" in html
    assert "## Failures per family" in md and "scripted" in md
    assert "I could not complete this task." in md  # the give-up answers are listed
    assert html.count("<svg") == 4 and "Success rate per family" in html
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["run"]["dataset"]["revision"] == REVISION


def test_deployment_units_are_frozen(run: tuple[Path, dict[str, Any]]) -> None:
    out, doc = run
    units = json.loads((out / "deployment_units.json").read_text())
    base, adapter = (DeploymentUnit.model_validate(units[a]) for a in ("base", "adapter"))
    assert (base.adapter, adapter.adapter) == ("give_up", "replay")
    assert base.base_model == adapter.base_model == "scripted"
    assert base.harness == "pi" and base.harness_version == doc["pi_version"]
    same = base.model_dump(exclude={"adapter", "adapter_revision"})
    assert same == adapter.model_dump(exclude={"adapter", "adapter_revision"})
    frozen = base.provenance.config
    assert frozen["dataset"]["revision"] == REVISION and frozen["budget"]["max_steps"] == 30
    assert set(frozen["sampling"]) == {"temperature", "top_p", "max_tokens", "seed"}
    config = json.loads((out / "config.json").read_text())
    assert len(config["resolved"]["tasks"]) == len(FAMILIES)


def test_a_second_run_into_the_same_folder_is_refused(
    run: tuple[Path, dict[str, Any]], dataset: Path
) -> None:
    out, _ = run
    config = out.parent / "eval.toml"
    proc = cli("eval", "--config", str(config), "--output-dir", str(out))
    assert proc.returncode == 2 and "already holds an eval run" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_dataset_from_a_local_hub_revision(dataset: Path, tmp_path: Path) -> None:
    hub = tmp_path / "hub"
    pushed = cli("push", str(dataset), "--to", str(hub), "--json")
    assert pushed.returncode == 0, pushed.stderr
    loaded = load_dataset(DatasetRef(path=str(hub), revision=REVISION, split="test"), tmp_path)
    direct = load_dataset(
        DatasetRef(path=str(dataset), revision=REVISION, split="test"), tmp_path / "direct"
    )
    assert [t.id for t in loaded.tasks] == [t.id for t in direct.tasks]
    assert loaded.manifest_sha256 == direct.manifest_sha256
    for task in loaded.tasks:  # rebuilt byte for byte: the same files as the direct folder
        twin = tmp_path / "direct" / "tasks" / task.id
        files = sorted(p.relative_to(task.folder) for p in task.folder.rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(twin) for p in twin.rglob("*") if p.is_file())
        assert all((task.folder / f).read_bytes() == (twin / f).read_bytes() for f in files)
    with pytest.raises(UsageError, match="cannot check out 'nope'"):
        load_dataset(DatasetRef(path=str(hub), revision="nope", split="test"), tmp_path / "x")
    with pytest.raises(UsageError, match="is revision 'eval-t1'"):
        load_dataset(DatasetRef(path=str(dataset), revision="v9", split="test"), tmp_path / "y")
    with pytest.raises(UsageError, match=r"dataset.split 'dev'.*splits: test, train"):
        load_dataset(DatasetRef(path=str(dataset), revision=REVISION, split="dev"), tmp_path)


def test_an_attempt_that_cannot_run_is_an_error_row(dataset: Path, tmp_path: Path) -> None:
    need_pi()
    ref = DatasetRef(path=str(dataset), revision=REVISION, split="test", families=("repair",))
    [task] = load_dataset(ref, tmp_path).tasks
    record = json.loads((task.folder / "task.json").read_text())
    record["source"]["path"] = str(tmp_path / "gone.jsonl")  # the replay source is missing
    (task.folder / "task.json").write_text(json.dumps(record))
    config = load_config(REPO / "examples" / "eval-scripted-cpu.toml")
    config = config.model_copy(update={"harness_sandbox": "off"})
    setup = eval_setup(config, create(SANDBOXES, "local", "sandbox"))
    row = run_attempt(setup, config.arms.adapter, None, Attempt("adapter", task, 0))
    assert row["status"] == "error" and row["reward"] is None and row["success"] is None
    assert "source.path" in row["reasons"][0] and "not found" in row["reasons"][0]
    assert compute([row], 1, BOOT)["repair"]["adapter"]["errors"] == 1


def test_giving_up_scores_zero_on_every_family(dataset: Path, tmp_path: Path) -> None:
    """The give-up arm in the real harness on extend, repair and qa: reward 0 each. (Two of
    the extend task's three hidden tests pass on the starting workspace: "the share of hidden
    tests passed" paid 0.67 for doing nothing; the fail-to-pass reward pays 0.)"""
    need_pi()
    ref = DatasetRef(path=str(dataset), revision=REVISION, split="test")
    tasks = load_dataset(ref, tmp_path).tasks
    assert {t.family for t in tasks} == {"extend", "repair", "qa"}
    config = load_config(REPO / "examples" / "eval-scripted-cpu.toml")
    config = config.model_copy(update={"harness_sandbox": "off"})
    setup = eval_setup(config, create(SANDBOXES, "local", "sandbox"))
    for n, task in enumerate(tasks):
        attempt = Attempt("base", task, n)
        got = run_attempt(setup, config.arms.base, None, attempt)
        assert got["status"] == "ok" and got["reward"] == 0.0, (task.family, got)
        assert got["success"] is False
