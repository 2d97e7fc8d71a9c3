"""Validation fixtures: the fixture sessions reconstructed once, and task subsets to validate."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from trajforge.reconstruct import pipeline
from trajforge.records import Task, load_record
from trajforge.registry import SANDBOXES, create
from trajforge.verifiers.environments.cache import CACHE_ENV
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.context import Context

FIXTURES = Path(__file__).parent.parent / "fixtures" / "sessions"
CORPUS = Path(__file__).parents[3] / "shared" / "corpus" / "pi-mono"
FAST = ValidateConfig(max_mutants=4)
HARNESSES = ("pi", "opencode", "hermes", "claude-code", "codex")


def local_context(config: ValidateConfig = FAST) -> Context:
    sandbox = create(SANDBOXES, "local", "sandbox")
    problem = sandbox.available()
    if problem:
        pytest.skip(f"LOCAL SANDBOX UNAVAILABLE, validation tests skipped: {problem}")
    return Context(sandbox, "local", "host", config, base_dirs=(Path.cwd(),))


@contextmanager
def node_env_cache(
    factory: pytest.TempPathFactory, tools: tuple[str, ...], what: str, shared: str = ""
) -> Iterator[Path]:
    """A fresh environment cache for a module of Node task tests (``TRAJFORGE`` cache variable
    set while it runs); skips loudly without ``tools`` on PATH or the local sandbox. With
    ``shared``, the modules that name it share one cache for the test run, across pytest-xdist
    workers too (the builders' lock makes one build an environment the others wait for)."""
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool.upper()} NOT ON PATH: {what} skipped")
    local_context()  # skips loudly when the local sandbox is unusable
    run_dir = factory.getbasetemp().parent if os.environ.get("PYTEST_XDIST_WORKER") else None
    if shared and run_dir is not None:  # the test run's folder, above every worker's own
        cache = run_dir / f"shared-env-cache-{shared}"
        cache.mkdir(exist_ok=True)
    else:
        cache = factory.mktemp("node-env-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(cache))
        yield cache


def real_qa_task(session_dir: Path, out: Path) -> Task:
    """The one qa task reconstructed from a shared real session (skips loudly without it)."""
    if not session_dir.is_dir():
        pytest.skip(f"SKIPPED: the shared real corpus is not at {session_dir}")
    pipeline.run([session_dir], out)
    (task,) = [t for t in tasks_of(out).values() if t.family == "qa"]
    return task


def validated_qa_task(out: Path) -> Task:
    """``out``'s qa task after validating ``out`` in the local sandbox."""
    from trajforge.verifiers.validate import run

    run.run(out, local_context())
    (task,) = [t for t in tasks_of(out).values() if t.family == "qa"]
    return task


def tasks_of(out: Path) -> dict[str, Task]:
    return {p.parent.name: load_record(Task, p) for p in sorted(out.glob("tasks/*/task.json"))}


def pick(all_out: Path, dest: Path, ids: list[str]) -> Path:
    """Copy the chosen task folders into a fresh OUT."""
    for task_id in ids:
        shutil.copytree(all_out / "tasks" / task_id, dest / "tasks" / task_id)
    return dest


def one_per_harness(tasks: dict[str, Task], family: str) -> list[str]:
    chosen: dict[str, str] = {}
    for task_id, task in sorted(tasks.items()):
        if task.family == family and task.verifier.kind != "none":
            chosen.setdefault(task.source.harness, task_id)
    return [chosen[h] for h in HARNESSES if h in chosen]


@pytest.fixture(scope="session")
def reconstructed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("validate-all")
    # the harnesses' own recordings (not the hand-written ATIF sample, whose checks cannot run)
    summary = pipeline.run([FIXTURES / h for h in HARNESSES], out)
    assert summary.written > 0
    return out


def read_json(path: Path) -> dict:  # type: ignore[type-arg]
    return json.loads(path.read_text())


@pytest.fixture(scope="session")
def validated(reconstructed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every harness's repair, one build and one qa task, validated once with the local sandbox."""
    from trajforge.verifiers.validate import report, run

    tasks = tasks_of(reconstructed)
    ids = one_per_harness(tasks, "repair") + one_per_harness(tasks, "build")[:1]
    ids += one_per_harness(tasks, "qa")[:1]
    out = pick(reconstructed, tmp_path_factory.mktemp("validated"), ids)
    rows = run.run(out, local_context(), jobs=2)
    assert len(rows) == len(ids)
    report.write_reports(out, "local", "host")
    return out
