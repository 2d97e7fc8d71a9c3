"""``OUT/report.json`` and ``OUT/report.html``: totals, a yield funnel per family, the control
matrix (rows tasks, columns controls), and the audit sections (:mod:`.audit`: accepted tasks
in full, the triage funnel of the reconstruct run, rejections grouped by reason), built from
the task folders themselves."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import jinja2
import orjson

from trajforge import __version__
from trajforge.errors import RecordError
from trajforge.records import ControlCell, Reason, Status, Task
from trajforge.taskdir import load_task, task_dirs
from trajforge.verifiers.validate.audit import accepted_rows, rejected_groups, triage_section
from trajforge.verifiers.validate.files import write_atomic

COLUMNS = ("oracle", "empty", "start", "prefix", "stub", "probes", "perturbed", "mutants")
STAGES = ("candidates", "has_verifier", "oracle_passes", "controls_rejected", "accepted")
TEMPLATE = "report.html.j2"


def _group(controls: dict[str, ControlCell], prefix: str) -> ControlCell | None:
    """One cell standing for every ``prefix:N`` control: the worst of them."""
    cells = [c for n, c in controls.items() if n.startswith(prefix + ":")]
    if not cells:
        return None
    wrong = [c for c in cells if not c.ok]
    return next((c for c in wrong if c.result != "unknown"), wrong[0] if wrong else cells[0])


def _tone(cell: ControlCell) -> str:
    return "unknown" if cell.result == "unknown" else ("good" if cell.ok else "bad")


def matrix_cells(task: Task) -> dict[str, dict[str, str]]:
    """Column → {text, tone} for one task (tone: good / bad / unknown)."""
    controls = task.validation.controls
    found: dict[str, dict[str, str]] = {}
    for column in COLUMNS:
        if column == "mutants":
            found[column] = _mutant_cell(task)
            continue
        cell = controls.get(column) or _group(controls, column.rstrip("s"))
        if cell is not None:
            found[column] = {"text": cell.result, "tone": _tone(cell)}
    return {k: v for k, v in found.items() if v}


def _mutant_cell(task: Task) -> dict[str, str]:
    summary = task.validation.evidence.mutants
    if summary is None or summary.kill_rate is None:
        return {}
    threshold = float(task.validation.evidence.config.get("min_kill_rate", 0.8))
    rate = summary.kill_rate
    return {"text": f"{rate:.2f}", "tone": "good" if rate >= threshold else "bad"}


def funnel_stage(task: Task) -> int:
    """How far down the funnel the task got (index into :data:`STAGES`)."""
    v = task.validation
    if v.accepted:
        return 4
    if task.verifier.kind == "none" or Reason.NO_VERIFIER in v.codes:
        return 0
    oracle = v.controls.get("oracle")
    if oracle is None or oracle.result != "pass":
        return 1
    if all(c.ok for n, c in v.controls.items() if n != "oracle"):
        return 3
    return 2


def build_report(out: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """The report document from every task folder under ``out``."""
    tasks, rows, broken = [], [], []
    for task_dir in task_dirs(out):
        try:
            task = load_task(task_dir)
        except RecordError as exc:
            broken.append(str(exc))
            continue
        tasks.append(task)
        v = task.validation
        rows.append(
            {
                "id": task.id,
                "family": task.family,
                "harness": task.source.harness,
                "status": str(v.status),
                "reasons": list(v.reasons),
                "codes": [str(c) for c in v.codes],
                "cells": matrix_cells(task),
            }
        )
    funnel: dict[str, dict[str, int]] = {}
    for task in tasks:
        stages = funnel.setdefault(task.family, dict.fromkeys(STAGES, 0))
        for stage in STAGES[: funnel_stage(task) + 1]:
            stages[stage] += 1
    totals = Counter(t.validation.status for t in tasks)
    return {
        "trajforge_version": __version__,
        **meta,
        "totals": {
            "tasks": len(tasks),
            **{str(s): totals.get(s, 0) for s in Status},
        },
        "funnel": dict(sorted(funnel.items())),
        "columns": list(COLUMNS),
        "tasks": rows,
        "unreadable": broken,
        "accepted": accepted_rows(tasks),
        "rejected_by_reason": rejected_groups(tasks),
        "triage": triage_section(out),
    }


def render_html(report: dict[str, Any]) -> str:
    """Self-contained HTML (inline CSS, no scripts, no external assets)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template(TEMPLATE).render(report=report, stages=STAGES)


def write_reports(out: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """Write ``report.json`` and ``report.html`` atomically; returns the report."""
    report = build_report(out, meta)
    write_atomic(out / "report.json", orjson.dumps(report, option=orjson.OPT_INDENT_2).decode())
    write_atomic(out / "report.html", render_html(report))
    return report
