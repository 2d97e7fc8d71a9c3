"""Turn raw matrix results into the verdict, the per-control cells and the evidence."""

from __future__ import annotations

from typing import Any, Literal

from trajforge.records import MutantNote, MutantSummary
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.junit import RunOutcome
from trajforge.verifiers.validate.matrix import MatrixResult, TaskFiles
from trajforge.verifiers.validate.reward import fail_to_pass_sets
from trajforge.verifiers.validate.rules import (
    MutantCell,
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
    items, cells, notes = [], [], []
    verdicts = result.strengthened.verdicts if result.strengthened else {}
    for mutant, run in result.mutants:
        cell: MutantCell = mutant_cell(run, dropped)
        item: dict[str, Any] = {
            "id": mutant.id,
            "path": mutant.path,
            "line": mutant.line,
            "operator": mutant.operator,
            "description": mutant.description,
        }
        if run is not None:
            item.update(status=run.status, wall_s=run.wall_s, killed_by=run.failing(dropped))
        verdict = verdicts.get(mutant.id) if cell == "survived" else None
        if verdict is not None:
            cell = verdict.verdict
            item["evidence"] = verdict.evidence
            if verdict.killed_by:
                item.update(killed_by=list(verdict.killed_by), derived=True)
        if cell == "survived" or cell == "equivalent":
            why = verdict.evidence if verdict else "not looked at closely (not a Python file)"
            notes.append(
                MutantNote(id=mutant.id, description=mutant.description, verdict=cell, evidence=why)
            )
        item["result"] = cell
        cells.append(cell)
        items.append(item)
    by_derived = sum(1 for i in items if i.get("derived"))
    summary = kill_summary(cells, cfg, by_derived)
    summary["survivors"] = [
        f"survivor {n.id}: {n.description} ({n.evidence})" for n in notes if n.verdict == "survived"
    ]
    summary["items"] = items
    summary["notes"] = notes
    return summary


def _summary_record(summary: dict[str, Any]) -> MutantSummary:
    notes: list[MutantNote] = summary.pop("notes")
    lo, hi = summary["interval"]
    return MutantSummary(
        total=summary["total"],
        killed=summary["killed"],
        killed_by_derived=summary["killed_by_derived"],
        survived=summary["survived"],
        equivalent=summary["equivalent"],
        unknown=summary["unknown"],
        kill_rate=summary["kill_rate"],
        wilson_low=lo,
        wilson_high=hi,
        z=summary["z"],
        equivalents=tuple(n for n in notes if n.verdict == "equivalent"),
        survivors=tuple(n for n in notes if n.verdict == "survived"),
    )


def _start_run(result: MatrixResult) -> RunOutcome | None:
    """The starting state's run with the final hidden tests (the control of that state)."""
    if result.start is not None:
        return result.start
    for name in ("prefix", "start", "empty"):
        if name in result.controls:
            return result.controls[name]
    return None


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
    record = _summary_record(mutants)
    if result.mutants:
        controls["mutants"] = mutants
    final_runs = result.oracle_runs
    if result.strengthened is not None:
        evidence["derived_tests"] = result.strengthened.derived.model_dump(mode="json")
        if result.strengthened.oracle_runs:
            final_runs = result.strengthened.oracle_runs
            controls["oracle"]["with_derived_tests"] = [run_row(r, dropped) for r in final_runs]
    sets = fail_to_pass_sets(final_runs, _start_run(result), dropped)
    evidence.update(
        kill_rate=mutants["kill_rate"],
        kill_interval=mutants["interval"],
        mutants=record.model_dump(mode="json"),
        mutants_batched=result.batched,
        test_sets=sets.model_dump(mode="json"),
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
