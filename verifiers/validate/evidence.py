"""Turn raw matrix results into the verdict, the per-control cells and the evidence."""

from __future__ import annotations

from typing import Any, Literal

from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.junit import RunOutcome
from trajforge.verifiers.validate.matrix import MatrixResult, TaskFiles
from trajforge.verifiers.validate.rules import (
    control_cell,
    judge_controls,
    judge_mutants,
    judge_oracle,
    kill_summary,
    label,
    mutant_cell,
)

Status = Literal["accepted", "rejected", "timeout"]


def run_row(run: RunOutcome, dropped: list[str]) -> dict[str, Any]:
    """One run as stored in task.json: status, exit code, time, per-test results, killers."""
    return {
        "status": run.status,
        "exit_code": run.exit_code,
        "wall_s": run.wall_s,
        "detail": run.detail,
        "failing": run.failing(dropped),
        "tests": [{"name": t.name, "outcome": t.outcome} for t in run.tests],
    }


def _oracle_cell(result: MatrixResult, dropped: list[str], ok: bool) -> dict[str, Any]:
    runs = [run_row(r, dropped) for r in result.oracle_runs]
    passed = sum(1 for r in result.oracle_runs if not r.rejects(dropped))
    return {
        "expect": "pass",
        "result": "pass" if ok else "fail",
        "passed": passed,
        "of": len(runs),
        "runs": runs,
    }


def _mutant_cells(result: MatrixResult, dropped: list[str], cfg: ValidateConfig) -> dict[str, Any]:
    items, cells = [], []
    for mutant, run in result.mutants:
        cell = mutant_cell(run, dropped)
        cells.append(cell)
        item: dict[str, Any] = {
            "id": mutant.id,
            "path": mutant.path,
            "line": mutant.line,
            "operator": mutant.operator,
            "description": mutant.description,
            "result": cell,
        }
        if run is not None:
            item.update(status=run.status, wall_s=run.wall_s, killed_by=run.failing(dropped))
        items.append(item)
    summary = kill_summary(cells, cfg)
    summary["survivors"] = [
        f"possibly-equivalent survivor {i['id']}: {i['description']}"
        for i in items
        if i["result"] == "survived"
    ]
    summary["items"] = items
    return summary


def _flake_rate(runs: list[RunOutcome], dropped: list[str]) -> float:
    names = {t.name for r in runs for t in r.tests}
    return round(len(dropped) / len(names), 4) if names else 0.0


def matrix_controls(
    result: MatrixResult, files: TaskFiles, cfg: ValidateConfig
) -> tuple[Status, list[str], dict[str, Any], dict[str, Any]]:
    """(status, reasons, controls, evidence) for a command / tests verifier."""
    missing = len(files.task.files.missing)
    reasons, dropped, ok = judge_oracle(result.oracle_runs, missing)
    controls: dict[str, Any] = {"oracle": _oracle_cell(result, dropped, ok)}
    evidence: dict[str, Any] = {
        "dropped_tests": dropped,
        "flake_rate": _flake_rate(result.oracle_runs, dropped),
        "timings": result.timings,
        "shell_replayed": result.shell,
        "notes": list(result.notes),
    }
    if not ok:
        timed_out = all(r.status == "timeout" for r in result.oracle_runs)
        return ("timeout" if timed_out else "rejected"), reasons, controls, evidence
    for name, run in result.controls.items():
        cell = {"expect": "fail", "result": control_cell(run, dropped), **run_row(run, dropped)}
        cell["killed_by"] = cell.pop("failing")
        controls[name] = cell
    failures = judge_controls(result.controls, dropped)
    mutants = _mutant_cells(result, dropped, cfg)
    if result.mutants:
        controls["mutants"] = mutants
    evidence.update(
        kill_rate=mutants["kill_rate"],
        kill_interval=mutants["interval"],
        mutants_batched=result.batched,
    )
    bad, notes = judge_mutants(mutants, cfg)
    evidence["notes"] += notes + mutants["survivors"]
    failures += bad
    if failures:
        return "rejected", failures, controls, evidence
    rejected = ", ".join(label(n) for n in result.controls)
    reasons.append(f"rejects {rejected}" if rejected else "no must-fail control applied")
    reasons += notes
    return "accepted", reasons, controls, evidence
