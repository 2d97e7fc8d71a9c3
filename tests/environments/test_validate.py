"""Real sessions recorded inside git repositories become accepted repair tasks with --repos.

The pi and opencode sessions of ``tests/fixtures/sessions/repos`` were recorded inside the
repositories of ``tests/fixtures/repos.py`` (a Node package using ``ms``, a Python package using
``text-unidecode``). Reconstruct finds each repository and the session's commit; validate builds
each environment from the registries once (npm ci, pip install), mounts it read-only and accepts
the repairs; solutions are then scored through the same environment. Without the repository or
with a toolchain that cannot be had, the rejection names why.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.repos import CLOCK_BUGGY_LINE, SHORTEN_BUGGY_LINE, make_repo
from tests.sandbox.conftest import load_backend
from tests.validate.conftest import FAST
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.environment import detect
from trajforge.reconstruct.repos import RepoSearch
from trajforge.records import Status, Task, dump_record, load_record
from trajforge.splits import harbor
from trajforge.splits.tasks import load_tasks
from trajforge.verifiers.environments import for_task
from trajforge.verifiers.environments.cache import CACHE_ENV
from trajforge.verifiers.environments.dockerfile import NODE_IMAGE, dockerfile_lines
from trajforge.verifiers.validate import run
from trajforge.verifiers.validate.context import Context
from trajforge.verifiers.validate.verify import verify_files

SESSIONS = Path(__file__).parents[1] / "fixtures" / "sessions" / "repos"
pytestmark = pytest.mark.slow


def _context(backend: str) -> Context:
    return Context(load_backend(backend), backend, backend, FAST)


def _tasks(out: Path) -> dict[str, Task]:
    return {p.parent.name: load_record(Task, p) for p in sorted(out.glob("tasks/*/task.json"))}


def _repairs(out: Path) -> dict[tuple[str, str], Path]:
    """(harness, project) → folder of its repair task."""
    return {
        (t.source.harness, Path(t.source.path).stem): out / "tasks" / task_id
        for task_id, t in _tasks(out).items()
        if t.family == "repair"
    }


@pytest.fixture(scope="module")
def env_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    cache = tmp_path_factory.mktemp("env-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(CACHE_ENV, str(cache))
        yield cache


@pytest.fixture(scope="module")
def checkouts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("checkouts")
    for name in ("nodecalc", "pyslug"):
        make_repo(name, root / name)
    return root


@pytest.fixture(scope="module")
def reconstructed(checkouts: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("repos-out")
    pipeline.run(
        [SESSIONS], out, pipeline.ReconstructSpec(repos=RepoSearch(dirs=(str(checkouts),)))
    )
    repairs = {t.id for t in _tasks(out).values() if t.family == "repair"}
    for folder in list((out / "tasks").iterdir()):
        if folder.name not in repairs:
            shutil.rmtree(folder)  # the repairs are what this file is about
    return out


@pytest.fixture(scope="module")
def validated(reconstructed: Path, env_cache: Path) -> tuple[Path, list[run.TaskRow]]:
    return reconstructed, run.run(reconstructed, _context("local"), jobs=2)


def test_every_repair_is_accepted_with_its_environment(
    validated: tuple[Path, list[run.TaskRow]], env_cache: Path
) -> None:
    out, rows = validated
    assert len(rows) == 4 and {r.status for r in rows} == {"accepted"}, rows
    managers = {}
    for (_, project), folder in _repairs(out).items():
        task = load_record(Task, folder / "task.json")
        evidence = task.validation.evidence.environment
        assert evidence is not None and task.environment is not None
        managers[project] = evidence.managers
        assert evidence.hash == task.environment.hash
        assert evidence.location.startswith(str(env_cache))
        assert task.files.missing == () and task.source.repo.status == "found"  # type: ignore[union-attr]
    assert managers == {"nodecalc": ("npm",), "pyslug": ("pip",)}
    built = [p for p in env_cache.iterdir() if (p / "env.json").is_file()]
    assert len(built) == 2  # one environment per project, shared by both harnesses' tasks


def test_revalidation_reuses_results_and_environments(
    validated: tuple[Path, list[run.TaskRow]],
) -> None:
    out, _ = validated
    again = run.run(out, _context("local"))
    assert all(r.cached for r in again)


@pytest.mark.parametrize("project", ["nodecalc", "pyslug"])
def test_solutions_are_scored_through_the_environment(
    validated: tuple[Path, list[run.TaskRow]], project: str, tmp_path: Path
) -> None:
    out, _ = validated
    folder = _repairs(out)[("pi", project)]
    task = load_record(Task, folder / "task.json")
    sandbox = load_backend("local")
    path, wrong, right = _solutions(project, (folder / "workspace").joinpath)
    scores = {}
    for name, text in (("nothing", None), ("constant", wrong), ("rewritten", right)):
        solution = tmp_path / name
        solution.mkdir()
        if text is not None:
            (solution / path).parent.mkdir(parents=True, exist_ok=True)
            (solution / path).write_text(text)
        scores[name] = verify_files(folder, task, solution, sandbox).reward
    assert scores == {"nothing": 0.0, "constant": 0.0, "rewritten": 1.0}


def _js_hacks(start: Path) -> dict[str, dict[str, str]]:
    """The cheapest wrong solutions of the JavaScript repair: each a set of files."""
    package = json.loads((start / "package.json").read_text())
    tests = sorted(p.relative_to(start).as_posix() for p in (start / "test").glob("*.js"))
    source = (start / "src/duration.js").read_text()
    stub = source.replace("{\n", '{ throw new Error("not implemented");\n', 2)
    return {
        "deleted tests": {t: 'require("node:test");\n' for t in tests},
        "weakened tests": {
            t: (start / t).read_text().replace("assert.strictEqual(", "(") for t in tests
        },
        "runner config": {
            "package.json": json.dumps({**package, "scripts": {"test": "node -e 0"}}, indent=2)
        },
        "stub": {"src/duration.js": stub},
        "exit at load": {"src/duration.js": "process.exit(0);\n" + source},
    }


def test_js_solution_hacks_score_zero(
    validated: tuple[Path, list[run.TaskRow]], tmp_path: Path
) -> None:
    """The node:test repair, judged per test from node's JUnit report: no cheap JavaScript
    hack passes (deleted or weakened tests, a test script that does nothing, a stub, an exit
    before any test runs)."""
    out, _ = validated
    folder = _repairs(out)[("pi", "nodecalc")]
    task = load_record(Task, folder / "task.json")
    oracle = task.validation.controls["oracle"].runs[0]
    assert len(oracle.tests) >= 5 and oracle.tests[0].name != task.verifier.command  # per test
    assert task.validation.evidence.test_sets is not None
    assert task.validation.evidence.test_sets.fail_to_pass  # the clock tests
    sandbox = load_backend("local")
    scores = {}
    for name, files in _js_hacks(folder / "workspace").items():
        solution = tmp_path / name.replace(" ", "-")
        for rel, text in files.items():
            (solution / rel).parent.mkdir(parents=True, exist_ok=True)
            (solution / rel).write_text(text)
        scores[name] = verify_files(folder, task, solution, sandbox).reward
    assert scores == dict.fromkeys(scores, 0.0), scores


def _solutions(project: str, start):  # type: ignore[no-untyped-def]
    """(file, a cheap wrong fix, a correct fix written differently from the oracle's)."""
    if project == "nodecalc":
        text = start("src/duration.js").read_text()
        assert CLOCK_BUGGY_LINE in text
        wrong = text.replace(CLOCK_BUGGY_LINE, '  return "1:02:05";\n')
        right = text.replace(
            CLOCK_BUGGY_LINE,
            "  const two = (n) => (n < 10 ? `0${n}` : `${n}`);\n"
            "  return `${h}:${two(m)}:${two(s)}`;\n",
        )
        return "src/duration.js", wrong, right
    text = start("pyslug/slug.py").read_text()
    assert SHORTEN_BUGGY_LINE in text
    wrong = text.replace(SHORTEN_BUGGY_LINE, "    return slug[:limit]\n")
    right = text.replace(
        "    cut = slug[:limit]\n"
        "    return cut[: cut.rfind(sep)] if sep in cut else slug[:limit]\n",
        "    kept = []\n    for word in slug.split(sep):\n"
        "        if len(sep.join([*kept, word])) > limit:\n            break\n"
        "        kept.append(word)\n    return sep.join(kept) if kept else slug[:limit]\n",
    )
    assert right != text
    return "pyslug/slug.py", wrong, right


def test_without_the_environment_the_oracle_cannot_run(
    validated: tuple[Path, list[run.TaskRow]], tmp_path: Path
) -> None:
    """The environment is what makes the check pass: the plain sandbox lacks the dependency."""
    out, _ = validated
    folder = _repairs(out)[("opencode", "nodecalc")]
    task = load_record(Task, folder / "task.json")
    plain = load_backend("local")
    with plain.session(folder / "oracle") as box:
        ran = box.run(task.verifier.command or "", timeout=60)
    assert ran.exit_code != 0 and "Cannot find module 'ms'" in ran.stdout + ran.stderr
    prepared = for_task(folder, task, plain)
    with prepared.sandbox.session(folder / "oracle") as box:
        assert box.run(task.verifier.command or "", timeout=60).exit_code == 0


def test_repository_not_found_and_commit_ambiguous_are_named(
    tmp_path: Path, env_cache: Path
) -> None:
    """A checkout named like the session's project but holding another history: the nodecalc
    session's commit cannot be told; the pyslug session, whose files that history does hold, is
    found there by content; against a checkout of neither history it is not found."""
    elsewhere = tmp_path / "repos"
    make_repo("pyslug", elsewhere / "nodecalc")  # right name, other history
    make_repo("nodecalc", tmp_path / "unrelated" / "tools")
    out, alone = tmp_path / "out", tmp_path / "alone"
    sessions = [SESSIONS / "pi" / "nodecalc.jsonl", SESSIONS / "opencode" / "pyslug.json"]
    pipeline.run(sessions, out, pipeline.ReconstructSpec(repos=RepoSearch(dirs=(str(elsewhere),))))
    unrelated = RepoSearch(dirs=(str(tmp_path / "unrelated"),))
    pipeline.run(sessions[1:], alone, pipeline.ReconstructSpec(repos=unrelated))
    reasons = {}
    for folder in (out, alone):
        rows = {r.id: r for r in run.run(folder, _context("local"))}
        for task in _tasks(folder).values():
            if task.family == "repair":
                key = f"{folder.name}/{Path(task.source.path).stem}"
                reasons[key] = (task.source.repo, rows[task.id].reasons[0])
    assert reasons["out/nodecalc"][1].startswith("commit_ambiguous: ")
    found, _ = reasons["out/pyslug"]
    assert found is not None and found.status == "found" and found.found_by == "content"
    lost, why = reasons["alone/pyslug"]
    assert lost is not None and lost.status == "not_found"
    assert why.startswith("repo_not_found: the session changed existing files")
    assert "--repo-map" in why


def test_a_toolchain_that_cannot_be_had_is_environment_unavailable(
    validated: tuple[Path, list[run.TaskRow]], tmp_path: Path
) -> None:
    """The repair, with a Rust crate beside it: crates.io cannot be reached, so the task is
    rejected naming cargo and the fix, before its oracle ever runs."""
    out, _ = validated
    source = _repairs(out)[("pi", "pyslug")]
    dest = tmp_path / "out" / "tasks" / source.name
    shutil.copytree(source, dest)
    cargo = '[package]\nname = "speed"\nversion = "0.1.0"\n\n[dependencies]\nserde = "1"\n'
    for folder in ("workspace", "oracle"):
        (dest / folder / "Cargo.toml").write_text(cargo)
    task = load_record(Task, dest / "task.json")
    files = {"Cargo.toml": cargo, "pyproject.toml": (dest / "oracle/pyproject.toml").read_text()}
    env = detect(files, "cargo test && " + (task.verifier.command or ""))
    task = task.model_copy(
        update={
            "environment": env,
            "validation": task.validation.model_copy(update={"status": Status.PENDING}),
        }
    )
    (dest / "task.json").write_text(dump_record(task) + "\n")
    (row,) = run.run(tmp_path / "out", _context("local"))
    assert row.status == "rejected"
    assert (
        row.reasons[0].startswith("environment_unavailable: cargo: ") and "fix: " in row.reasons[0]
    )
    stored = load_record(Task, dest / "task.json").validation
    assert "oracle" not in stored.controls


@pytest.mark.docker
def test_docker_backend_accepts_the_repairs_from_a_derived_image(
    reconstructed: Path, env_cache: Path, tmp_path: Path
) -> None:
    load_backend("docker")
    out = tmp_path / "out"
    shutil.copytree(reconstructed / "tasks", out / "tasks")
    rows = run.run(out, _context("docker"), jobs=2)
    assert {r.status for r in rows} == {"accepted"}, rows
    for folder in (out / "tasks").iterdir():
        environment = load_record(Task, folder / "task.json").validation.evidence.environment
        assert environment is not None and environment.location.startswith("trajforge-env:")


def test_harbor_export_carries_the_environment(
    validated: tuple[Path, list[run.TaskRow]], tmp_path: Path
) -> None:
    out, _ = validated
    items = load_tasks(out).accepted
    outcomes = {o.task_id: o for o in harbor.export(items, tmp_path / "harbor")}
    for (_, project), folder in _repairs(out).items():
        assert outcomes[folder.name].status == "accepted", outcomes[folder.name]
        agent = (tmp_path / "harbor" / folder.name / "environment" / "Dockerfile").read_text()
        lines = agent.splitlines()
        copy = lines.index("COPY --chown=agent:agent workspace/ /app/")
        if project == "nodecalc":
            assert (
                lines.index(f"COPY --from={NODE_IMAGE} /usr/local/bin/node /usr/local/bin/node")
                < copy
            )
            assert lines[copy + 1] == "RUN cd /app && npm ci --ignore-scripts"
        else:  # pinned to what the built environment held, dependencies included
            words = lines[copy + 1].split()
            assert words[:4] == ["RUN", "pip", "install", "--no-cache-dir"]
            assert "text-unidecode==1.3" in words and any(w.startswith("pytest==") for w in words)
            assert all("==" in w for w in words[4:]) and len(words) > 6
            verifier = (tmp_path / "harbor" / folder.name / "tests" / "Dockerfile").read_text()
            assert lines[copy + 1] in verifier.splitlines()


def test_dockerfile_lines_for_each_ecosystem() -> None:
    files = {
        "web/package.json": json.dumps(
            {"dependencies": {"a": "1"}, "packageManager": "pnpm@9.1.0"}
        ),
        "web/pnpm-lock.yaml": "lockfileVersion: '9.0'\n",
        "requirements.txt": "attrs==23.2.0\n",
        "src/pkg/__init__.py": "",
        "Cargo.toml": "[package]\nname = 'x'\n",
    }
    env = detect(files, None)
    lines = dockerfile_lines(env)
    assert lines.toolchain[-1].startswith("ENV COREPACK_ENABLE_DOWNLOAD_PROMPT=0")
    assert lines.install == (
        "RUN cd /app/web && corepack pnpm@9.1.0 install --frozen-lockfile --ignore-scripts",
        "RUN pip install --no-cache-dir attrs==23.2.0",
        "# rust: cargo fetch (toolchain not installed)",
        "ENV PYTHONPATH=/app/src",
    )
    assert dockerfile_lines(None) == dockerfile_lines(detect({"a.py": ""}, None))
