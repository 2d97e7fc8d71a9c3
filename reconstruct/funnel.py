"""The triage funnel of a reconstruct run: what was dropped, why, and duplicates collapsed.

Workers turn each session's :class:`~trajforge.reconstruct.triage.Drop` rows into
:class:`~trajforge.records.TriageDrop` records; the driver folds them into per-harness
counts and, as it writes tasks in input order, drops a qa task whose question or answer
repeats one already kept (reason ``duplicate``), so no answer is shared by two tasks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from trajforge.reconstruct.triage import Drop
from trajforge.records import Reason, Session, Task, TriageDrop
from trajforge.scrub import Scrubber

MAX_DROPS_KEPT = 5000
"""Dropped episodes listed in the summary (all are counted)."""


class TriageCounts(BaseModel):
    """One harness's funnel: user turns → threads → candidates, and the drops by reason."""

    model_config = ConfigDict(extra="forbid")

    sessions: int = 0
    """Sessions read."""
    merged: int = 0
    """Acknowledgements, continuations and harness-only turns folded into the thread before."""
    dropped: dict[str, int] = Field(default_factory=dict)
    """Episodes (and qa tasks collapsed as duplicates) dropped, by reason."""
    candidates: int = 0
    """Candidates written (or already present)."""


def to_records(session: Session, drops: Sequence[Drop], scrub: Scrubber) -> list[TriageDrop]:
    """Drops of one session as records (request text scrubbed)."""
    events = session.events
    rows = []
    for drop in drops:
        line = events[drop.first].source.line if 0 <= drop.first < len(events) else 0
        rows.append(
            TriageDrop(
                harness=session.header.harness,
                session=session.header.session_id,
                file=session.header.source_path,
                line=line,
                events=(drop.first, drop.last),
                reason=drop.reason,
                detail=scrub.text(drop.detail),
                text=scrub.text(drop.text),
            )
        )
    return rows


NON_WORD = re.compile(r"[\W_]+")


def _norm(text: str) -> str:
    return NON_WORD.sub(" ", text.lower()).strip()


class Dedup:
    """Remembers the qa questions and answers kept so far in a run."""

    def __init__(self) -> None:
        self.questions: dict[str, str] = {}
        self.answers: dict[str, str] = {}

    def duplicate_of(self, task: Task) -> str | None:
        """The id of a kept qa task with the same question or answer; records new ones."""
        if task.family != "qa" or not task.answer:
            return None
        question, answer = _norm(task.instruction), _norm(task.answer)
        for key, seen in ((question, self.questions), (answer, self.answers)):
            if key and key in seen and seen[key] != task.id:
                return seen[key]
        self.questions.setdefault(question, task.id)
        self.answers.setdefault(answer, task.id)
        return None


def duplicate_row(task: Task, kept: str) -> TriageDrop:
    """The funnel row of a qa task collapsed into an earlier one."""
    return TriageDrop(
        harness=task.source.harness,
        session=task.source.session,
        file=task.source.path,
        line=0,
        events=task.source.events,
        reason=Reason.DUPLICATE,
        detail=f"{task.id}: same question or answer as {kept}",
        text=task.instruction[:160],
    )
