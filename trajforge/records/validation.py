"""A validation: its status, controls and evidence; verify results; what a teacher is given."""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache
from typing import Annotated, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from trajforge.records.base import FROZEN, Reason
from trajforge.records.controls import (
    Control,
    ControlCell,
    DerivedTests,
    MutantRow,
    MutantSummary,
    RunStatus,
    Status,
    TestOutcome,
    TestSets,
    spelled_outcome,
)
from trajforge.records.legacy import legacy_controls, legacy_findings


class Finding(BaseModel):
    """One finding of a validation: a closed :class:`Reason` and what a person reads."""

    model_config = FROZEN

    reason: Reason
    """Why, as one closed value: reports and the teacher's feedback group by it."""
    detail: str
    """The finding in words (what ran, what it showed); never parsed back."""

    def __str__(self) -> str:
        return self.detail


def _findings_from_reasons(data: object) -> object:
    """A mapping that still says ``reasons`` (text only, as written before findings) in the
    shape of today's record: each text becomes a finding whose reason is told from its words
    (:func:`~trajforge.records.legacy.legacy_reason`), the one place text is read back."""
    if not isinstance(data, dict) or "reasons" not in data:
        return data
    rest = {k: v for k, v in data.items() if k != "reasons"}
    rest.setdefault("findings", legacy_findings(data["reasons"], data.get("status")))
    return rest


class ShellReplay(BaseModel):
    """One recorded shell command re-run to rebuild the oracle's shell-made files."""

    model_config = FROZEN

    command: str
    """The command, as recorded."""
    exit_code: int | None
    """Its exit code in the sandbox."""
    wall_s: float = 0.0
    """Its wall time."""


class Reproduction(BaseModel):
    """A recorded command whose output carried a qa answer, re-run on the starting workspace."""

    model_config = FROZEN

    command: str
    """The command."""
    exit_code: int | None
    """Its exit code in the sandbox."""
    reproduces: bool
    """It printed the answer (or the key's facts) again."""
    output: str = ""
    """The end of its output."""
    wall_s: float = 0.0
    """Its wall time."""


class EnvironmentEvidence(BaseModel):
    """What validation used of the task's environment."""

    model_config = FROZEN

    hash: str
    """Environment hash."""
    managers: tuple[str, ...]
    """Package managers of its recipes, in install order."""
    cached: bool
    """Found built; False: built by this run."""
    build_s: float
    """Seconds its build took (when it was built)."""
    location: str
    """Where it lives: the cache folder (local) or the derived image (docker)."""
    tools: dict[str, str]
    """Versions of what built it."""
    substituted: tuple[str, ...] = ()
    """Dependencies installed from the registry instead of an unreachable tarball URL (one
    line each): what differs from the project's lockfile."""


class TeacherUsage(BaseModel):
    """Tokens and cost of one teacher call."""

    model_config = FROZEN

    teacher: str = ""
    """``openai:MODEL``."""
    prompt_tokens: int = 0
    """Prompt tokens."""
    completion_tokens: int = 0
    """Completion tokens."""
    cached: bool = False
    """Answered from the cassette / cache."""
    cost_usd: float = 0.0
    """Cost at the configured prices (0: not tracked)."""


RewriteKind = Literal["none", "offline", "teacher"]


class InstructionEvidence(BaseModel):
    """How the agent-facing instruction of an accepted task was written."""

    model_config = FROZEN

    version: int
    """Rewrite rules version."""
    rewrite: RewriteKind
    """none: the request as it was; offline: request + interface; teacher: written by it."""
    notes: tuple[str, ...] = ()
    """What the interface section could not say."""
    interface: tuple[str, ...] = ()
    """Lines of the interface section."""
    dropped: tuple[str, ...] = ()
    """Sentences dropped because they would leak a hidden test."""
    teacher: TeacherUsage | None = None
    """The teacher call that wrote it, when one did."""
    fallback: str = ""
    """Why the teacher's text was not used."""
    retried: str = ""
    """Why the teacher's first answer could not be used, when it was asked again (told why)."""
    error: str = ""
    """Why nothing was rewritten (unreadable task files)."""


class TeacherRound(BaseModel):
    """One ask → prove → feedback round of the teacher loop."""

    model_config = FROZEN

    round: int
    """1-based."""
    usage: TeacherUsage
    """Tokens and cost of the call."""
    status: Status
    """The validation of the tests it wrote (rejected when they could not be used)."""
    findings: tuple[Finding, ...] = ()
    """That validation's findings."""
    survivors: tuple[str, ...] = ()
    """Controls its tests let through, in the words the feedback used."""
    tests: tuple[str, ...] = ()
    """Test files it wrote."""

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: object) -> object:
        return _findings_from_reasons(data)

    @property
    def reasons(self) -> tuple[str, ...]:
        """The findings in words."""
        return tuple(f.detail for f in self.findings)


class TeacherLoop(BaseModel):
    """What the teacher loop did for one task."""

    model_config = FROZEN

    teacher: str
    """``openai:MODEL``."""
    rounds: tuple[TeacherRound, ...] = ()
    """Every round, in order."""
    prompt_tokens: int = 0
    """Over all rounds."""
    completion_tokens: int = 0
    """Over all rounds."""
    cost_usd: float = 0.0
    """Over all rounds."""
    verdict: Status = Status.PENDING
    """The final validation status."""


class EvidenceBase(BaseModel):
    """What every task's evidence holds, whichever family's controls ran: the settings, the
    backend, the teacher, how the instruction was written. Each family's evidence adds what its
    controls rest on (:data:`AnyEvidence`, told apart by ``kind``)."""

    model_config = FROZEN

    cache_key: str = ""
    """Key over the task's files, the settings and the backend: a re-run with it skips."""
    files_sha256: str = ""
    """Hash of the task's files the evidence is tied to."""
    config: dict[str, float | int | bool] = Field(default_factory=dict)
    """The validation settings used."""
    backend: str = ""
    """Sandbox backend (local, docker)."""
    image: str = ""
    """Sandbox image (``host`` for local)."""
    trajforge_version: str = ""
    """Toolkit version."""
    wall_s: float = 0.0
    """Seconds this validation took."""
    teacher: str = "mined"
    """Who wrote the hidden tests: ``mined`` or ``openai:MODEL``."""
    teacher_loop: TeacherLoop | None = None
    """Teacher-written tests: the loop's rounds and cost (also when no round's tests ran)."""
    history: str = ""
    """Whether the session file was read (probes, earlier answers) or only static checks ran."""
    notes: tuple[str, ...] = ()
    """Findings that are not reasons (kill rate, survivors, fallbacks)."""
    instruction: InstructionEvidence | None = None
    """Accepted tasks: how the instruction was written."""


class Evidence(EvidenceBase):
    """The evidence of a task rejected before any family's controls ran (no repository, a
    weakened test, an environment that could not be built, nothing to check)."""

    kind: Literal["none"] = "none"
    """No family's controls ran."""


class CodeEvidence(EvidenceBase):
    """build / extend / repair: the check, the matrix's timings, the mutants, the test sets."""

    kind: Literal["code"] = "code"
    """The code families' control matrix ran."""
    command: str = ""
    """The check command."""
    hidden_tests: tuple[str, ...] = ()
    """The hidden test files (derived ones included)."""
    dropped_tests: tuple[str, ...] = ()
    """Tests dropped as flaky (they count for nothing, also in rewards)."""
    flake_rate: float = 0.0
    """Share of tests dropped as flaky."""
    timings: dict[str, float] = Field(default_factory=dict)
    """Seconds per phase (oracle_s, controls_s, mutants_s, survivors_s)."""
    shell_replayed: tuple[ShellReplay, ...] = ()
    """Shell commands re-run to rebuild the oracle."""
    mutant_summary: MutantSummary | None = None
    """The injected-fault control's summary (None: no mutant ran; the rows are
    ``Validation.mutants``)."""
    mutants_batched: bool = False
    """Mutants ran in one forking runner."""
    test_sets: TestSets | None = None
    """The fail-to-pass and pass-to-pass tests rewards are scored on."""
    derived_tests: DerivedTests | None = None
    """Tests derived from the oracle."""
    environment: EnvironmentEvidence | None = None
    """The built environment used."""
    timeout_s: float | None = None
    """Seconds each run of the check was given, where the reference needed more than the
    configured ``timeout_s`` (verify and rewards give it the same); None: the configured."""


class AnswerEvidence(EvidenceBase):
    """What the answer families (qa, data) share: the paraphrase controls."""

    paraphrases_accepted: tuple[str, ...] = ()
    """The paraphrase controls the checker accepted."""


class QaEvidence(AnswerEvidence):
    """qa: the expected answer and the recorded commands re-run to reproduce it."""

    kind: Literal["qa"] = "qa"
    """The answer controls ran."""
    expected: str | None = None
    """The expected answer (value checker; None: an answer key)."""
    reproduced: tuple[Reproduction, ...] = ()
    """Recorded commands re-run to reproduce the answer."""


class DataEvidence(AnswerEvidence):
    """data: the oracle query's output and each script's run time."""

    kind: Literal["data"] = "data"
    """The data controls ran."""
    oracle_stdout: str = ""
    """The oracle query's output (capped)."""
    seconds: dict[str, float | None] = Field(default_factory=dict)
    """Seconds per script run."""


AnyEvidence = Annotated[
    Evidence | CodeEvidence | QaEvidence | DataEvidence, Field(discriminator="kind")
]
"""A validation's evidence: the shared fields once, and what its family's controls rest on."""


EVIDENCE_KINDS: tuple[type[EvidenceBase], ...] = (Evidence, CodeEvidence, QaEvidence, DataEvidence)
"""Every kind of evidence, the one with no family's fields first."""


@cache
def _defaults() -> dict[str, object]:
    """Every evidence field's default, as JSON."""
    return {k: v for kind in EVIDENCE_KINDS for k, v in kind().model_dump(mode="json").items()}


def _evidence_kind(data: object) -> object:
    """A validation mapping whose evidence (schema 4 and before: one record with every family's
    fields) names no ``kind``: the fields left at their defaults are dropped, and the kind is
    the first whose fields hold the rest (none of a family's: ``none``)."""
    if not isinstance(data, dict) or not isinstance(data.get("evidence"), dict):
        return data
    evidence: dict[str, object] = data["evidence"]
    if "kind" in evidence:
        return data
    default = _defaults()
    kept = {k: v for k, v in evidence.items() if k not in default or v != default[k]}
    for kind in EVIDENCE_KINDS:
        if set(kept) <= set(kind.model_fields):
            return {**data, "evidence": {**kept, "kind": kind.model_fields["kind"].default}}
    return {**data, "evidence": {**evidence, "kind": "code"}}  # forbidden extras are reported


class Validation(BaseModel):
    """Outcome of validating the verifier against the control matrix."""

    model_config = FROZEN

    status: Status = Status.PENDING
    """pending until ``trajforge validate`` has run."""
    findings: tuple[Finding, ...] = ()
    """Why it was accepted or rejected, precisely: each a closed reason and its detail."""
    controls: dict[str, ControlCell] = Field(default_factory=dict)
    """Every control by its key (``Control.key``: the kind, and its variant after a colon):
    oracle, empty, start, prefix, stub, probe:N (code); oracle, empty, paraphrase:*,
    perturbed:*, probe:N, query:NAME and the qa key's wrong answers (answers). Code reads a
    cell's ``control``, never its key's text."""
    mutants: tuple[MutantRow, ...] = ()
    """Code families: every injected fault run (the summary is ``evidence.mutant_summary``)."""
    evidence: AnyEvidence = Field(default_factory=Evidence)
    """Hashes, settings, backend, timings and what each family's controls rest on."""

    @model_validator(mode="before")
    @classmethod
    def _legacy(cls, data: object) -> object:
        return _evidence_kind(legacy_controls(_findings_from_reasons(data)))

    @model_validator(mode="after")
    def _keys(self) -> Validation:
        wrong = [k for k, c in self.controls.items() if k != c.key]
        if wrong:
            raise ValueError(f"controls keyed unlike their cells: {wrong}")
        return self

    def cells(self, *kinds: Control) -> list[ControlCell]:
        """The cells of these kinds, in order."""
        return [c for c in self.controls.values() if c.control in kinds]

    @property
    def accepted(self) -> bool:
        """The task passed validation."""
        return self.status == Status.ACCEPTED

    @property
    def reasons(self) -> tuple[str, ...]:
        """The findings in words, in order (for people; code reads :attr:`findings`)."""
        return tuple(f.detail for f in self.findings)

    @property
    def codes(self) -> tuple[Reason, ...]:
        """The findings' closed reasons, in order, each once."""
        return tuple(dict.fromkeys(f.reason for f in self.findings))


def finding(reason: Reason, detail: str) -> Finding:
    """One finding."""
    return Finding(reason=reason, detail=detail)


class FailToPass(BaseModel):
    """How many fail-to-pass tests a solution fixed."""

    model_config = FROZEN

    passed: int
    """Fail-to-pass tests that pass."""
    of: int
    """Fail-to-pass tests counted (0: the whole check decided)."""


class VerifyTest(BaseModel):
    """One test of a verify run."""

    __test__ = False

    model_config = FROZEN

    name: str
    """Test name (``answer`` for qa and data)."""
    outcome: TestOutcome
    """pass / fail / error / skipped."""
    message: str = ""
    """Why it failed (the answer checker's reason)."""
    counted: bool = True
    """False for tests dropped as flaky during validation."""

    @field_validator("outcome", mode="before")
    @classmethod
    def _past(cls, value: object) -> object:
        return spelled_outcome(value)


class VerifyResult(BaseModel):
    """The reward of one candidate solution (``trajforge verify``, training, eval)."""

    model_config = FROZEN

    reward: float
    """1.0 or 0.0."""
    passed: bool
    """The reward is 1."""
    tests: tuple[VerifyTest, ...] = ()
    """Per-test results."""
    fail_to_pass: FailToPass | None = None
    """Code families: fail-to-pass tests fixed."""
    broken: tuple[str, ...] = ()
    """Code families: pass-to-pass tests that no longer pass."""
    status: RunStatus | None = None
    """Code families: status of the check run (None: an answer was checked)."""
    exit_code: int | None = None
    """Code families: exit code of the check."""
    detail: str = ""
    """Code families: why the run is an error or timeout."""
    set_aside: tuple[str, ...] = ()
    """Code families: solution files that are tests or start-up files, replaced by the task's."""
    tampering: tuple[str, ...] = ()
    """Code families: ``path: what it says`` for solution files that reach into the check (the
    check did not run; the reward is 0)."""


class Forbidden(BaseModel):
    """What an instruction must not mention, each with the label used in reasons."""

    model_config = FROZEN

    names: tuple[str, ...] = ()
    """Hidden test function / class names and JS/TS test titles."""
    files: tuple[str, ...] = ()
    """Hidden test file paths, base names and stems."""
    literals: tuple[str, ...] = ()
    """Expected values of the hidden assertions, as text."""

    def items(self) -> Iterator[tuple[str, str]]:
        """(label, item) pairs in a stable order."""
        yield from (("hidden test", n) for n in self.names)
        yield from (("hidden test file", f) for f in self.files)
        yield from (("expected value", v) for v in self.literals)

    def listing(self) -> list[str]:
        """Human-readable lines, for the teacher's prompt."""
        return [f"{label}: {item}" for label, item in self.items()]


class InstructionBrief(BaseModel):
    """What a teacher is given to write an accepted task's instruction."""

    model_config = FROZEN

    family: str
    """Task family."""
    request: str
    """The session's request, as recorded."""
    interface: str
    """The offline ``## Interface`` section (markdown)."""
    required: tuple[str, ...]
    """Names the instruction must state."""
    forbidden: Forbidden
    """What it must never mention."""
    tests: dict[str, str] = Field(default_factory=dict)
    """The hidden tests by path, for the writer to read what they rely on (never to show)."""
    previous: str = ""
    """The writer's previous answer, when it is asked again ('' on the first ask)."""
    retry: str = ""
    """Why that answer could not be used ('' on the first ask)."""


class WrittenInstruction(BaseModel):
    """A teacher's instruction and what writing it cost."""

    model_config = FROZEN

    text: str
    """The instruction."""
    usage: TeacherUsage | None = None
    """Tokens and cost of the call."""
