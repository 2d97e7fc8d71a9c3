"""The audit sections of ``report.html``: what a person needs to judge the tasks.

- every accepted task: its instruction, its answer (and answer key) or verifier summary, and
  where it came from (session file, events);
- the triage funnel of the reconstruct run that made ``OUT`` (``OUT/reconstruct.json``): per
  harness, the turns merged and the episodes dropped by reason, with examples;
- the rejected candidates grouped by reason.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from trajforge.reconstruct.funnel import TriageCounts
from trajforge.records import ANSWER_FAMILIES, Reason, Status, Task, TriageDrop
from trajforge.taskdir import RECONSTRUCT_SUMMARY
from trajforge.verifiers.validate.report_doc import (
    AcceptedRow,
    RejectedGroup,
    RejectedTask,
    TriageExample,
    TriageSection,
)

SHOWN_CHARS = 600
EXAMPLES = 5
"""Dropped episodes shown per harness and reason (all are counted)."""


def accepted_rows(tasks: list[Task]) -> list[AcceptedRow]:
    """One row per accepted task, for a person to read."""
    rows = []
    for task in tasks:
        if task.validation.status != Status.ACCEPTED:
            continue
        key = task.answer_key
        facts = [f"{f.kind} {f.value} ({f.grounded_in})" for f in key.required] if key else []
        answer = (task.answer or "")[:SHOWN_CHARS] if task.family in ANSWER_FAMILIES else ""
        source = task.source
        rows.append(
            AcceptedRow(
                id=task.id,
                family=task.family,
                instruction=task.instruction[:SHOWN_CHARS],
                answer=answer,
                key=facts,
                verifier=_verifier(task),
                source=f"{source.harness}: {source.path} events "
                f"{source.events[0]}–{source.events[1]}",
                why=list(task.validation.reasons),
            )
        )
    return rows


def _verifier(task: Task) -> str:
    v = task.verifier
    if v.kind == "tests":
        return f"hidden tests {', '.join(v.tests)} via `{v.command}`"
    if v.kind == "command":
        return f"`{v.command}`"
    return "answer checker (key)" if task.answer_key else "answer checker (value)"


def rejected_groups(tasks: list[Task]) -> list[RejectedGroup]:
    """Rejected (and errored) tasks grouped by their first finding's closed reason, largest
    first."""
    groups: dict[Reason | Status, list[RejectedTask]] = defaultdict(list)
    for task in tasks:
        v = task.validation
        if v.status in (Status.ACCEPTED, Status.PENDING):
            continue
        first = v.findings[0] if v.findings else None
        group = first.reason if first is not None else v.status
        detail = first.detail if first is not None else str(v.status)
        groups[group].append(RejectedTask(id=task.id, family=task.family, reason=detail[:300]))
    return [
        RejectedGroup(reason=name, count=len(items), tasks=items)
        for name, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), str(kv[0])))
    ]


class _Summary(BaseModel):
    """The parts of ``OUT/reconstruct.json`` the audit reads (the rest is ignored)."""

    model_config = ConfigDict(extra="ignore")

    triage: dict[str, TriageCounts] = Field(default_factory=dict)
    dropped: list[TriageDrop] = Field(default_factory=list)
    candidates: dict[str, dict[str, int]] = Field(default_factory=dict)


def triage_section(out: Path) -> TriageSection | None:
    """The funnel of the reconstruct run that wrote ``out`` (None when it left no summary)."""
    path = out / RECONSTRUCT_SUMMARY
    try:
        summary = _Summary.model_validate_json(path.read_bytes())
    except (OSError, ValidationError):
        return None
    triage = summary.triage
    reasons = sorted({r for counts in triage.values() for r in counts.dropped})
    examples: dict[str, dict[str, list[TriageExample]]] = defaultdict(lambda: defaultdict(list))
    for drop in summary.dropped:
        shown = examples[drop.harness][str(drop.reason)]
        if len(shown) < EXAMPLES:
            where = f"{Path(drop.file).name}:{drop.line}"
            shown.append(TriageExample(where=where, text=drop.text, detail=drop.detail))
    return TriageSection(
        reasons=reasons,
        harnesses={h: triage[h] for h in sorted(triage)},
        examples={h: dict(e) for h, e in sorted(examples.items())},
        candidates=summary.candidates,
    )
