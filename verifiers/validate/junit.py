"""Per-test results of one verifier run: the test runner's own report plus the exit code.

Nothing is read from stdout. A run of a known runner (:mod:`.runners`: pytest, vitest, jest,
node:test, mocha, bun) yields one :class:`TestResult` per test in its report (JUnit XML, or
Jest's JSON); any other command yields one pseudo-test named after the command, decided by its
exit code. A JavaScript runner's run passes on exit 0, fails when a test in its report failed,
and is otherwise an error whose detail names the runner and ends with the output's last lines.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from trajforge.protocols import RunResult
from trajforge.records import CheckRun, Outcome, RunStatus, TestOutcome, TestRow
from trajforge.records.controls import spelled_outcome
from trajforge.verifiers.environments.session import WORKSPACE

if TYPE_CHECKING:
    from trajforge.verifiers.validate.runners import TestRunner

JUNIT_PATH = "/tmp/trajforge-junit.xml"
_PYTEST = re.compile(r"(^|[\s/;&|(])(py\.test|pytest)(\s|$)|-m\s+pytest\b")
_MESSAGE_CHARS = 300
_TAIL_LINES = 20
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_BAD = (Outcome.FAIL, Outcome.ERROR)
"""Test outcomes that make a run fail."""
_JUNIT_TAGS: dict[str, TestOutcome] = {
    "failure": Outcome.FAIL,
    "error": Outcome.ERROR,
    "skipped": Outcome.SKIPPED,
}
"""A JUnit ``testcase``'s child element → the test's outcome (none: it passed)."""


class TestResult(BaseModel):
    """One test's outcome in one run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """Test identity: ``classname::name`` from the XML, or the command for non-pytest checks."""
    outcome: TestOutcome
    """pass / fail / error / skipped."""
    message: str = ""
    """First line of the failure or error message, capped."""

    @field_validator("outcome", mode="before")
    @classmethod
    def _past(cls, value: object) -> object:
        return spelled_outcome(value)


class RunOutcome(BaseModel):
    """What one verifier run showed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    status: RunStatus
    """Overall verdict of the run (see :data:`RunStatus`)."""
    exit_code: int | None
    """Exit code of the check command."""
    tests: tuple[TestResult, ...] = ()
    """Per-test results."""
    wall_s: float = 0.0
    """Wall time of the command."""
    detail: str = ""
    """Why the run is an error or timeout, when it is; for a failed run whose report gives a
    failing test no message (:func:`said`), the runner's telling lines and last lines."""

    def failing(self, ignore: Collection[str] = ()) -> list[str]:
        """Names of failed or errored tests, minus ``ignore`` (dropped flaky tests)."""
        return [t.name for t in self.tests if t.outcome in _BAD and t.name not in ignore]

    def stored(self, ignore: Collection[str] = ()) -> CheckRun:
        """The run as the validation stores it (``failing``: kept tests that failed)."""
        return CheckRun(
            status=self.status,
            exit_code=self.exit_code,
            wall_s=self.wall_s,
            detail=self.detail,
            failing=tuple(self.failing(ignore)),
            tests=tuple(TestRow(name=t.name, outcome=t.outcome) for t in self.tests),
        )

    def rejects(self, ignore: Collection[str] = ()) -> bool:
        """The verifier gives this run less than full reward (ignoring dropped tests)."""
        if self.status == Outcome.PASS:
            return False
        if self.status == Outcome.FAIL:
            return bool(self.failing(ignore))
        return True


def runs_pytest(command: str) -> bool:
    """The check command invokes pytest (so ``PYTEST_ADDOPTS`` reaches it)."""
    return bool(_PYTEST.search(command))


def pytest_env(extra_opts: Sequence[str] = ()) -> dict[str, str]:
    """Environment that makes any pytest invocation write JUnit XML to :data:`JUNIT_PATH`."""
    opts = [f"--junitxml={JUNIT_PATH}", "-p", "no:cacheprovider", *extra_opts]
    return {"PYTEST_ADDOPTS": " ".join(opts)}


def first_line(text: str) -> str:
    """First non-blank line of a message, capped."""
    return text.strip().splitlines()[0][:_MESSAGE_CHARS] if text.strip() else ""


def said(message: str) -> bool:
    """The report gave a failing test a message of its own, not only its element's name
    (Bun's ``<failure type="Error" />`` for a module that failed to load in a hook)."""
    return bool(message) and message not in _JUNIT_TAGS


def case_outcome(case: ET.Element) -> tuple[TestOutcome, str]:
    """(outcome, message) of one JUnit ``testcase``."""
    for child in case:
        outcome = _JUNIT_TAGS.get(child.tag)
        if outcome is not None:
            return outcome, first_line(child.get("message") or child.text or "") or child.tag
    return Outcome.PASS, ""


def parse_junit(xml_text: str) -> tuple[TestResult, ...] | None:
    """Test cases of a JUnit XML document; None when it is empty or not JUnit XML."""
    if not xml_text.strip():
        return None
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        return None
    results = []
    for case in root.iter("testcase"):
        cls, name = case.get("classname", ""), case.get("name", "")
        ident = f"{cls}::{name}" if cls else name
        outcome, message = case_outcome(case)
        results.append(TestResult(name=ident, outcome=outcome, message=message))
    return tuple(results)


def _outcome(
    status: RunStatus, result: RunResult, tests: tuple[TestResult, ...] = (), detail: str = ""
) -> RunOutcome:
    return RunOutcome(
        status=status,
        exit_code=result.exit_code,
        tests=tests,
        wall_s=round(result.wall_s, 4),
        detail=detail,
    )


def outcome_of(
    result: RunResult, command: str, report: str | None, runner: TestRunner | None = None
) -> RunOutcome:
    """Turn a sandbox result (and the run's report, if any) into a :class:`RunOutcome`.

    ``runner``: the check's runner (:func:`~.runners.runner_for`); without one, a command that
    runs pytest is read as pytest, any other by its exit code."""
    if result.timed_out or result.killed is not None:
        return _outcome(
            Outcome.TIMEOUT, result, detail=f"killed by the {result.killed or 'timeout'} limit"
        )
    if runner is not None and runner.name != "pytest":
        return _judge_report(result, runner, report)
    if runner is None and not runs_pytest(command):
        outcome: TestOutcome = Outcome.PASS if result.exit_code == 0 else Outcome.FAIL
        test = TestResult(name=command, outcome=outcome, message=f"exit {result.exit_code}")
        if result.exit_code == 0:
            return _outcome(Outcome.PASS, result, (test,))
        return _outcome(Outcome.FAIL, result, (test,), _why(result))  # what it printed
    tests = parse_junit(report or "")
    if tests is None:
        if result.exit_code == 0:
            return _outcome(Outcome.PASS, result)
        said = _why(result)  # a usage or start-up error says why on its output
        detail = f"exit {result.exit_code}: pytest wrote no JUnit report"
        return _outcome(Outcome.ERROR, result, detail=f"{detail}\n{said}" if said else detail)
    return _judge_pytest(result, tests)


def _judge_report(result: RunResult, runner: TestRunner, report: str | None) -> RunOutcome:
    """A JavaScript runner's run: pass on exit 0, fail when its report has a failed test."""
    tests = runner.parse(report or "")
    if result.exit_code == 0:
        return _outcome(Outcome.PASS, result, tests or ())
    if tests and any(t.outcome == Outcome.FAIL for t in tests):
        silent = any(t.outcome in _BAD and not said(t.message) for t in tests)
        return _outcome(Outcome.FAIL, result, tests, _why(result) if silent else "")
    why = "wrote no report" if tests is None else "reported no failed test"
    detail = f"{runner.name}: exit {result.exit_code}, {why}"
    tail = _why(result)
    return _outcome(Outcome.ERROR, result, tests or (), f"{detail}\n{tail}" if tail else detail)


def _why(result: RunResult) -> str:
    """A failed check's telling lines (:func:`~.blame.telling_lines`), then its last lines."""
    from trajforge.verifiers.validate.blame import telling_lines

    telling = telling_lines(_ANSI.sub("", f"{result.stdout}\n{result.stderr}"))
    tail = output_tail(result)
    if not telling:
        return tail
    return "\n".join([*telling, "…", tail]) if tail else "\n".join(telling)


def output_tail(result: RunResult, lines: int = _TAIL_LINES) -> str:
    """The last ``lines`` lines of the run's stdout then stderr, colour codes removed."""
    text = "\n".join(s.rstrip() for s in (result.stdout, result.stderr) if s.strip())
    kept = [line.rstrip() for line in _ANSI.sub("", text).splitlines()]
    return "\n".join(kept[-lines:])


_PYTEST_EXITS = {
    2: "collection error or interrupted",
    3: "internal error",
    4: "usage error",
    5: "no tests collected",
}


def _judge_pytest(result: RunResult, tests: tuple[TestResult, ...]) -> RunOutcome:
    code = result.exit_code
    if code == 0:
        return _outcome(Outcome.PASS, result, tests)
    if code == 1 and any(t.outcome in _BAD for t in tests):
        return _outcome(Outcome.FAIL, result, tests)
    detail = _PYTEST_EXITS.get(code or 0, f"exit {code}")
    return _outcome(Outcome.ERROR, result, tests, f"pytest: {detail}")


# --- the JavaScript runners' reports -------------------------------------------------------

Identity = Callable[[tuple[str, ...], ET.Element, str], tuple[str, bool]]
"""(enclosing suite names, test case, workspace root) → (test name, the case is a whole file
that failed to load). Names are stable across runs: ``file::describe > title``."""


def _relative(path: str, root: str) -> str:
    return (
        path[len(root) :].lstrip("/") if root and path.startswith(root.rstrip("/") + "/") else path
    )


def _vitest_id(suites: tuple[str, ...], case: ET.Element, root: str) -> tuple[str, bool]:
    cls, name = case.get("classname", ""), case.get("name", "")
    return (f"{cls}::{name}" if cls else name), name == cls  # a file that failed to load


def _mocha_id(suites: tuple[str, ...], case: ET.Element, root: str) -> tuple[str, bool]:
    file = _relative(case.get("file", ""), root)
    title = " > ".join(p for p in (case.get("classname", ""), case.get("name", "")) if p)
    return (f"{file}::{title}" if file else title), False


def _bun_id(suites: tuple[str, ...], case: ET.Element, root: str) -> tuple[str, bool]:
    file = case.get("file", "")
    inner = suites[1:] if suites[:1] == (file,) else suites
    title = " > ".join([*inner, case.get("name", "")])
    return (f"{file}::{title}" if file else title), False


def _node_id(suites: tuple[str, ...], case: ET.Element, root: str) -> tuple[str, bool]:
    name = case.get("name", "")
    if not suites and name.startswith("/"):
        return _relative(name, root), True  # node:test names a file that failed by its path
    return " > ".join([*suites, name]), False


IDENTITIES: dict[str, Identity] = {
    "vitest": _vitest_id,
    "mocha": _mocha_id,
    "bun": _bun_id,
    "node-test": _node_id,
}


def _cases(node: ET.Element, suites: tuple[str, ...]) -> list[tuple[tuple[str, ...], ET.Element]]:
    found: list[tuple[tuple[str, ...], ET.Element]] = []
    for child in node:
        if child.tag == "testsuite":
            found += _cases(child, (*suites, child.get("name", "")))
        elif child.tag == "testcase":
            found.append((suites, child))
    return found


def parse_junit_tree(
    text: str, identity: Identity, root: str = WORKSPACE
) -> tuple[TestResult, ...] | None:
    """Test cases of a JUnit XML report, named by ``identity``; None for no report."""
    if not text.strip():
        return None
    try:
        top = ET.fromstring(text)
    except ET.ParseError:
        return None
    results = []
    for suites, case in _cases(top, ()):
        name, broken = identity(suites, case, root)
        outcome, message = case_outcome(case)
        if broken and outcome == Outcome.FAIL:
            outcome = Outcome.ERROR
        results.append(TestResult(name=name, outcome=outcome, message=message))
    return tuple(results)


_JEST_OUTCOMES: dict[str, TestOutcome] = {"passed": Outcome.PASS, "failed": Outcome.FAIL}
"""Jest's statuses besides these (pending, todo, skipped, disabled) did not run."""
_JEST_FAILED = "failed"
"""Jest's word for a file or test that failed (its report's vocabulary, not ours)."""


class _JestTest(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    ancestorTitles: list[str] = []  # Jest's own field names
    title: str
    status: str
    failureMessages: list[str] = []


class _JestFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    name: str
    status: str = ""
    message: str = ""
    assertionResults: list[_JestTest] = []


class _JestReport(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    testResults: list[_JestFile]


def parse_jest(text: str, root: str = WORKSPACE) -> tuple[TestResult, ...] | None:
    """Tests of Jest's ``--json`` report; a file that failed to run is one ``error`` row."""
    try:
        report = _JestReport.model_validate_json(text)
    except ValidationError:
        return None
    results = []
    for file in report.testResults:
        path = _relative(file.name, root)
        for test in file.assertionResults:
            outcome = _JEST_OUTCOMES.get(test.status, Outcome.SKIPPED)
            message = first_line(test.failureMessages[0]) if test.failureMessages else ""
            name = f"{path}::" + " > ".join([*test.ancestorTitles, test.title])
            results.append(TestResult(name=name, outcome=outcome, message=message))
        if file.status == _JEST_FAILED and all(
            t.status != _JEST_FAILED for t in file.assertionResults
        ):
            error = TestResult(name=path, outcome=Outcome.ERROR, message=first_line(file.message))
            results.append(error)
    return tuple(results)
