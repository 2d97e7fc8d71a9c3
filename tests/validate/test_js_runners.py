"""The JavaScript / TypeScript test runners as first-class as pytest (``verifiers/validate/
runners.py``): the runner told from the check command and package.json, the flags that make it
write its report, and real runs of vitest, jest, mocha, node:test (TypeScript through tsx) and
bun, each on a tiny project with two passing tests and one failing, through the real local
sandbox and validation's :class:`~trajforge.verifiers.validate.matrix.Runner`.

The runners come from the npm registry once, into ``~/.cache/trajforge-test-npm/<hash>`` (the
hash of the pinned versions); without the registry those tests skip, saying so.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from trajforge.protocols import Limits, RunResult
from trajforge.records import EnvironmentRecipe
from trajforge.verifiers.environments.session import EnvSandbox
from trajforge.verifiers.sandbox.local import LocalSandbox
from trajforge.verifiers.validate import runners
from trajforge.verifiers.validate.junit import RunOutcome, outcome_of
from trajforge.verifiers.validate.matrix import ControlRunner

PINNED = {
    "vitest": "3.2.7",
    "jest": "30.5.2",
    "mocha": "11.8.0",
    "tsx": "4.23.15",
    "bun": "1.4.5",
}
"""Versions that run on Node 20 (vitest 4 and mocha 12 want newer Node)."""
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "trajforge-test-npm"
SUM = "export function sum(a: number, b: number): number {\n  return Math.min(a + b, 100);\n}\n"
SUM_JS = "function sum(a, b) {\n  return Math.min(a + b, 100);\n}\nmodule.exports = { sum };\n"
CASES = """describe("sum", () => {
  it("adds", () => { EQ(sum(1, 2), 3); });
  it("adds negatives", () => { EQ(sum(-1, -2), -3); });
  it("caps at 100", () => { EQ(sum(60, 60), 100); });
});
"""
"""Two tests that pass on any sum, one that fails without the cap."""
TITLES = ("sum > adds", "sum > adds negatives", "sum > caps at 100")
ASSERT_JS = 'const assert = require("node:assert");\n'
OTHER = 'import { it, describe } from "vitest";\ndescribe("other", () => it("runs", () => {}));\n'
EXPECT_CASES = (
    CASES.replace("EQ(", "expect(")
    .replace(", 3)", ").toBe(3)")
    .replace(", -3)", ").toBe(-3)")
    .replace(", 100)", ").toBe(100)")
)
"""The cases in vitest's and bun's ``expect(...).toBe(...)`` style."""
PROJECTS: dict[str, tuple[dict[str, str], str, str]] = {
    # runner: (files, the test file, the prefix of its tests' names)
    "vitest": (
        {
            "package.json": '{"name": "calc", "type": "module", "scripts": {"test": "vitest"}}',
            "sum.ts": SUM,
            "sum.test.ts": 'import { describe, it, expect } from "vitest";\n'
            'import { sum } from "./sum";\n' + EXPECT_CASES,
        },
        "sum.test.ts",
        "sum.test.ts::",
    ),
    "jest": (
        {
            "package.json": '{"name": "calc", "scripts": {"test": "jest"}}',
            "sum.js": SUM_JS,
            "sum.test.js": 'const { sum } = require("./sum");\n'
            + ASSERT_JS
            + CASES.replace("EQ(", "assert.strictEqual("),
        },
        "sum.test.js",
        "sum.test.js::",
    ),
    "mocha": (
        {
            "package.json": '{"name": "calc", "scripts": {"test": "mocha"}}',
            "sum.js": SUM_JS,
            "test/sum.test.js": 'const { sum } = require("../sum");\n'
            + ASSERT_JS
            + CASES.replace("EQ(", "assert.strictEqual("),
        },
        "test/sum.test.js",
        "test/sum.test.js::",
    ),
    "node-test": (
        {
            "package.json": '{"name": "calc", "type": "module",'
            ' "scripts": {"test": "node --import tsx --test sum.test.ts"}}',
            "sum.ts": SUM,
            "sum.test.ts": 'import { describe, it } from "node:test";\n'
            'import assert from "node:assert";\nimport { sum } from "./sum.ts";\n'
            + CASES.replace("EQ(", "assert.strictEqual("),
        },
        "sum.test.ts",
        "",
    ),
    # CommonJS TypeScript (no "type": "module", as in a Bun / Elysia app): tsx compiles it
    # with esbuild's sync API, whose worker thread cannot start under RLIMIT_AS
    "node-test-cjs": (
        {
            "package.json": '{"name": "calc", "scripts": '
            '{"test": "node --import tsx --test test/sum.test.ts"}}',
            "sum.ts": SUM,
            "test/sum.test.ts": 'import { describe, it } from "node:test";\n'
            'import assert from "node:assert";\nimport { sum } from "../sum";\n'
            + CASES.replace("EQ(", "assert.strictEqual("),
        },
        "test/sum.test.ts",
        "",
    ),
    "bun": (
        {
            "package.json": '{"name": "calc", "scripts": {"test": "bun test"}}',
            "sum.ts": SUM,
            "sum.test.ts": 'import { describe, it, expect } from "bun:test";\n'
            'import { sum } from "./sum";\n' + EXPECT_CASES,
        },
        "sum.test.ts",
        "sum.test.ts::",
    ),
}


def _uncapped(files: dict[str, str]) -> dict[str, str]:
    """The project with the cap removed: "caps at 100" fails, the other two pass."""
    return {p: t.replace("Math.min(a + b, 100)", "a + b") for p, t in files.items()}


def _broken(files: dict[str, str], test_file: str) -> dict[str, str]:
    """The project with a syntax error in its test file."""
    return {**files, test_file: files[test_file] + "\ndescribe('unclosed', () => {\n"}


# --- the npm cache and the sandbox -------------------------------------------------------


def _install(key: str) -> Path:
    """``CACHE/key/node/node_modules``, installed once (two workers: one rename wins)."""
    env = CACHE / key
    if (env / "node" / "node_modules" / ".bin").is_dir():
        return env
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("NODE / NPM NOT ON PATH: the JavaScript test-runner tests are skipped")
    CACHE.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=CACHE))
    tmp.chmod(0o755)  # the sandbox's own uid reads it
    (tmp / "node").mkdir()
    deps = {"name": "trajforge-test-runners", "private": True, "dependencies": PINNED}
    (tmp / "node" / "package.json").write_text(json.dumps(deps))
    argv = ["npm", "install", "--no-audit", "--no-fund", "--fetch-retries=1"]
    done = subprocess.run(argv, cwd=tmp / "node", capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.skip(
            f"NPM COULD NOT INSTALL {PINNED} FROM THE REGISTRY (exit {done.returncode}): the "
            f"JavaScript test-runner tests are skipped. {done.stderr.strip()[-600:]}"
        )
    try:
        os.rename(tmp, env)
    except OSError:  # another worker got there first
        shutil.rmtree(tmp, ignore_errors=True)
    return env


@pytest.fixture(scope="session")
def npm_env() -> Path:
    """The folder holding ``node/node_modules`` with every pinned runner."""
    key = hashlib.sha256(json.dumps(PINNED, sort_keys=True).encode()).hexdigest()[:16]
    return _install(key)


@pytest.fixture(scope="session")
def sandbox(npm_env: Path) -> EnvSandbox:
    """The local sandbox with the runners linked into each workspace, as task environments are."""
    inner = LocalSandbox(expose=[npm_env])
    problem = inner.available()
    if problem:
        pytest.skip(f"LOCAL SANDBOX UNAVAILABLE, sandboxed runner tests skipped: {problem}")
    recipe = EnvironmentRecipe(
        ecosystem="node",
        manager="npm",
        manifest="package.json",
        install=("npm install",),
        toolchain=("node", "npm"),
    )
    return EnvSandbox(inner, [recipe], str(npm_env))


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


# --- telling the runner, and reaching it -------------------------------------------------


def _package(scripts: dict[str, str], **extra: object) -> dict[str, str]:
    return {"package.json": json.dumps({"name": "x", "scripts": scripts, **extra})}


@pytest.mark.parametrize(
    ("command", "files", "name"),
    [
        ("npm test", _package({"test": "vitest run"}), "vitest"),
        ("npm run test:unit", _package({"test:unit": "jest --coverage"}), "jest"),
        ("pnpm test", _package({"test": "tsc && mocha"}), "mocha"),
        ("yarn test", _package({"test": "cross-env CI=1 jest"}), "jest"),
        ("bun run test", _package({"test": "bun test"}), "bun"),
        ("bun test", {}, "bun"),
        ("npx vitest run src", {}, "vitest"),
        ("pnpm exec jest", {}, "jest"),
        ("node --test", {}, "node-test"),
        ("node --import tsx --test 'test/*.test.ts'", {}, "node-test"),
        ("npm test", _package({"test": "node --test && eslint ."}), "node-test"),
        (
            "npm test",
            _package({"test": "react-scripts test"}, dependencies={"react-scripts": "5"}),
            "jest",
        ),
        ("npm test", _package({"test": "npm run unit --", "unit": "vitest run"}), "vitest"),
        ("python3 -m pytest -q", {}, "pytest"),
        # flags cannot reach a runner that does not end its script, or a script npm calls
        ("npm test", _package({"test": "vitest run && eslint ."}), None),
        ("npm test", _package({"test": "npm run unit", "unit": "vitest run"}), None),
        ("npm test", _package({"test": "react-scripts test"}), None),
        ("npm test", {}, None),
        ("make test", {}, None),
    ],
)
def test_runner_told_from_command_and_package(
    command: str, files: dict[str, str], name: str | None
) -> None:
    found = runners.runner_for(command, files)
    assert (found.name if found else None) == name


def test_monorepo_reads_the_package_the_command_runs_in() -> None:
    files = {
        **_package({"test": "turbo run test"}),
        "packages/core/package.json": json.dumps({"scripts": {"test": "mocha"}}),
        "packages/web/package.json": json.dumps({"scripts": {"test": "vitest run"}}),
    }
    assert runners.runner_for("npm test", files) is None  # turbo: not one runner
    for command, name in [
        ("cd packages/core && npm test", "mocha"),
        ("npm --prefix packages/web test", "vitest"),
        ("cd packages/web/src && npm test", "vitest"),  # the nearest package.json above
    ]:
        found = runners.runner_for(command, files)
        assert found is not None and found.name == name, command


def test_flags_reach_the_runner_through_each_package_manager() -> None:
    vitest = "--reporter=default --reporter=junit --outputFile=/tmp/trajforge-vitest.xml"
    files = _package({"test": "vitest run", "test:unit": "vitest run"})
    expected = {
        "npm test": f"npm test -- {vitest}",
        "npm test -- src/a": f"npm test -- src/a {vitest}",
        "cd app && npm run test:unit && echo ok": (
            f"cd app && npm run test:unit -- {vitest} && echo ok"
        ),
        "pnpm test": f"pnpm run test {vitest}",
        "pnpm run test -- src": f"pnpm run test src {vitest}",
        "yarn test": f"yarn test {vitest}",
        "npx vitest run 'src/**'": f"npx vitest run 'src/**' {vitest}",
    }
    for command, rewritten in expected.items():
        found = runners.runner_for(command, {"app/package.json": files["package.json"], **files})
        assert found is not None
        assert found.invocation(command).command == rewritten
    jest = runners.runner_for("npx jest", {})
    assert jest is not None
    call = jest.invocation("npx jest", stop_early=True)
    assert call.command.endswith("--ci --json --outputFile=/tmp/trajforge-jest.json")
    node = runners.runner_for("node --test", {})
    assert node is not None and node.invocation("node --test").command == "node --test"
    options = node.invocation("node --test").env["NODE_OPTIONS"]
    assert (
        "--test-reporter=junit --test-reporter-destination=/tmp/trajforge-node-test.xml" in options
    )
    pytest_env = runners.RUNNERS["pytest"].invocation("pytest", stop_early=True).env
    assert pytest_env == {
        "PYTEST_ADDOPTS": "--junitxml=/tmp/trajforge-junit.xml -p no:cacheprovider -x"
    }


# --- real runs -------------------------------------------------------------------------------


def _names(run: RunOutcome) -> dict[str, str]:
    return {t.name: t.outcome for t in run.tests}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_runner_reports_each_test_in_the_sandbox(
    name: str, sandbox: EnvSandbox, tmp_path: Path
) -> None:
    """Through validation's ControlRunner in one real sandbox session: the failing test and the two
    passing ones by name, a project whose tests all pass, a test file that does not parse."""
    files, test_file, prefix = PROJECTS[name]
    name = name.removesuffix("-cjs")
    first = _write(tmp_path / "first", files)
    with sandbox.session(first, Limits(timeout_s=120)) as box:
        runner = ControlRunner(box, "npm test", tmp_path / "scratch", files)
        assert runner.runner is not None and runner.runner.name == name
        failing = runner.run(_uncapped(files), 120)
        passing = runner.run(files, 120)
        broken = runner.run(_broken(files, test_file), 120)
        stopped = runner.run(_uncapped(files), 120, stop_early=True)
    names = [prefix + title for title in TITLES]
    assert failing.status == "fail", failing.detail
    assert _names(failing) == dict(zip(names, ["pass", "pass", "fail"], strict=True))
    assert failing.failing() == [names[2]]
    assert passing.status == "pass" and _names(passing) == dict.fromkeys(names, "pass")
    assert broken.status == "error" and broken.detail.startswith(f"{name}: exit ")
    assert len(broken.detail.splitlines()) > 1  # the output's last lines
    assert stopped.status == "fail" and names[2] in stopped.failing(), stopped.detail


@pytest.mark.slow
def test_npm_test_passes_its_arguments_to_the_script(npm_env: Path, tmp_path: Path) -> None:
    """On the host: ``npm test -- ARGS`` reaches vitest after the script's own words (a name
    filter here), and ``node --import tsx --test`` reports through NODE_OPTIONS."""
    files, _, _ = PROJECTS["vitest"]
    project = _write(tmp_path / "vitest", {**_uncapped(files), "other.test.ts": OTHER})
    (project / "node_modules").symlink_to(npm_env / "node" / "node_modules")
    filtered = _host_run(project, "npm test -- sum.test", files)
    assert set(_names(filtered)) == {f"sum.test.ts::{title}" for title in TITLES}
    assert filtered.status == "fail" and filtered.failing() == [f"sum.test.ts::{TITLES[2]}"]
    assert _names(_host_run(project, "npm test", files))["other.test.ts::other > runs"] == "pass"
    files, _, _ = PROJECTS["node-test"]
    project = _write(tmp_path / "node", _uncapped(files))
    (project / "node_modules").symlink_to(npm_env / "node" / "node_modules")
    run = _host_run(project, "node --import tsx --test sum.test.ts", {})
    assert _names(run) == dict(zip(TITLES, ["pass", "pass", "fail"], strict=True))


def _host_run(project: Path, command: str, files: dict[str, str]) -> RunOutcome:
    """The check run by a subprocess in ``project``, its report written under the project."""
    found = runners.runner_for(command, files)
    assert found is not None
    found = replace(found, report_path=str(project / "report.out"))
    call = found.invocation(command)
    argv = ("sh", "-c", call.command)
    env = {**os.environ, **call.env}
    done = subprocess.run(argv, cwd=project, env=env, capture_output=True, text=True, timeout=120)
    result = RunResult(
        backend="host",
        command=argv,
        exit_code=done.returncode,
        stdout=done.stdout,
        stderr=done.stderr,
        wall_s=0.0,
    )
    report = Path(found.report_path)
    return outcome_of(result, command, report.read_text() if report.is_file() else None, found)


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # dark-factory's core: "Bun + Elysia", scripts run by bun, Bun's old types package
        (_package({"dev": "bun run --watch src/index.ts"}, devDependencies={"bun-types": "1"}),
         "bun"),
        (_package({"build": "tsc && bunx esbuild src/index.ts"}), "bun"),
        (_package({"start": "node dist/index.js"}, devDependencies={"@types/bun": "1"}), "bun"),
        ({**_package({}), "bunfig.toml": "[test]\n"}, "bun"),
        ({**_package({}), "bun.lock": "{}"}, "bun"),
        # a runner package wins; "bundle" and a "bun" word inside a path are no Bun
        (_package({"test": "vitest", "dev": "bun run x"}, devDependencies={"vitest": "3"}),
         "vitest"),
        (_package({"bundle": "rollup -c", "start": "node ./bun/index.js"}), "node"),
        (_package({"test": "node --test"}), "node"),
    ],
)  # fmt: skip
def test_a_package_that_runs_on_bun_has_its_hidden_tests_run_by_bun(
    files: dict[str, str], expected: str
) -> None:
    from trajforge.reconstruct.node_project import runner_of

    assert runner_of(files, "") == expected


BUN_HOOK_FAILURE = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="bun test" tests="1" failures="1">
  <testsuite name="src/index.hidden.test.ts" file="src/index.hidden.test.ts" tests="1">
    <testcase name="(unnamed)" classname="" file="src/index.hidden.test.ts">
      <failure type="Error" />
    </testcase>
  </testsuite>
</testsuites>
"""
BUN_HOOK_OUTPUT = """bun test v1.4.5 (a7733435c)

src/index.hidden.test.ts:
35 | export const logger: Logger = {
                  ^
error: "logger" has already been declared
    at /workspace/core/src/logging.ts:35:14
(fail) (unnamed) [0.89ms]

 0 pass
 1 fail
Ran 1 test across 1 file. [6.00ms]
"""


def test_a_failure_the_report_gives_no_message_keeps_the_runners_words() -> None:
    """Bun reports a module that failed to load in a hook as a test "(unnamed)" with a bare
    ``<failure type="Error" />``: the oracle's finding (and so the teacher's feedback) reads
    the runner's own error, not "(unnamed) fail(s)" (dark-factory's reference logging.ts
    declares ``logger`` twice)."""
    from trajforge.verifiers.validate.rules import judge_oracle

    bun = runners.RUNNERS["bun"]
    result = RunResult(
        backend="host", command=("sh",), exit_code=1, stdout=BUN_HOOK_OUTPUT, stderr="",
        wall_s=0.1,
    )  # fmt: skip
    run = outcome_of(result, "cd core && bun test src/index.hidden.test.ts", BUN_HOOK_FAILURE, bun)
    assert run.status == "fail" and run.failing() == ["src/index.hidden.test.ts::(unnamed)"]
    assert 'error: "logger" has already been declared' in run.detail
    (found,), _, ok = judge_oracle([run], 0)
    assert not ok and found.reason == "oracle_fails"
    assert found.detail.startswith("oracle fails: (unnamed) fail(s); output ends:")
    assert "logging.ts:35:14" in found.detail
