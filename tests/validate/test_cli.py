"""`trajforge validate` / `trajforge verify` as a user runs them (subprocesses)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.validate.conftest import CORPUS, local_context, one_per_harness, pick, tasks_of
from trajforge.reconstruct import pipeline
from trajforge.records import Reason
from trajforge.verifiers.validate import run

pytestmark = pytest.mark.slow  # a module fixture validates tasks: dispatched first


def cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trajforge.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def repair_out(validated: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repair and a qa task validated by the library; the CLI then finds both cached."""
    tasks = tasks_of(validated)
    ids = [next(i for i, t in sorted(tasks.items()) if t.family == f) for f in ("repair", "qa")]
    out = pick(validated, tmp_path_factory.mktemp("cli"), ids)
    result = cli("validate", str(out), "--set", "max_mutants=4", "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["totals"]["accepted"] == 2, doc["tasks"]
    assert doc["run"] == {"validated": 0, "cached": 2}
    assert (out / "report.html").is_file()
    return out


def _task_dir(out: Path, family: str) -> Path:
    return next(p for p in (out / "tasks").iterdir() if p.name.startswith(family))


def test_verify_files_oracle_full_reward_workspace_less(repair_out: Path, tmp_path: Path) -> None:
    task_dir = _task_dir(repair_out, "repair")
    good = cli("verify", str(task_dir), "--files", str(task_dir / "oracle"), "--json")
    assert good.returncode == 0, good.stderr
    doc = json.loads(good.stdout)
    assert doc["reward"] == 1.0 and doc["passed"] and len(doc["tests"]) == 3
    bad = json.loads(
        cli("verify", str(task_dir), "--files", str(task_dir / "workspace"), "--json").stdout
    )
    assert bad["reward"] < 1 and not bad["passed"]
    assert [t["name"] for t in bad["tests"] if t["outcome"] == "fail"] == ["test_calc::test_below"]
    # --whole: DIR is the entire final workspace, so the module it lacks was deleted
    gone = tmp_path / "gone"
    shutil.copytree(task_dir / "oracle", gone)
    (gone / "calc.py").unlink()
    laid = json.loads(cli("verify", str(task_dir), "--files", str(gone), "--json").stdout)
    assert [t["name"] for t in laid["tests"] if t["outcome"] != "pass"] == ["test_calc::test_below"]
    whole = cli("verify", str(task_dir), "--files", str(gone), "--whole", "--json")
    assert whole.returncode == 0, whole.stderr
    assert not [t for t in json.loads(whole.stdout)["tests"] if t["outcome"] == "pass"]


def test_verify_answer_right_and_wrong(repair_out: Path) -> None:
    task_dir = _task_dir(repair_out, "qa")
    right = json.loads(cli("verify", str(task_dir), "--answer", "136.5", "--json").stdout)
    assert right["reward"] == 1.0 and right["passed"]
    wrong = json.loads(cli("verify", str(task_dir), "--answer", "137.5", "--json").stdout)
    assert wrong["reward"] == 0.0 and not wrong["passed"]


def test_usage_errors_exit_2(repair_out: Path, tmp_path: Path) -> None:
    teacher = cli("validate", str(repair_out), "--teacher", "openai:")
    assert teacher.returncode == 2 and "expected mined or openai:MODEL" in teacher.stderr
    bad_key = cli("validate", str(repair_out), "--set", "max_mutant=3")
    assert bad_key.returncode == 2 and "unknown setting 'max_mutant'" in bad_key.stderr
    bad_value = cli("validate", str(repair_out), "--set", "min_kill_rate=2")
    assert bad_value.returncode == 2 and "min_kill_rate" in bad_value.stderr
    toml = tmp_path / "v.toml"
    toml.write_text("[validate]\noracle_runs = 'three'\n")
    bad_file = cli("validate", str(repair_out), "--config", str(toml))
    assert bad_file.returncode == 2 and str(toml) in bad_file.stderr
    assert "oracle_runs" in bad_file.stderr and "Traceback" not in bad_file.stderr
    both = cli("verify", str(_task_dir(repair_out, "qa")))
    assert both.returncode == 2 and "exactly one of" in both.stderr
    assert cli("validate", str(tmp_path / "nowhere")).returncode == 2


def test_kill_9_then_rerun_loses_and_duplicates_nothing(
    reconstructed: Path, tmp_path: Path
) -> None:
    tasks = tasks_of(reconstructed)
    ids = one_per_harness(tasks, "repair")[:2]
    out = pick(reconstructed, tmp_path, ids)
    settings = ["--set", "max_mutants=1", "--set", "oracle_runs=1"]
    args = [sys.executable, "-m", "trajforge.cli.main", "validate", str(out), *settings, "--json"]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while proc.poll() is None and not _finished(out):
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    done_first = _finished(out)
    assert 1 <= len(done_first) < len(ids) or proc.returncode == 0
    again = cli("validate", str(out), *settings, "--json")
    assert again.returncode == 0, again.stderr
    doc = json.loads(again.stdout)
    assert sorted(r["id"] for r in doc["tasks"]) == sorted(ids)
    assert doc["totals"]["accepted"] == len(ids)
    assert doc["run"]["cached"] >= len(done_first)
    assert not list(out.glob("tasks/*/.task.json.*"))


def _finished(out: Path) -> list[str]:
    return [
        p.parent.name
        for p in out.glob("tasks/*/task.json")
        if json.loads(p.read_text())["validation"]["status"] != "pending"
    ]


def test_pi_mono_tasks_rejected_for_missing_files(tmp_path: Path) -> None:
    if not CORPUS.is_dir():
        pytest.skip(f"CORPUS MISSING at {CORPUS}: pi-mono validation not tested")
    full = tmp_path / "full"
    pipeline.run([CORPUS / "large-session.jsonl"], full)
    tasks = tasks_of(full)
    ids = [i for i, t in tasks.items() if t.family == "repair"][:2]
    ids += [i for i, t in tasks.items() if t.family == "extend"][:2]
    ids += [i for i, t in tasks.items() if t.family == "qa" and t.files.missing][:1]
    out = pick(full, tmp_path / "some", ids)
    rows = run.run(out, local_context())
    assert {r.status for r in rows} == {"rejected"}
    for task in tasks_of(out).values():
        v = task.validation
        if task.family == "repair":
            assert "could not be recovered" in v.reasons[-1] and v.reasons[-1].startswith(
                "oracle fails"
            )
            assert len(v.controls["oracle"].runs) == 1, "a hopeless oracle runs once"
            assert not v.mutants and "stub" not in v.controls
        elif task.verifier.kind == "none" and not task.files.missing:
            assert v.reasons == ("no verifier: no passing check was recorded in the episode",)
        elif task.family != "qa":  # a missing workspace is told first: no verifier could run
            assert v.codes == (Reason.WORKSPACE_INCOMPLETE,), v.reasons
        else:
            assert any("could not be recovered" in r for r in v.reasons), v.reasons


@pytest.mark.docker
def test_docker_backend_validates_one_task(reconstructed: Path, tmp_path: Path) -> None:
    from trajforge.registry import SANDBOXES, create

    problem = create(SANDBOXES, "docker", "sandbox").available()
    if problem:
        pytest.skip(f"DOCKER UNAVAILABLE, docker validation not tested: {problem}")
    ids = one_per_harness(tasks_of(reconstructed), "repair")[:1]
    out = pick(reconstructed, tmp_path, ids)
    result = cli("validate", str(out), "--sandbox", "docker", "--set", "max_mutants=3", "--json")
    assert result.returncode == 0, result.stderr
    (task,) = tasks_of(out).values()
    assert task.validation.status == "accepted", task.validation.reasons
    assert task.validation.evidence.backend == "docker"
    assert task.validation.evidence.image.startswith("trajforge-sandbox")
