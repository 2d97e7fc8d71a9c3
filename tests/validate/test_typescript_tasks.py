"""A TypeScript extend task proven end to end on a real pi session (vitest, npm ci).

``tests/fixtures/sessions/ts/pi/tstext.jsonl`` was recorded with the real pi CLI inside the
``tstext`` repository of ``tests/fixtures/repos.py`` (``tests/fixtures/generate_ts_sessions.py``):
the agent adds ``truncateWords`` to src/text.ts and its vitest tests to test/text.test.ts, then
runs ``npx vitest run``. Reconstruct finds the repository and the commit; validate builds the
environment from the committed lockfile once (``npm ci``), proves the agent's own vitest tests
(mined) and a teacher's (``--teacher openai:MODEL`` against recorded answers); verify scores the
cheapest wrong solutions 0 and a correct one written unlike the oracle 1; the Harbor export
runs the vitest command. Without the local sandbox, node / npm or the npm registry the module
skips, saying so.
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

from tests.fixtures.repos import SESSION_COMMIT, make_repo
from tests.fixtures.ts import tstext
from tests.sandbox.conftest import load_backend
from tests.teacher.server import Cassettes, load, serve
from tests.validate.conftest import local_context, node_env_cache
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.repos import RepoSearch
from trajforge.records import Reason, Task, load_record
from trajforge.splits import harbor
from trajforge.splits.tasks import load_tasks
from trajforge.verifiers.languages.typescript import TypeScript, contract
from trajforge.verifiers.validate import run
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.files import read_tree, write_tree
from trajforge.verifiers.validate.runners import NODE_BASE
from trajforge.verifiers.validate.verify import verify_files

SESSION = Path(__file__).parents[1] / "fixtures" / "sessions" / "ts" / "pi" / "tstext.jsonl"
SETTINGS = ValidateConfig(max_mutants=8, oracle_runs=2)
CLI_SETTINGS = ("--set", "max_mutants=8", "--set", "oracle_runs=2")
MODEL = "openai:gpt-4.1-mini"
KEY = "sk-test-teacher-ts-0123456789abcdef"
HIDDEN = "test/text.hidden.test.ts"
VITEST = "npx vitest run"
HARBOR = ".cache/harbor"
SIGNATURE = 'export function truncateWords(text: string, max: number, ellipsis = "…"): string'
pytestmark = pytest.mark.slow


def _task(out: Path) -> tuple[Path, Task]:
    (path,) = out.glob("tasks/*/task.json")
    return path.parent, load_record(Task, path)


@pytest.fixture(scope="module")
def env_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with node_env_cache(tmp_path_factory, ("node", "npm"), "the TypeScript task tests") as cache:
        yield cache


@pytest.fixture(scope="module")
def commits(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("ts-checkouts")
    return root, make_repo("tstext", root / "tstext")


@pytest.fixture(scope="module")
def reconstructed(
    commits: tuple[Path, list[str]], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    out = tmp_path_factory.mktemp("ts-out")
    spec = pipeline.ReconstructSpec(repos=RepoSearch(dirs=(str(commits[0]),)))
    summary = pipeline.run([SESSION], out, spec)
    assert summary.written == 1, summary
    return out


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src / "tasks", dest / "tasks")
    return dest


def _skip_without_registry(task: Task) -> None:
    """No npm registry here (the environment unavailable, or its install failing while ``npm
    ping`` fails too): skip the module, loudly. A failing install with the registry up fails."""
    reasons = {f.reason for f in task.validation.findings}
    down = Reason.ENVIRONMENT_UNAVAILABLE in reasons
    if not down and Reason.ENVIRONMENT_BUILD_FAILED in reasons:
        ping = subprocess.run(["npm", "ping"], capture_output=True, timeout=120, check=False)
        down = ping.returncode != 0
    if down:
        details = "; ".join(f.detail for f in task.validation.findings)
        pytest.skip(f"NPM REGISTRY UNAVAILABLE, TypeScript task tests skipped: {details}")


@pytest.fixture(scope="module")
def mined(reconstructed: Path, env_cache: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The task validated offline: the agent's own vitest test is the hidden test."""
    out = _copy(reconstructed, tmp_path_factory.mktemp("ts-mined"))
    (row,) = run.run(out, local_context(SETTINGS))
    _skip_without_registry(_task(out)[1])
    assert row.status == "accepted", row.reasons
    return _task(out)[0]


def cli(*args: str, base_url: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY=KEY)
    argv = [sys.executable, "-m", "trajforge.cli.main", *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=280, env=env)


@pytest.fixture(scope="module")
def taught(
    reconstructed: Path, mined: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Cassettes, subprocess.CompletedProcess[str]]:
    """The task validated through the real CLI with the openai teacher (recorded answers)."""
    out = _copy(reconstructed, tmp_path_factory.mktemp("ts-taught"))
    state = Cassettes(load("tstext_vitest_tests", "tstext_instruction"))
    with serve(state) as url:
        result = cli(
            "validate", str(out), "--teacher", MODEL, *CLI_SETTINGS, "--json", base_url=url
        )
    return _task(out)[0], state, result


# --- reconstruct ---------------------------------------------------------------------------


def test_reconstruct_finds_the_repository_and_commit(
    reconstructed: Path, commits: tuple[Path, list[str]]
) -> None:
    _, task = _task(reconstructed)
    assert task.family == "extend" and task.source.harness == "pi"
    repo = task.source.repo
    assert repo is not None and repo.status == "found"
    assert repo.commit == commits[1][SESSION_COMMIT] and repo.path == str(commits[0] / "tstext")
    assert task.files.missing == () and task.files.partial == ()
    assert task.verifier.command == VITEST and task.verifier.tests == ("test/text.test.ts",)
    assert task.environment is not None
    (recipe,) = task.environment.recipes
    assert recipe.manager == "npm" and recipe.install[0].startswith("npm ci")
    assert set(task.environment.inputs) == {"package.json", "package-lock.json"}


# --- validate, mined -----------------------------------------------------------------------


def test_mined_vitest_task_is_accepted_per_test(mined: Path) -> None:
    task = load_record(Task, mined / "task.json")
    v = task.validation
    assert task.verifier.kind == "tests" and task.verifier.command == VITEST
    for run_ in v.controls["oracle"].runs:
        names = [t.name for t in run_.tests]  # from vitest's JUnit report, not one pseudo-test
        assert len(names) == 8 and VITEST not in names and run_.status == "pass"
        assert "test/text.test.ts::truncateWords > keeps no words when max is zero" in names
    for control in ("empty", "start", "stub"):
        assert v.controls[control].result == "fail", (control, v.controls[control])
    assert v.controls["start"].runs[0].failing == tuple(
        f"test/text.test.ts::truncateWords > {title}"
        for title in (
            "keeps text of at most max words whole",
            "cuts after max words and appends the ellipsis",
            "keeps no words when max is zero",
            "rejects a negative or fractional max",
        )
    )
    assert v.evidence.test_sets is not None and len(v.evidence.test_sets.fail_to_pass) == 4
    assert len(v.evidence.test_sets.pass_to_pass) == 4
    assert v.mutants and {m.path for m in v.mutants} == {"src/text.ts"}
    assert {m.line for m in v.mutants} <= _changed_lines(mined)  # truncateWords only
    summary = v.evidence.mutant_summary
    assert summary is not None and summary.kill_rate is not None and summary.kill_rate >= 0.8
    assert summary.total == len(v.mutants) == summary.killed + summary.survived + summary.unknown
    environment = v.evidence.environment
    assert environment is not None and environment.managers == ("npm",)


def _oracle_text(task_dir: Path) -> str:
    return (task_dir / "oracle" / "src" / "text.ts").read_text()


def _changed_lines(task_dir: Path) -> set[int]:
    """1-based lines of src/text.ts that the session added (truncateWords)."""
    start = (task_dir / "workspace" / "src" / "text.ts").read_text().count("\n")
    return set(range(start + 1, _oracle_text(task_dir).count("\n") + 1))


# --- validate, openai teacher --------------------------------------------------------------


def _user(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "user")


def test_openai_teacher_writes_an_accepted_vitest_file(
    taught: tuple[Path, Cassettes, subprocess.CompletedProcess[str]],
) -> None:
    task_dir, state, result = taught
    assert result.returncode == 0, result.stderr
    task = load_record(Task, task_dir / "task.json")
    assert task.validation.status == "accepted", task.validation.findings
    files = read_tree(task_dir / "oracle")
    assert task.verifier.tests == (HIDDEN,)
    assert task.verifier.command == TypeScript().test_command([HIDDEN], files)
    assert task.verifier.command == f"npx --no-install vitest run {HIDDEN}"
    oracle = task.validation.controls["oracle"].runs[0]
    assert len(oracle.tests) == 12
    assert all(t.name.startswith(f"{HIDDEN}::") for t in oracle.tests)
    for control in ("empty", "start", "stub"):
        assert task.validation.controls[control].result == "fail", control
    first, instruction = state.requests
    prompt = _user(first)
    assert "```ts\n// module src/text.ts\n" in prompt  # the TypeScript contract
    assert SIGNATURE + "\n" in prompt  # bytes, not characters: no "{" after a "…"
    assert f"```ts file={HIDDEN}" in prompt and "npx --no-install vitest run" in prompt
    assert "```ts file=PATH" in first["messages"][0]["content"]
    loop = task.validation.evidence.teacher_loop
    assert loop is not None and [r.status for r in loop.rounds] == ["accepted"]
    assert loop.prompt_tokens == 1315 and loop.completion_tokens == 668
    info = task.validation.evidence.instruction
    assert info is not None and info.rewrite == "teacher", info
    assert "hidden test file: " + HIDDEN in _user(instruction)
    assert KEY not in result.stdout + result.stderr


def test_contract_cuts_bytes_before_decoding() -> None:
    """tree-sitter offsets are bytes: a non-ASCII default value leaves no body in the head."""
    text = tstext.TEXT_HEAD + tstext.TRUNCATE_WORDS + "export class Café {\n  naïve(): string {\n"
    text += '    return "é";\n  }\n}\n'
    found = contract("src/text.ts", text)
    assert found[-3:] == [
        SIGNATURE,
        "export class Café",
        "  naïve(): string",
    ]


# --- verify --------------------------------------------------------------------------------


def _start(task_dir: Path) -> dict[str, str]:
    return read_tree(task_dir / "workspace")


def _hacks(task_dir: Path) -> dict[str, dict[str, str]]:
    """The cheapest wrong solutions: each a set of files laid over the start (the vitest config
    that excludes every test scores 0 because the fail-to-pass tests are missing from the
    report)."""
    start = _start(task_dir)
    source, tests = start["src/text.ts"], "test/text.test.ts"
    package = json.loads(start["package.json"])
    oracle_tests = read_tree(task_dir / "oracle")[tests].splitlines(True)
    config = tstext.VITEST_CONFIG.replace('environment: "node"', 'exclude: ["**"]')
    return {
        "nothing": {},
        "constant": {"src/text.ts": f'{source}\n{SIGNATURE} {{\n  return "";\n}}\n'},
        "stub": {"src/text.ts": f'{source}\n{SIGNATURE} {{\n  throw new Error("stub");\n}}\n'},
        "deleted tests": {tests: 'import "vitest";\n'},
        "weakened tests": {tests: "".join(ln for ln in oracle_tests if "expect(" not in ln)},
        "pass with no tests": {"package.json": _scripts(package, "vitest run --passWithNoTests")},
        "test script exits 0": {"package.json": _scripts(package, "exit 0")},
        "vitest config excludes all": {
            "vitest.config.ts": config.replace("]", "], passWithNoTests: true")
        },
    }


def _scripts(package: dict[str, Any], test: str) -> str:
    return json.dumps({**package, "scripts": {**package["scripts"], "test": test}}, indent=2)


def _score(task_dir: Path, files: dict[str, str], dest: Path) -> float:
    task = load_record(Task, task_dir / "task.json")
    write_tree(dest, files)
    return verify_files(task_dir, task, dest, load_backend("local")).reward


def test_cheap_wrong_solutions_score_zero_and_a_rewrite_one(mined: Path, tmp_path: Path) -> None:
    scores = {
        name: _score(mined, files, tmp_path / name.replace(" ", "-"))
        for name, files in _hacks(mined).items()
    }
    assert scores == dict.fromkeys(scores, 0.0), scores
    right = {"src/text.ts": _start(mined)["src/text.ts"] + tstext.TRUNCATE_REWRITE}
    assert _score(mined, right, tmp_path / "right") == 1.0


def test_a_correct_solution_with_a_vitest_config_scores_one(mined: Path, tmp_path: Path) -> None:
    """vite bundles a config into node_modules/.vite-temp: the workspace's node_modules is
    writable (its entries link to the read-only environment), so a config loads."""
    right = {"src/text.ts": _start(mined)["src/text.ts"] + tstext.TRUNCATE_REWRITE}
    right["vitest.config.ts"] = tstext.VITEST_CONFIG
    assert _score(mined, right, tmp_path / "right") == 1.0


def test_the_rewrite_also_passes_the_teachers_tests(
    taught: tuple[Path, Cassettes, subprocess.CompletedProcess[str]], tmp_path: Path
) -> None:
    task_dir = taught[0]
    right = {"src/text.ts": _start(task_dir)["src/text.ts"] + tstext.TRUNCATE_REWRITE}
    assert _score(task_dir, right, tmp_path / "right") == 1.0
    assert _score(task_dir, {}, tmp_path / "nothing") == 0.0


# --- export harbor -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def exported(mined: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    items = load_tasks(mined.parent.parent).accepted
    target = tmp_path_factory.mktemp("ts-harbor")
    assert [o.status for o in harbor.export(items, target)] == ["accepted"]
    return target / mined.name


def _harbor_reward(task_dir: Path, exported: Path, solve: bool, files: dict[str, str]) -> str:
    """Run the exported ``tests/test.sh`` as Harbor would, in the plain local sandbox: /app is
    the start with ``files`` over it and its own writable ``node_modules`` (a copy of the built
    environment's, as ``npm ci`` in the agent's image makes it); the Harbor folders go under
    ``.cache/``, which vitest never collects; node gets the flag validation's runs get
    (WebAssembly under the sandbox's memory limit)."""
    task = load_record(Task, task_dir / "task.json")
    ws = write_tree(exported.parent / f".ws-{len(files)}-{solve}", {**_start(task_dir), **files})
    for part in ("tests", "solution"):
        shutil.copytree(exported / part, ws / HARBOR / part)
    environment = task.validation.evidence.environment
    assert environment is not None
    node_modules = Path(environment.location) / "node" / "node_modules"
    shutil.copytree(node_modules, ws / "node_modules", symlinks=True)
    script = (
        f"export NODE_OPTIONS={NODE_BASE} TRAJFORGE_APP=$PWD TRAJFORGE_LOGS=$PWD/{HARBOR}/logs; "
    )
    script += f"bash {HARBOR}/solution/solve.sh; " if solve else ""
    script += f"bash {HARBOR}/tests/test.sh; cat {HARBOR}/logs/reward.txt"
    with load_backend("local").session(ws) as box:
        ran = box.run(script, timeout=120)
    shutil.rmtree(ws)
    return ran.stdout.strip().splitlines()[-1]


def test_harbor_test_sh_runs_the_vitest_command(mined: Path, exported: Path) -> None:
    test_sh = (exported / "tests" / "test.sh").read_text()
    assert f"( {VITEST} )" in test_sh
    assert (exported / "tests" / "hidden" / "test" / "text.test.ts").is_file()
    assert (
        "RUN cd /app && npm ci --ignore-scripts"
        in (exported / "environment" / "Dockerfile").read_text()
    )
    assert f"`{VITEST}` must pass" in (exported / "instruction.md").read_text()
    assert _harbor_reward(mined, exported, True, {}) == "1"
    assert _harbor_reward(mined, exported, False, {}) == "0"


def test_harbor_test_sh_rejects_a_vitest_config_hack(mined: Path, exported: Path) -> None:
    """test.sh lays the task's own runner configuration over /app before the check, as verify
    takes it from the task: a vitest.config.ts that excludes every test (passWithNoTests) no
    longer makes `npx vitest run` exit 0."""
    hack = _hacks(mined)["vitest config excludes all"]
    assert _harbor_reward(mined, exported, False, hack) == "0"
    assert _harbor_reward(mined, exported, True, hack) == "1"  # the oracle still passes
