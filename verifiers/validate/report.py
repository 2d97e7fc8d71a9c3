"""``OUT/report.json`` and ``OUT/report.html``: totals, a yield funnel per family, the control
matrix (rows tasks, columns controls), and the audit sections (:mod:`.audit`: accepted tasks
in full, the triage funnel of the reconstruct run, rejections grouped by reason), built from
the task folders themselves."""

from __future__ import annotations

from pathlib import Path

import jinja2

from trajforge.errors import RecordError
from trajforge.records import CodeEvidence, Control, ControlCell, Outcome, Reason, Task
from trajforge.taskdir import load_task, task_dirs
from trajforge.verifiers.validate.audit import accepted_rows, rejected_groups, triage_section
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.files import write_atomic
from trajforge.verifiers.validate.report_doc import (
    CellView,
    TaskLine,
    Tone,
    ValidateReport,
    totals_of,
)

COLUMNS = (
    "oracle", "empty", "start", "prefix", "stub", "copy", "probes", "perturbed", "mutants"
)  # fmt: skip
_COLUMN_CONTROLS = {
    "oracle": Control.ORACLE,
    "empty": Control.EMPTY,
    "start": Control.START,
    "prefix": Control.PREFIX,
    "stub": Control.STUB,
    "copy": Control.COPY,
    "probes": Control.PROBE,
    "perturbed": Control.PERTURBED,
}
"""Each matrix column but ``mutants`` and the kind of control it shows."""
STAGES = ("candidates", "has_verifier", "oracle_passes", "controls_rejected", "accepted")
TEMPLATE = "report.html.j2"


def _worst(cells: list[ControlCell]) -> ControlCell | None:
    """One cell standing for every control of a kind: the worst of them."""
    if not cells:
        return None
    wrong = [c for c in cells if not c.ok]
    decided = (c for c in wrong if c.result != Outcome.UNKNOWN)
    return next(decided, wrong[0] if wrong else cells[0])


def _tone(cell: ControlCell) -> Tone:
    if cell.result == Outcome.UNKNOWN:
        return "unknown"
    return "good" if cell.ok else "bad"


def matrix_cells(task: Task) -> dict[str, CellView]:
    """Column → cell for one task (tone: good / bad / unknown)."""
    found: dict[str, CellView] = {}
    mutants = _mutant_cell(task)
    if mutants is not None:
        found["mutants"] = mutants
    for column, kind in _COLUMN_CONTROLS.items():
        cell = _worst(task.validation.cells(kind))
        if cell is not None:
            found[column] = CellView(text=str(cell.result), tone=_tone(cell))
    return {c: found[c] for c in COLUMNS if c in found}


def _mutant_cell(task: Task) -> CellView | None:
    evidence = task.validation.evidence
    summary = evidence.mutant_summary if isinstance(evidence, CodeEvidence) else None
    if summary is None or summary.kill_rate is None:
        return None
    threshold = float(evidence.config.get("min_kill_rate", 0.8))
    rate = summary.kill_rate
    return CellView(text=f"{rate:.2f}", tone="good" if rate >= threshold else "bad")


def funnel_stage(task: Task) -> int:
    """How far down the funnel the task got (index into :data:`STAGES`)."""
    v = task.validation
    if v.accepted:
        return 4
    if task.verifier.kind == "none" or Reason.NO_VERIFIER in v.codes:
        return 0
    oracle = v.cells(Control.ORACLE)
    if not oracle or oracle[0].result != Outcome.PASS:
        return 1
    if all(c.ok for c in v.controls.values() if c.control != Control.ORACLE):
        return 3
    return 2


def _line(task: Task) -> TaskLine:
    v = task.validation
    return TaskLine(
        id=task.id,
        family=task.family,
        harness=task.source.harness,
        status=v.status,
        reasons=list(v.reasons),
        codes=list(v.codes),
        cells=matrix_cells(task),
    )


def build_report(out: Path, backend: str, image: str, config: ValidateConfig) -> ValidateReport:
    """The report from every task folder under ``out``."""
    tasks, broken = [], []
    for task_dir in task_dirs(out):
        try:
            tasks.append(load_task(task_dir))
        except RecordError as exc:
            broken.append(str(exc))
    funnel: dict[str, dict[str, int]] = {}
    for task in tasks:
        stages = funnel.setdefault(task.family, dict.fromkeys(STAGES, 0))
        for stage in STAGES[: funnel_stage(task) + 1]:
            stages[stage] += 1
    return ValidateReport(
        backend=backend,
        image=image,
        config=config,
        totals=totals_of([t.validation.status for t in tasks]),
        funnel=dict(sorted(funnel.items())),
        columns=list(COLUMNS),
        tasks=[_line(t) for t in tasks],
        unreadable=broken,
        accepted=accepted_rows(tasks),
        rejected_by_reason=rejected_groups(tasks),
        triage=triage_section(out),
    )


def render_html(report: ValidateReport) -> str:
    """Self-contained HTML (inline CSS, no scripts, no external assets)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    doc = report.model_dump(mode="json")
    return env.get_template(TEMPLATE).render(report=doc, stages=STAGES)


def write_reports(
    out: Path, backend: str, image: str, config: ValidateConfig | None = None
) -> ValidateReport:
    """Write ``report.json`` and ``report.html`` atomically; returns the report."""
    report = build_report(out, backend, image, config or ValidateConfig())
    text = report.model_dump_json(indent=2, exclude={"run"})
    write_atomic(out / "report.json", text)
    write_atomic(out / "report.html", render_html(report))
    return report
