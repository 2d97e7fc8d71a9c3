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
from trajforge.records import Task, load_record
from trajforge.verifiers.validate.audit import accepted_rows, rejected_groups, triage_section
from trajforge.verifiers.validate.files import TASK_FILE, write_atomic
from trajforge.verifiers.validate.run import task_dirs

COLUMNS = ("oracle", "empty", "start", "prefix", "stub", "probes", "perturbed", "mutants")
STAGES = ("candidates", "has_verifier", "oracle_passes", "controls_rejected", "accepted")
TEMPLATE = "report.html.j2"


def _group(controls: dict[str, Any], prefix: str) -> dict[str, Any] | None:
    cells = [c for n, c in controls.items() if n.startswith(prefix + ":")]
    if not cells:
        return None
    results = {c["result"] for c in cells}
    result = "pass" if "pass" in results else ("unknown" if "unknown" in results else "fail")
    return {"expect": "fail", "result": result, "count": len(cells)}


def matrix_cells(task: Task) -> dict[str, dict[str, Any]]:
    """Column → {text, tone} for one task (tone: good / bad / unknown)."""
    controls = task.validation.controls
    found: dict[str, dict[str, Any]] = {}
    for column in COLUMNS:
        if column == "mutants":
            found[column] = _mutant_cell(controls.get("mutants"), task)
            continue
        cell = controls.get(column) or _group(controls, column.rstrip("s"))
        if not isinstance(cell, dict):
            continue
        if "result" not in cell and "passed" in cell:  # answer-checker controls (qa, data)
            expect = "pass" if column == "oracle" else "fail"
            cell = {"result": "pass" if cell["passed"] else "fail", "expect": expect}
        if "result" not in cell:
            continue
        tone = (
            "unknown"
            if cell["result"] == "unknown"
            else ("good" if cell["result"] == cell["expect"] else "bad")
        )
        found[column] = {"text": cell["result"], "tone": tone}
    return {k: v for k, v in found.items() if v}


def _mutant_cell(cell: dict[str, Any] | None, task: Task) -> dict[str, Any]:
    if not cell or cell.get("kill_rate") is None:
        return {}
    threshold = task.validation.evidence.get("config", {}).get("min_kill_rate", 0.8)
    rate = cell["kill_rate"]
    return {"text": f"{rate:.2f}", "tone": "good" if rate >= threshold else "bad"}


def funnel_stage(task: Task) -> int:
    """How far down the funnel the task got (index into :data:`STAGES`)."""
    v = task.validation
    if v.status == "accepted":
        return 4
    controls = v.controls
    if task.verifier.kind == "none" or any(r.startswith("no verifier") for r in v.reasons):
        return 0
    oracle = controls.get("oracle")
    if not oracle or oracle.get("result") != "pass":
        return 1
    must_fail = [c for n, c in controls.items() if n not in ("oracle", "mutants")]
    if all(c.get("result") == c.get("expect") for c in must_fail):
        return 3
    return 2


def build_report(out: Path, meta: dict[str, Any]) -> dict[str, Any]:
    """The report document from every task folder under ``out``."""
    tasks, rows, broken = [], [], []
    for task_dir in task_dirs(out):
        try:
            task = load_record(Task, task_dir / TASK_FILE)
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
                "status": v.status,
                "reasons": list(v.reasons),
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
            **{
                s: totals.get(s, 0) for s in ("accepted", "rejected", "error", "timeout", "pending")
            },
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
