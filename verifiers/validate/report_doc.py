"""The validate report as a typed record: ``OUT/report.json``, ``validate --json`` and what
``report.html`` renders. Built by :mod:`.report` and :mod:`.audit`; the CLI reads its fields."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from trajforge import __version__
from trajforge.reconstruct.funnel import TriageCounts
from trajforge.records import Reason, Status
from trajforge.verifiers.validate.config import ValidateConfig

_FORBID = ConfigDict(frozen=True, extra="forbid")
Tone = Literal["good", "bad", "unknown"]


class CellView(BaseModel):
    """One cell of the control matrix as a person reads it."""

    model_config = _FORBID

    text: str
    """What the verifier did (pass / fail / unknown), or the kill rate."""
    tone: Tone
    """good: what it had to; bad: not; unknown: it could not tell."""


class TaskLine(BaseModel):
    """One task's row of the matrix."""

    model_config = _FORBID

    id: str
    family: str
    harness: str
    status: Status
    reasons: list[str]
    """The findings in words."""
    codes: list[Reason]
    """The findings' closed reasons, each once."""
    cells: dict[str, CellView]
    """Column (:data:`~.report.COLUMNS`) → cell."""


class AcceptedRow(BaseModel):
    """An accepted task, for a person to read in full."""

    model_config = _FORBID

    id: str
    family: str
    instruction: str
    answer: str
    key: list[str]
    """The answer key's required facts, each with where it is grounded."""
    verifier: str
    source: str
    why: list[str]


class RejectedTask(BaseModel):
    """A rejected task in its group."""

    model_config = _FORBID

    id: str
    family: str
    reason: str
    """The first finding's detail (capped)."""


class RejectedGroup(BaseModel):
    """The rejected (and errored) tasks sharing a first finding's closed reason."""

    model_config = _FORBID

    reason: Reason | Status
    """The closed reason (the status, for a validation that states none)."""
    count: int
    tasks: list[RejectedTask]


class TriageExample(BaseModel):
    """One dropped episode shown as an example."""

    model_config = _FORBID

    where: str
    text: str
    detail: str


class TriageSection(BaseModel):
    """The funnel of the reconstruct run that wrote OUT."""

    model_config = _FORBID

    reasons: list[str]
    harnesses: dict[str, TriageCounts]
    examples: dict[str, dict[str, list[TriageExample]]]
    """Harness → reason → the first few drops."""
    candidates: dict[str, dict[str, int]]
    """Harness → family → candidates."""


class RunCounts(BaseModel):
    """What this run did."""

    model_config = _FORBID

    validated: int
    """Tasks validated now."""
    cached: int
    """Tasks whose stored verdict still held."""


class ValidateReport(BaseModel):
    """The validate report: totals, the funnel per family, the control matrix, the audit."""

    model_config = _FORBID

    trajforge_version: str = __version__
    backend: str
    """Sandbox backend."""
    image: str
    """Sandbox image (``host`` for local)."""
    config: ValidateConfig
    """The settings used."""
    totals: dict[str, int]
    """``tasks`` and the count of each :class:`Status`."""
    funnel: dict[str, dict[str, int]]
    """Family → stage (:data:`~.report.STAGES`) → tasks that got that far."""
    columns: list[str]
    tasks: list[TaskLine]
    unreadable: list[str]
    """Task folders whose task.json could not be read, with why."""
    accepted: list[AcceptedRow]
    rejected_by_reason: list[RejectedGroup]
    triage: TriageSection | None
    run: RunCounts | None = None
    """This run's counts (the CLI adds them; report.json leaves them out)."""

    def count(self, status: Status) -> int:
        """Tasks of this status."""
        return self.totals.get(str(status), 0)

    def grouped(self) -> dict[Reason | Status, int]:
        """Rejected tasks per closed reason."""
        return {g.reason: g.count for g in self.rejected_by_reason}


def totals_of(statuses: list[Status]) -> dict[str, int]:
    """``tasks`` and every status's count."""
    return {"tasks": len(statuses), **{str(s): statuses.count(s) for s in Status}}


__all__ = [
    "AcceptedRow",
    "CellView",
    "RejectedGroup",
    "RejectedTask",
    "RunCounts",
    "TaskLine",
    "TriageExample",
    "TriageSection",
    "ValidateReport",
    "totals_of",
]
