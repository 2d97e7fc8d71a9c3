"""Per-test results of one verifier run: pytest's JUnit XML plus the exit code.

Nothing is read from stdout. A pytest run yields one :class:`TestResult` per test case in the
XML; any other command yields one pseudo-test named after the command, decided by its exit code.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Collection, Sequence

from pydantic import BaseModel, ConfigDict

from trajforge.protocols import RunResult
from trajforge.records import CheckRun, RunStatus, TestOutcome, TestRow

JUNIT_PATH = "/tmp/trajforge-junit.xml"
_PYTEST = re.compile(r"(^|[\s/;&|(])(py\.test|pytest)(\s|$)|-m\s+pytest\b")
_MESSAGE_CHARS = 300


class TestResult(BaseModel):
    """One test's outcome in one run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """Test identity: ``classname::name`` from the XML, or the command for non-pytest checks."""
    outcome: TestOutcome
    """passed / failed / error / skipped."""
    message: str = ""
    """First line of the failure or error message, capped."""


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
    """Why the run is an error or timeout, when it is."""

    def failing(self, ignore: Collection[str] = ()) -> list[str]:
        """Names of failed or errored tests, minus ``ignore`` (dropped flaky tests)."""
        return [
            t.name for t in self.tests if t.outcome in ("failed", "error") and t.name not in ignore
        ]

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
        if self.status == "pass":
            return False
        if self.status == "fail":
            return bool(self.failing(ignore))
        return True


def runs_pytest(command: str) -> bool:
    """The check command invokes pytest (so ``PYTEST_ADDOPTS`` reaches it)."""
    return bool(_PYTEST.search(command))


def pytest_env(extra_opts: Sequence[str] = ()) -> dict[str, str]:
    """Environment that makes any pytest invocation write JUnit XML to :data:`JUNIT_PATH`."""
    opts = [f"--junitxml={JUNIT_PATH}", "-p", "no:cacheprovider", *extra_opts]
    return {"PYTEST_ADDOPTS": " ".join(opts)}


def _message(node: ET.Element) -> str:
    text = node.get("message") or (node.text or "")
    first = text.strip().splitlines()[0] if text.strip() else node.tag
    return first[:_MESSAGE_CHARS]


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
        outcome: TestOutcome = "passed"
        message = ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                outcome = "failed" if child.tag == "failure" else child.tag  # type: ignore[assignment]
                message = _message(child)
                break
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


def judge(result: RunResult, command: str, junit_xml: str | None) -> RunOutcome:
    """Turn a sandbox result (and the run's JUnit XML, if any) into a :class:`RunOutcome`."""
    if result.timed_out or result.killed is not None:
        return _outcome(
            "timeout", result, detail=f"killed by the {result.killed or 'timeout'} limit"
        )
    if not runs_pytest(command):
        outcome: TestOutcome = "passed" if result.exit_code == 0 else "failed"
        test = TestResult(name=command, outcome=outcome, message=f"exit {result.exit_code}")
        return _outcome("pass" if result.exit_code == 0 else "fail", result, (test,))
    tests = parse_junit(junit_xml or "")
    if tests is None:
        if result.exit_code == 0:
            return _outcome("pass", result)
        return _outcome(
            "error", result, detail=f"exit {result.exit_code}: pytest wrote no JUnit report"
        )
    return _judge_pytest(result, tests)


_PYTEST_EXITS = {
    2: "collection error or interrupted",
    3: "internal error",
    4: "usage error",
    5: "no tests collected",
}


def _judge_pytest(result: RunResult, tests: tuple[TestResult, ...]) -> RunOutcome:
    code = result.exit_code
    if code == 0:
        return _outcome("pass", result, tests)
    if code == 1 and any(t.outcome in ("failed", "error") for t in tests):
        return _outcome("fail", result, tests)
    detail = _PYTEST_EXITS.get(code or 0, f"exit {code}")
    return _outcome("error", result, tests, f"pytest: {detail}")
