"""``validate`` and ``dataenv build`` on ``--executor ray``: the same outputs as local runs.

One real single-node Ray instance (2 CPUs) serves the whole module; the commands run through
the real entry point in this process, so their Ray executor joins that instance. A task whose
worker dies on every attempt must come back as that task's error row, never as a crash or a
missing task. Skips, loudly, when ``ray`` is not installed (``pip install -e '.[ray]'``).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.inprocess import run_main
from tests.validate.conftest import FIXTURES, local_context, tasks_of
from trajforge.executors import ExecutorConfig, LocalExecutor, make_executor
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.dataenv import build
from trajforge.records import Task, load_record
from trajforge.taskdir import read_family, task_dirs
from trajforge.verifiers.validate import run
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.remote import TaskJob, TaskResult, run_on, validate_job

FAST = ("--set", "max_mutants=1", "--set", "oracle_runs=1")
BROKEN = "build-0000000000000000"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``trajforge ARGS`` through the real entry point: exit code, stdout, stderr."""
    return run_main(capsys, *args)


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """``trajforge ARGS --json``: exit code and the parsed stdout."""
    code, stdout, stderr = _run(capsys, *args, "--json")
    try:
        return code, json.loads(stdout)
    except ValueError:
        raise AssertionError(f"stdout is not JSON: {stdout!r}; stderr: {stderr}") from None


def _timeless(value: Any, root: Path | None = None) -> Any:
    """A JSON value without wall-clock timings and with ``root`` spelled OUT: the only things
    two runs into two folders may differ in."""
    if isinstance(value, dict):
        skip = ("wall_s", "seconds", "timings", "out")
        return {k: _timeless(v, root) for k, v in value.items() if k not in skip}
    if isinstance(value, list):
        return [_timeless(v, root) for v in value]
    if isinstance(value, str) and root is not None:
        return value.replace(str(root), "OUT")
    return value


def _tree(root: Path) -> dict[str, Any]:
    """Every file under ``root``: JSON files parsed without timings, others as bytes."""
    found: dict[str, Any] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = str(path.relative_to(root))
        data = path.read_bytes().replace(str(root).encode(), b"OUT")
        try:
            found[rel] = _timeless(json.loads(data), root) if path.suffix == ".json" else data
        except ValueError:
            found[rel] = data  # the unreadable task.json
    return found


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    try:
        import ray
    except ImportError as exc:
        print(f"\n!! SKIPPING the Ray stage tests: ray is not installed ({exc})")
        pytest.skip(f"!! ray is not installed ({exc}); pip install -e '.[ray]'")
    local_context()  # skips loudly when the local sandbox is unusable
    os.environ.pop("RAY_ADDRESS", None)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.fixture(scope="module")
def chosen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small OUT: a qa task, a build with a verifier, one without, one unreadable."""
    everything = tmp_path_factory.mktemp("all")
    pipeline.run([FIXTURES], everything)
    tasks = sorted(tasks_of(everything).items())
    qa = [i for i, t in tasks if t.family == "qa"][:1]
    build_ok = next(i for i, t in tasks if t.family == "build" and t.verifier.kind != "none")
    build_none = next(i for i, t in tasks if t.family == "build" and t.verifier.kind == "none")
    out = tmp_path_factory.mktemp("chosen")
    for task_id in (*qa, build_ok, build_none):
        shutil.copytree(everything / "tasks" / task_id, out / "tasks" / task_id)
    (out / "tasks" / BROKEN).mkdir()
    (out / "tasks" / BROKEN / "task.json").write_text("{not json")
    return out


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


def test_validate_on_ray_writes_what_a_local_run_writes(
    ray_cluster: Any, chosen: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local, remote = _copy(chosen, tmp_path / "local"), _copy(chosen, tmp_path / "ray")
    code_local, doc_local = _cli(capsys, "validate", str(local), *FAST)
    code_ray, doc_ray = _cli(capsys, "validate", str(remote), *FAST, "--executor", "ray")
    assert code_local == code_ray == 1, (doc_local, doc_ray)  # the unreadable task
    statuses = {row["id"]: row["status"] for row in doc_ray["tasks"]}
    assert set(statuses.values()) >= {"accepted", "rejected"}, statuses
    assert doc_ray["run"] == doc_local["run"] == {"validated": 4, "cached": 0}
    assert BROKEN in json.dumps(doc_ray["unreadable"]) and BROKEN not in statuses
    assert _timeless(doc_ray, remote) == _timeless(doc_local, local)
    assert _tree(remote) == _tree(local)
    # resumable: a second Ray run finds every readable task cached and changes nothing
    before = _tree(remote)
    code_again, again = _cli(capsys, "validate", str(remote), *FAST, "--executor", "ray")
    assert code_again == 1 and again["run"] == {"validated": 1, "cached": 3}
    assert _tree(remote) == before


def _families(dirs: list[Path]) -> dict[Path, str]:
    """Each folder's family, as ``run.run`` reads them before it hands them to ``run_on``."""
    return {d: read_family(d) or "?" for d in dirs}


def crash_on_qa(job: TaskJob) -> tuple[TaskResult, ...]:
    """The worker, except that it dies (as if killed) on every qa task."""
    if any(folder.name.startswith("qa-") for folder in job.folders):
        os._exit(9)
    return validate_job(job)


def test_a_worker_that_always_dies_is_that_tasks_error_row(
    ray_cluster: Any, chosen: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    for folder in (chosen / "tasks").iterdir():  # qa (dies) and the build without a verifier
        task = load_record(Task, folder / "task.json") if folder.name != BROKEN else None
        if task is not None and (task.family == "qa" or task.verifier.kind == "none"):
            shutil.copytree(folder, out / "tasks" / folder.name)
    ctx = local_context(ValidateConfig(max_mutants=2, oracle_runs=1))
    executor = make_executor("ray", ExecutorConfig(retries=1))
    dirs = task_dirs(out)
    rows = {r.id: r for r in run_on(executor, dirs, _families(dirs), ctx, out, worker=crash_on_qa)}
    assert sorted(rows) == [d.name for d in dirs]  # nothing dropped
    qa = [name for name in rows if name.startswith("qa-")]
    assert qa
    for name in qa:
        row = rows[name]
        assert row.status == "error" and row.family == "qa"
        assert row.reasons[0].startswith("worker failed after 2 attempt(s): "), row.reasons
        stored = load_record(Task, out / "tasks" / name / "task.json").validation
        assert stored.status == "error" and stored.reasons == row.reasons
        assert stored.evidence.backend == "local"
    others = [rows[n].status for n in rows if n not in qa]
    assert others and all(s in ("accepted", "rejected") for s in others)


def test_unknown_executor_is_a_usage_error(
    chosen: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _copy(chosen, tmp_path / "out")
    for command in (("validate", str(out)), ("dataenv", "build", "-o", str(tmp_path / "d"))):
        code, stdout, stderr = _run(capsys, *command, "--executor", "dask")
        assert code == 2 and not stdout and "Traceback" not in stderr
        assert "unknown executor 'dask'; known: local, ray" in stderr
    assert not (tmp_path / "d").exists()


def test_dataenv_build_on_ray_and_a_pool_writes_what_inline_writes(
    ray_cluster: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = {
        "inline": (),
        "ray": ("--executor", "ray"),
    }
    found: dict[str, tuple[int, Any, dict[str, Any]]] = {}
    for name, extra in runs.items():
        out = tmp_path / name
        code, doc = _cli(
            capsys, "dataenv", "build", "-o", str(out), "-n", "12", "--seed", "5", *extra
        )
        found[name] = (code, _timeless(doc), _tree(out))
    assert found["inline"][0] == 0 and found["inline"][1]["tasks"] == 12
    assert found["inline"][1]["errors"] == []
    assert found["ray"] == found["inline"]
    # a local process pool (spawned: polars deadlocks in a forked child) gives the same tasks
    report = build(
        [], tmp_path / "pool", count=12, seed=5, executor=LocalExecutor(ExecutorConfig(jobs=2))
    )
    assert report.ids == found["inline"][1]["ids"]
    assert _tree(tmp_path / "pool") == found["inline"][2]


def data_alone_dies(job: TaskJob) -> tuple[TaskResult, ...]:
    """The worker, except that it dies on a data task shipped on its own, not in a batch."""
    if job.family is None and any(f.name.startswith("data-") for f in job.folders):
        os._exit(9)
    return validate_job(job)


def test_data_tasks_on_ray_are_judged_in_batches_and_written_as_locally(
    ray_cluster: Any, chosen: Path, tmp_path: Path
) -> None:
    """Data tasks reach a Ray worker as one batch (one sandbox run for all their scripts, as
    locally); the other families one task each. Same files as a local run."""
    out = tmp_path / "ray"
    build([], out, count=3, seed=5)
    for name in ("qa-", "build-"):  # beside them: tasks of other families, one per item
        folders = sorted((chosen / "tasks").iterdir())
        task_id = next(d.name for d in folders if d.name.startswith(name) and d.name != BROKEN)
        shutil.copytree(chosen / "tasks" / task_id, out / "tasks" / task_id)
    local = _copy(out, tmp_path / "local")
    ctx = local_context(ValidateConfig(max_mutants=1, oracle_runs=1))
    executor = make_executor("ray", ExecutorConfig(retries=0))
    dirs = task_dirs(out)
    rows = {
        r.id: r for r in run_on(executor, dirs, _families(dirs), ctx, out, worker=data_alone_dies)
    }
    expected = {r.id: r.status for r in run.run(local, ctx)}
    assert {i: r.status for i, r in rows.items()} == expected
    assert sum(1 for i in rows if i.startswith("data-")) == 3
    assert "error" not in expected.values() and "accepted" in expected.values(), expected
    assert _tree(out) == _tree(local)
