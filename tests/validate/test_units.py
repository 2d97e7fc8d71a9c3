"""The pure parts of validation: rules, JUnit parsing, weakened-test detection, settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trajforge.errors import UsageError
from trajforge.records import Reason, finding
from trajforge.verifiers.teacher.mined import weakening
from trajforge.verifiers.validate.batch import parse_pytest
from trajforge.verifiers.validate.config import load_config
from trajforge.verifiers.validate.junit import RunOutcome, parse_junit, runs_pytest
from trajforge.verifiers.validate.junit import TestResult as Case
from trajforge.verifiers.validate.rules import judge_oracle, mutant_cell, wilson
from trajforge.verifiers.validate.runner_files import only_checks

XML = """<?xml version="1.0"?><testsuites><testsuite>
<testcase classname="test_calc" name="test_inside"/>
<testcase classname="test_calc" name="test_below">
<failure message="assert 10 == 0">x</failure></testcase>
<testcase classname="test_calc" name="test_skip"><skipped message="later"/></testcase>
</testsuite></testsuites>"""


def _run(status: str, **outcomes: str) -> RunOutcome:
    tests = tuple(Case(name=n, outcome=o) for n, o in outcomes.items())  # type: ignore[arg-type]
    return RunOutcome(status=status, exit_code=0 if status == "pass" else 1, tests=tests)  # type: ignore[arg-type]


def test_parse_junit_reads_outcomes_and_messages() -> None:
    tests = parse_junit(XML)
    assert tests is not None
    assert [(t.name, t.outcome) for t in tests] == [
        ("test_calc::test_inside", "pass"),
        ("test_calc::test_below", "fail"),
        ("test_calc::test_skip", "skipped"),
    ]
    assert tests[1].message == "assert 10 == 0"
    assert parse_junit("") is None and parse_junit("<not xml") is None


def test_runs_pytest_and_batchable_commands() -> None:
    assert runs_pytest("python3 -m pytest -q") and runs_pytest("cd sub && pytest")
    assert not runs_pytest("npm run check") and not runs_pytest("echo pytest-like")
    cmd = parse_pytest("cd 'my dir' && python3 -m pytest -q -p no:cacheprovider")
    assert cmd is not None and cmd.cwd == "my dir" and cmd.module_mode
    assert cmd.args == ("-q", "-p", "no:cacheprovider")
    assert parse_pytest("pytest -q | tee log") is None
    assert parse_pytest("npm test") is None


def test_wilson_interval() -> None:
    lo, hi = wilson(9, 10)
    assert 0.59 < lo < 0.61 and 0.98 < hi < 0.99
    assert wilson(0, 0) == (0.0, 1.0)
    assert wilson(5, 5)[1] == 1.0


def test_flaky_test_is_dropped_and_task_rejudged() -> None:
    runs = [
        _run("pass", a="passed", b="passed"),
        _run("fail", a="passed", b="failed"),
        _run("pass", a="passed", b="passed"),
    ]
    reasons, dropped, ok = judge_oracle(runs, missing=0)
    assert ok and dropped == ["b"]
    assert reasons[0].detail.startswith("dropped flaky test b")
    assert {f.reason for f in reasons} == {Reason.PROVEN}
    # a control failing only the dropped test is not rejected by the verifier
    assert not _run("fail", a="passed", b="failed").rejects(dropped)


def test_oracle_failure_reasons() -> None:
    fails = [_run("fail", a="failed")] * 3
    reasons, _, ok = judge_oracle(fails, missing=44)
    assert not ok and reasons == [
        finding(
            Reason.ORACLE_FAILS,
            "oracle fails: a fail(s); 44 files the session touched could not be recovered",
        )
    ]
    whole = [_run("pass"), _run("error"), _run("pass")]
    assert judge_oracle(whole, 0)[0] == [finding(Reason.ORACLE_FLAKY, "oracle flaked 1/3")]


def test_mutant_cells_never_count_unknown_as_kill() -> None:
    assert mutant_cell(_run("fail", a="failed"), []) == "killed"
    assert mutant_cell(_run("pass", a="passed"), []) == "survived"
    timeout = RunOutcome(status="timeout", exit_code=None)
    collection = RunOutcome(status="error", exit_code=2, detail="pytest: collection error")
    assert mutant_cell(timeout, []) == mutant_cell(collection, []) == "unknown"


ORIGINAL = """from stats import mean

def test_mean():
    assert mean([1, 2]) == 1.5
    assert mean([2]) == 2

def test_other():
    assert mean([0]) == 0
"""


def test_weakening_detects_constant_cut_deleted_and_skipped() -> None:
    constant = ORIGINAL.replace("assert mean([1, 2]) == 1.5", "assert True")
    found = weakening("test_stats.py", constant, [ORIGINAL])
    assert "test_stats.py::test_mean asserts a constant (assert True)" in found
    assert "test_stats.py::test_mean assertions cut from 2 to 1" in found
    deleted = ORIGINAL.split("def test_other")[0]
    assert weakening("test_stats.py", deleted, [ORIGINAL]) == [
        "test_stats.py::test_other was deleted"
    ]
    skipped = ORIGINAL.replace("def test_other", "@pytest.mark.skip\ndef test_other")
    assert weakening("test_stats.py", skipped, [ORIGINAL]) == [
        "test_stats.py::test_other was marked skip/xfail"
    ]
    stronger = ORIGINAL + "\n\ndef test_more():\n    assert mean([4]) == 4\n"
    assert weakening("test_stats.py", stronger, [ORIGINAL]) == []
    assert weakening("x.test.ts", "expect(true).toBe(true)", []) != []


def test_config_layers_and_errors(tmp_path: Path) -> None:
    toml = tmp_path / "v.toml"
    toml.write_text("[validate]\nmax_mutants = 5\nmin_kill_rate = 0.9\n")
    cfg = load_config(toml, ["max_mutants=7"])
    assert (cfg.max_mutants, cfg.min_kill_rate, cfg.oracle_runs) == (7, 0.9, 3)
    with pytest.raises(UsageError, match="unknown setting 'bogus'"):
        load_config(None, ["bogus=1"])
    with pytest.raises(UsageError, match=r"min_kill_rate.*less than or equal to 1"):
        load_config(None, ["min_kill_rate=1.5"])
    with pytest.raises(UsageError, match="expected KEY=VALUE"):
        load_config(None, ["max_mutants"])
    toml.write_text("max_mutants = [")
    with pytest.raises(UsageError, match="not valid TOML"):
        load_config(toml)


def test_only_a_needed_missing_file_makes_the_workspace_incomplete(reconstructed: Path) -> None:
    """A test file the session changed beyond recovery (a `sed -i` over the repository's own
    tests, as in pi-mono's theme session) does not block a task checked by named tests that do
    not include it; a missing source file, or any missing file under a suite command, does."""
    from trajforge.records import Task, Verifier, load_record
    from trajforge.verifiers.validate.single import precheck

    path = next(p for p in sorted(reconstructed.glob("tasks/extend-*/task.json")))
    task = load_record(Task, path)
    files = task.files.model_copy(update={"missing": ("test/editor.test.ts",)})
    hidden = Verifier(kind="none")
    named = Verifier(kind="tests", tests=("test/new.test.ts",))
    suite = Verifier(kind="command", command="npm test")
    for verifier, blocked in ((hidden, False), (named, False), (suite, True)):
        got = precheck(task.model_copy(update={"files": files, "verifier": verifier}))
        assert (got is not None and got.reason is Reason.WORKSPACE_INCOMPLETE) is blocked
    source = task.files.model_copy(update={"missing": ("src/editor.ts",)})
    got = precheck(task.model_copy(update={"files": source, "verifier": hidden}))
    assert got is not None and got.reason is Reason.WORKSPACE_INCOMPLETE
    # unknown, but the episode never read or changed it (a hand edit earlier in the session):
    # left out, and the oracle's run says whether the check needs it; a suite may, so it blocks
    absent = task.files.model_copy(update={"absent": ("src/renderer.ts",)})
    for verifier, blocked in ((hidden, False), (named, False), (suite, True)):
        got = precheck(task.model_copy(update={"files": absent, "verifier": verifier}))
        assert (got is not None and got.reason is Reason.WORKSPACE_INCOMPLETE) is blocked


def test_a_pytest_run_with_no_report_keeps_what_pytest_said() -> None:
    """trl's hidden tests ended "oracle fails: exit 4: pytest wrote no JUnit report" and no
    more: a usage or start-up error says why on pytest's output, which the detail keeps (an
    empty detail is a defect)."""
    from trajforge.seam_types import RunResult
    from trajforge.verifiers.validate.junit import outcome_of

    said = (
        "ERROR: usage: __main__.py [options] [file_or_dir] [file_or_dir] [...]\n"
        "__main__.py: error: unrecognized arguments: --reruns=2\n  inifile: pyproject.toml\n"
        "  rootdir: /workspace\n"
    )
    result = RunResult(
        backend="local", command=("sh",), exit_code=4, stdout="", stderr=said, wall_s=0.4
    )
    run = outcome_of(result, "python -m pytest -q tests/test_x.py", None)
    assert run.status == "error"
    assert run.detail.startswith("exit 4: pytest wrote no JUnit report\n")
    assert "unrecognized arguments: --reruns=2" in run.detail


def test_a_check_that_only_type_checks_or_lints_is_told_from_one_that_runs_code() -> None:
    """The reference is run once where every program the check runs, itself or through the
    scripts it names (in any member), is a type checker or linter: pi-mono's ``npm run check``
    took 17 to 109 s a run, three times over. A test runner, ``node``, an install or a script
    with no body anywhere is not a checker."""
    check = "biome check --write . && npm run check --workspaces --if-present && tsgo --noEmit"
    root = {"scripts": {"check": check, "test": "vitest run", "build": "tsgo -p . && node x.js"}}
    web = {"scripts": {"check": "tsc --noEmit && cd example && tsc --noEmit", "lint": "eslint ."}}
    files = {"package.json": json.dumps(root), "packages/web/package.json": json.dumps(web)}
    static = [
        "npm run check", "npx tsc --noEmit", "pnpm exec eslint src", "yarn lint",
        "python -m mypy src && ruff check .", "cd web && CI=1 tsc -p .",
    ]  # fmt: skip
    running = [
        "npm test", "npm run build", "pytest -q", "npm install && tsc", "yarn install",
        "tsc && node dist/main.js", "yarn missing", "make check", "tsc | tee log",
    ]  # fmt: skip
    assert [c for c in static if not only_checks(c, files)] == []
    assert [c for c in running if only_checks(c, files)] == []
