"""The control matrix: statuses, every control's cell and runs, the injected faults, the test
sets rewards are scored on, and the tests derived from the oracle."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Literal, NamedTuple

from pydantic import BaseModel, Field, field_validator

from trajforge.records.base import FROZEN


class TestSets(BaseModel):
    """The tests a build / extend / repair solution is scored on (fail-to-pass rewards)."""

    __test__ = False  # not a pytest test class

    model_config = FROZEN

    fail_to_pass: tuple[str, ...] = ()
    """Tests that fail on the starting workspace and pass on the oracle: all must pass."""
    pass_to_pass: tuple[str, ...] = ()
    """Tests that pass on the starting workspace and on the oracle: none may break."""


class MutantVerdict(StrEnum):
    """What the hidden tests did with one injected fault."""

    KILLED = "killed"
    """A kept hidden test failed on it (counted)."""
    SURVIVED = "survived"
    """No kept test failed and it was not shown equivalent (counted against the kill rate)."""
    EQUIVALENT = "equivalent"
    """Behaves as the oracle on every exercised input (not counted)."""
    UNKNOWN = "unknown"
    """Its run timed out or errored: neither killed nor survived (not counted)."""


class MutantNote(BaseModel):
    """One mutant the hidden tests let through, and what was found out about it."""

    model_config = FROZEN

    id: str
    """Mutant id (``m3``)."""
    description: str
    """What the fault changes and where."""
    verdict: MutantVerdict
    """equivalent: behaves as the oracle on every exercised input (not counted); killed: by a
    test derived from the oracle; survived: counted against the kill rate."""
    evidence: str
    """Why: the inputs compared, the input it differs on, whether its line ran."""


class MutantSummary(BaseModel):
    """The injected-fault control of one task: counts, kill rate and its Wilson interval."""

    model_config = FROZEN

    total: int
    """Mutants run."""
    killed: int
    """Killed by a kept hidden test (mined, teacher-written or derived from the oracle)."""
    killed_by_derived: int
    """Of ``killed``, those only a test derived from the oracle kills."""
    survived: int
    """Not killed and not shown equivalent: counted against the kill rate."""
    equivalent: int
    """Behave as the oracle on every exercised input: left out of the kill rate."""
    unknown: int
    """Timed out or errored: neither killed nor survived."""
    kill_rate: float | None
    """killed / (killed + survived); None when no mutant was decided."""
    wilson_low: float
    """Lower end of the Wilson interval of the kill rate."""
    wilson_high: float
    """Upper end of the Wilson interval of the kill rate."""
    z: float
    """z of the interval (1.96: 95 %)."""
    equivalents: tuple[MutantNote, ...] = ()
    """The equivalent mutants, each with its evidence."""
    survivors: tuple[MutantNote, ...] = ()
    """The counted survivors, each with its evidence."""


DerivedSource = Literal["mined", "instruction", "session"]


class DerivedTest(BaseModel):
    """One hidden test derived from the oracle's behaviour on an exercised input."""

    model_config = FROZEN

    name: str
    """Test function name in the derived test file."""
    call: str
    """The call it makes, as code (``top_words('y x y x z', 1)``)."""
    module: str
    """Module the function is imported from."""
    source: DerivedSource
    """Where the input came from: a hidden test's call, the instruction, the session."""
    origin: str
    """The hidden test that made the call, ``instruction``, or the session command."""
    kills: tuple[str, ...]
    """Ids of the surviving mutants it fails on."""


class DerivedTests(BaseModel):
    """Tests derived from the oracle for one task, and the inputs they were chosen from."""

    model_config = FROZEN

    path: str | None = None
    """The derived test file among the hidden tests (None: none kept)."""
    tests: tuple[DerivedTest, ...] = ()
    """Kept tests."""
    inputs: dict[str, int] = Field(default_factory=dict)
    """Exercised inputs observed, per source (mined / instruction / session)."""
    dropped: int = 0
    """Candidate tests dropped: flaky or passing on the oracle's stub or on no survivor."""
    notes: tuple[str, ...] = ()
    """Why no test was derived, when none was (the check names its test files; not Python)."""


class Status(StrEnum):
    """Where a task's validation stands: the one status set of validate, verify and the reports."""

    PENDING = "pending"
    """Not validated yet (a candidate as reconstruct wrote it)."""
    ACCEPTED = "accepted"
    """The verifier passed every control: the task is a task."""
    REJECTED = "rejected"
    """A control or a rule failed; the reasons say which."""
    ERROR = "error"
    """Validation could not run (sandbox, unreadable task, teacher); not a verdict."""
    TIMEOUT = "timeout"
    """Every oracle run hit the time limit."""


VERDICTS = frozenset({Status.ACCEPTED, Status.REJECTED})
"""Statuses that are verdicts on the task itself: cached, and counted as validated."""


class Outcome(StrEnum):
    """How one run, one test or one control came out: the one vocabulary of check runs, test
    rows and control cells (each field narrows it to the values it can take)."""

    PASS = "pass"
    """Exit 0 / the test passed / the verifier accepted the control."""
    FAIL = "fail"
    """Some test failed / the test failed / the verifier rejected the control."""
    ERROR = "error"
    """Non-zero exit without a failing test (collection or usage error, no tests, no report,
    command not found) / the test errored."""
    TIMEOUT = "timeout"
    """A limit killed the run."""
    SKIPPED = "skipped"
    """The test was skipped."""
    UNKNOWN = "unknown"
    """The verifier's verdict on the control could not be told (a timeout, a failed query)."""


_PAST = {"passed": Outcome.PASS, "failed": Outcome.FAIL}
"""A test's outcome as schema 3 and reporters spell it (``passed`` / ``failed``)."""

TestOutcome = Literal[Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.SKIPPED]
"""One test's outcome."""
RunStatus = Literal[Outcome.PASS, Outcome.FAIL, Outcome.ERROR, Outcome.TIMEOUT]
"""One run's outcome: pass (exit 0), fail (some test failed), error (non-zero exit without a
failing test), timeout (a limit killed it)."""
Expect = Literal[Outcome.PASS, Outcome.FAIL]
"""What the verifier must do with a control."""
CellResult = Literal[Outcome.PASS, Outcome.FAIL, Outcome.UNKNOWN]
"""What the verifier did with a control."""


def spelled_outcome(value: object) -> object:
    """A stored test outcome in today's spelling (``passed`` → ``pass``); other values as given."""
    return _PAST.get(value, value) if isinstance(value, str) else value


class Control(StrEnum):
    """What a control is: the one set of control kinds of every family. A cell's key in
    ``Validation.controls`` is the kind, with its variant after a colon when it has one
    (``probe:2``, ``paraphrase:words``, ``query:perturbed_1.py``)."""

    ORACLE = "oracle"
    """The reference solution (code) or answer (qa, data): must pass."""
    EMPTY = "empty"
    """Nothing: an empty workspace (code) or an empty answer: must fail."""
    START = "start"
    """The starting workspace, unchanged (build, extend): must fail."""
    PREFIX = "prefix"
    """The workspace where the episode started (repair): must fail."""
    STUB = "stub"
    """The oracle with its changed code's bodies emptied: must fail."""
    PROBE = "probe"
    """One of the session's own earlier, wrong attempts (variant: its number): must fail."""
    COPY = "copy"
    """The oracle with every file it moves also left at its old path (copied, not moved): must
    fail."""
    PARAPHRASE = "paraphrase"
    """The answer said another way (variant: how): must pass."""
    PERTURBED = "perturbed"
    """A near-miss answer (variant: its number): must fail."""
    QUERY = "query"
    """A perturbed query's output (data; variant: the script): must fail."""
    QUESTION = "question"
    """The question given back as its answer (qa): must fail."""
    NUMBER = "number"
    """The answer with a number changed (qa; variant: fact and change): must fail."""
    HEDGED = "hedged"
    """The answer hedging between the right number and a wrong one (qa): must fail."""
    POLARITY = "polarity"
    """The answer with its yes / no flipped (qa): must fail."""
    NAME = "name"
    """The answer naming another identifier (qa): must fail."""
    GUESS = "guess"
    """A guess built from the workspace's names alone (qa): must fail."""

    def key(self, variant: object = None) -> str:
        """This kind's key in ``Validation.controls``, with ``variant`` when given."""
        return self.value if variant is None or variant == "" else f"{self.value}:{variant}"


class ControlId(NamedTuple):
    """A control as the matrix names it before its cell exists: its kind and variant."""

    control: Control
    variant: str = ""

    @property
    def key(self) -> str:
        """Its key in ``Validation.controls``."""
        return self.control.key(self.variant)


class TestRow(BaseModel):
    """One test's outcome in one stored run."""

    __test__ = False  # not a pytest test class

    model_config = FROZEN

    name: str
    """Test identity (``classname::name``, or the command for a check without a report)."""
    outcome: TestOutcome
    """pass / fail / error / skipped."""

    @field_validator("outcome", mode="before")
    @classmethod
    def _past(cls, value: object) -> object:
        return spelled_outcome(value)

    message: str = ""
    """First line of the failure or error message, capped (verify results only)."""


class CheckRun(BaseModel):
    """One run of the task's check on one workspace, as stored in the validation."""

    model_config = FROZEN

    status: RunStatus
    """Overall verdict of the run."""
    exit_code: int | None
    """Exit code of the check command (None when it never ran to the end)."""
    wall_s: float = 0.0
    """Wall time of the command."""
    detail: str = ""
    """Why the run is an error or timeout, when it is."""
    failing: tuple[str, ...] = ()
    """Kept tests (not dropped as flaky) that failed or errored."""
    tests: tuple[TestRow, ...] = ()
    """Per-test results."""


class ControlCell(BaseModel):
    """One control: what the verifier had to do with it and what it did."""

    model_config = FROZEN

    control: Control
    """What the control is."""
    variant: str = ""
    """Which one of its kind (a probe's number, a paraphrase's way), when there are several."""
    expect: Expect
    """pass (the oracle, a paraphrase of the answer) or fail (empty, stub, wrong answers...)."""
    result: CellResult
    """What the verifier did; unknown when it could not tell (a timeout, a failed query)."""
    runs: tuple[CheckRun, ...] = ()
    """Code controls: the check's runs on this control (the oracle: every oracle run)."""
    derived_runs: tuple[CheckRun, ...] = ()
    """The oracle: its runs with the tests derived from it added."""
    passed: int | None = None
    """The oracle: runs that passed, of ``len(runs)``."""
    given: str | None = None
    """Answer controls: the answer the checker was given (shortened)."""
    reason: str = ""
    """The answer checker's reason, or why the verdict is unknown."""

    @property
    def key(self) -> str:
        """Its key in ``Validation.controls``."""
        return self.control.key(self.variant)

    @property
    def ok(self) -> bool:
        """The verifier did what it had to."""
        return self.result == self.expect


def control_map(cells: Iterable[ControlCell]) -> dict[str, ControlCell]:
    """Cells by their key, in order (a later cell of the same key replaces an earlier one)."""
    return {cell.key: cell for cell in cells}


class MutantRow(BaseModel):
    """One injected fault and what the hidden tests did with it."""

    model_config = FROZEN

    id: str
    """Mutant id (``m3``)."""
    path: str
    """File the fault is in."""
    line: int
    """Line of the fault."""
    operator: str
    """Mutation operator."""
    description: str
    """What the fault changes and where."""
    result: MutantVerdict
    """killed / survived (counted), equivalent (not counted), unknown (timeout or error)."""
    status: RunStatus | None = None
    """Status of its test run (None: not run)."""
    wall_s: float = 0.0
    """Wall time of its test run."""
    killed_by: tuple[str, ...] = ()
    """Tests that failed on it."""
    derived: bool = False
    """Killed only by a test derived from the oracle."""
    evidence: str = ""
    """Why a survivor was judged equivalent or kept as a survivor."""
