"""Executors: local inline / process pool and Ray run the same items to the same outcomes.

The Ray tests start a real single-node Ray instance; they skip, loudly, when ``ray`` is not
installed (``pip install -e '.[ray]'``; the dev extra includes it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trajforge.errors import UnknownName
from trajforge.executors import ExecutorConfig, LocalExecutor, make_executor
from trajforge.protocols import Executor, WorkOutcome
from trajforge.reconstruct import pipeline
from trajforge.registry import EXECUTORS, create

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"
CORPUS = Path(__file__).parents[1].parent / "shared" / "corpus" / "pi-mono"

CLI = (sys.executable, "-m", "trajforge.cli.main", "reconstruct")

Item = tuple[str, int, str]


def work(item: Item) -> int:
    """Square ``n``; ``mode`` raises, crashes the worker, or fails only on the first attempt.

    Every attempt appends a line to ``marker_dir/n``, so attempts are counted across processes.
    """
    marker_dir, n, mode = item
    marker = Path(marker_dir) / str(n)
    with marker.open("a") as fh:
        fh.write("attempt\n")
    if mode == "raise":
        raise ValueError(f"bad item {n}")
    if mode == "crash":
        os._exit(3)
    if mode == "flaky" and len(marker.read_text().splitlines()) < 2:
        raise RuntimeError(f"flaky item {n}")
    return n * n


def _items(tmp_path: Path, modes: dict[int, str], count: int = 8) -> list[Item]:
    return [(str(tmp_path), n, modes.get(n, "ok")) for n in range(count)]


def _attempts(tmp_path: Path, n: int) -> int:
    return len((tmp_path / str(n)).read_text().splitlines())


def _by_index(outcomes: Iterator[WorkOutcome[int]], count: int) -> dict[int, WorkOutcome[int]]:
    found = list(outcomes)
    assert sorted(o.index for o in found) == list(range(count)), "an item was dropped or doubled"
    return {o.index: o for o in found}


def _check_failures(
    tmp_path: Path, got: dict[int, WorkOutcome[int]], modes: dict[int, str], shared: bool = False
) -> None:
    """raise/crash → error after 3 charged attempts; flaky → accepted on the 2nd; others once.

    ``shared``: a pool worker died with several items in flight; their lost runs are charged
    to no one (each re-runs alone), so marker lines may exceed the charged attempts, and a
    flaky item whose failing first run was lost succeeds on its first charged attempt.
    """
    for n, outcome in got.items():
        mode, markers = modes.get(n, "ok"), _attempts(tmp_path, n)
        if mode in ("raise", "crash"):
            assert (outcome.reason, outcome.value, outcome.attempts) == ("error", None, 3)
            assert outcome.error
        elif mode == "flaky":
            assert (outcome.reason, outcome.value) == ("accepted", n * n)
            assert outcome.attempts == 2 or (shared and outcome.attempts == 1)
        else:
            assert (outcome.reason, outcome.value, outcome.attempts) == ("accepted", n * n, 1)
        assert markers == outcome.attempts or (shared and markers > outcome.attempts)
        if mode == "raise":
            assert outcome.error == f"ValueError: bad item {n}"


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _dump_inputs(tmp_path: Path) -> list[Path]:
    """Fixtures, the real corpus, and a second copy of the pi fixtures (same ids, other path)."""
    copies = tmp_path / "copies"
    shutil.copytree(FIXTURES / "pi", copies)
    inputs = [FIXTURES, copies]
    if CORPUS.is_dir():
        inputs.append(CORPUS)
    else:
        print(f"!! real corpus not found at {CORPUS}; comparing on the fixtures only")
    return inputs


@pytest.fixture(scope="module")
def sequential(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[list[Path], Path, pipeline.ReconstructSummary]:
    tmp = tmp_path_factory.mktemp("sequential")
    inputs = _dump_inputs(tmp)
    return inputs, tmp / "out", pipeline.run(inputs, tmp / "out")


def test_executors_conform() -> None:
    for name in EXECUTORS:
        executor = create(EXECUTORS, name, "executor")
        assert isinstance(executor, Executor)
        assert executor.name == name
        reason = executor.available()
        assert reason is None or (isinstance(reason, str) and reason)


def test_unknown_executor_lists_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(UnknownName, match="known: local, ray"):
        make_executor("dask", ExecutorConfig())
    result = subprocess.run(
        [*CLI, str(FIXTURES / "pi"), "-o", str(tmp_path / "out"), "--executor", "dask"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "unknown executor 'dask'; known: local, ray" in result.stderr
    assert not (tmp_path / "out").exists()


def test_inline_retries_then_reports_an_error_row(tmp_path: Path) -> None:
    modes = {2: "raise", 5: "flaky"}
    executor = LocalExecutor(ExecutorConfig(jobs=1))
    outcomes = list(executor.map(work, _items(tmp_path, modes)))
    assert [o.index for o in outcomes] == list(range(8))  # inline keeps input order
    _check_failures(tmp_path, _by_index(iter(outcomes), 8), modes)


def test_pool_retries_crashes_and_charges_only_the_crasher(tmp_path: Path) -> None:
    modes = {1: "crash", 3: "raise", 6: "flaky"}
    executor = LocalExecutor(ExecutorConfig(jobs=2))
    got = _by_index(executor.map(work, _items(tmp_path, modes, count=12)), 12)
    _check_failures(tmp_path, got, modes, shared=True)
    assert got[1].error == "worker process died (BrokenProcessPool)"


def test_no_retries_means_one_attempt(tmp_path: Path) -> None:
    executor = LocalExecutor(ExecutorConfig(jobs=2, retries=0))
    got = _by_index(executor.map(work, _items(tmp_path, {0: "raise"}, count=3)), 3)
    assert (got[0].reason, got[0].attempts, _attempts(tmp_path, 0)) == ("error", 1, 1)
    assert [got[n].value for n in (1, 2)] == [1, 4]


def test_in_order_waits_for_each_prefix() -> None:
    arrived = [WorkOutcome[int](index=i, reason="accepted", value=i) for i in (2, 0, 3, 1)]
    assert [o.index for o in pipeline.in_order(arrived)] == [0, 1, 2, 3]


def test_jobs_2_writes_the_same_files_and_summary_as_jobs_1(
    tmp_path: Path, sequential: tuple[list[Path], Path, pipeline.ReconstructSummary]
) -> None:
    inputs, out1, summary1 = sequential
    assert summary1.written > 0 and summary1.existing > 0  # the copies collide by id
    result = subprocess.run(
        [*CLI, *map(str, inputs), "-o", str(tmp_path / "out"), "-j", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == summary1.exit_code(), result.stderr
    assert json.loads(result.stdout) == summary1.model_dump(mode="json")
    assert _tree(tmp_path / "out") == _tree(out1)


def _need_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        print(f"\n!! SKIPPING the Ray executor tests: ray is not installed ({exc})")
        pytest.skip(f"!! ray is not installed ({exc}); pip install -e '.[ray]'")
    return ray


def test_ray_cli_writes_the_same_files_and_summary_as_jobs_1(
    tmp_path: Path, sequential: tuple[list[Path], Path, pipeline.ReconstructSummary]
) -> None:
    """``--executor ray`` with no address starts (and stops) its own local Ray instance."""
    _need_ray()
    inputs, out1, summary1 = sequential
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    result = subprocess.run(
        [*CLI, *map(str, inputs), "-o", str(tmp_path / "out"), "--executor", "ray", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert result.returncode == summary1.exit_code(), result.stderr
    assert json.loads(result.stdout) == summary1.model_dump(mode="json")  # stdout is clean
    assert _tree(tmp_path / "out") == _tree(out1)


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    ray = _need_ray()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


def test_ray_retries_crashes_and_reports_every_item(tmp_path: Path, ray_cluster: Any) -> None:
    modes = {1: "crash", 3: "raise", 6: "flaky"}
    executor = make_executor("ray", ExecutorConfig())
    got = _by_index(executor.map(work, _items(tmp_path, modes)), 8)
    executor.close()
    assert ray_cluster.is_initialized()  # a connection the executor did not open stays open
    _check_failures(tmp_path, got, modes)
    assert got[1].error is not None and "WorkerCrashedError" in got[1].error
    assert _attempts(tmp_path, 1) == 3  # Ray tasks are isolated: the crash is always attributed
