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
from typing import Any

import orjson

from trajforge.records import ANSWER_FAMILIES, Status, Task
from trajforge.taskdir import RECONSTRUCT_SUMMARY

PREVIEW = 600
EXAMPLES = 5
"""Dropped episodes shown per harness and reason (all are counted)."""


def accepted_rows(tasks: list[Task]) -> list[dict[str, Any]]:
    """One row per accepted task, for a person to read."""
    rows = []
    for task in tasks:
        if task.validation.status != "accepted":
            continue
        key = task.answer_key
        facts = [f"{f.kind} {f.value} ({f.grounded_in})" for f in key.required] if key else []
        rows.append(
            {
                "id": task.id,
                "family": task.family,
                "instruction": task.instruction[:PREVIEW],
                "answer": (task.answer or "")[:PREVIEW] if task.family in ANSWER_FAMILIES else "",
                "key": facts,
                "verifier": _verifier(task),
                "source": f"{task.source.harness}: {task.source.path} events "
                f"{task.source.events[0]}–{task.source.events[1]}",
                "why": list(task.validation.reasons),
            }
        )
    return rows


def _verifier(task: Task) -> str:
    v = task.verifier
    if v.kind == "tests":
        return f"hidden tests {', '.join(v.tests)} via `{v.command}`"
    if v.kind == "command":
        return f"`{v.command}`"
    return "answer checker (key)" if task.answer_key else "answer checker (value)"


def rejected_groups(tasks: list[Task]) -> list[dict[str, Any]]:
    """Rejected (and errored) tasks grouped by their first finding's closed reason, largest
    first."""
    groups: dict[str, list[dict[str, str]]] = defaultdict(list)
    for task in tasks:
        v = task.validation
        if v.status in (Status.ACCEPTED, Status.PENDING):
            continue
        first = v.findings[0] if v.findings else None
        group = str(first.reason) if first is not None else str(v.status)
        detail = first.detail if first is not None else str(v.status)
        groups[group].append({"id": task.id, "family": task.family, "reason": detail[:300]})
    return [
        {"reason": name, "count": len(items), "tasks": items}
        for name, items in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]


def triage_section(out: Path) -> dict[str, Any] | None:
    """The funnel of the reconstruct run that wrote ``out`` (None when it left no summary)."""
    path = out / RECONSTRUCT_SUMMARY
    try:
        summary = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    triage = summary.get("triage") or {}
    reasons = sorted({r for counts in triage.values() for r in counts.get("dropped", {})})
    examples: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for drop in summary.get("dropped", []):
        shown = examples[drop["harness"]][drop["reason"]]
        if len(shown) < EXAMPLES:
            shown.append(
                {
                    "where": f"{Path(drop['file']).name}:{drop['line']}",
                    "text": drop["text"],
                    "detail": drop["detail"],
                }
            )
    return {
        "reasons": reasons,
        "harnesses": {h: triage[h] for h in sorted(triage)},
        "examples": {h: dict(e) for h, e in sorted(examples.items())},
        "candidates": summary.get("candidates", {}),
    }
