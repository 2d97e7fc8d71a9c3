"""Turn raw matrix results into the verdict, the per-control cells and the evidence."""

from __future__ import annotations

from trajforge.oracles.mutate import Mutant
from trajforge.records import (
    CodeEvidence,
    Control,
    ControlCell,
    ControlId,
    MutantNote,
    MutantRow,
    MutantVerdict,
    Outcome,
    Reason,
    Status,
    Validation,
    control_map,
    finding,
)
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.derive import Verdict
from trajforge.verifiers.validate.junit import RunOutcome
from trajforge.verifiers.validate.matrix import MatrixResult, TaskFiles
from trajforge.verifiers.validate.reward import fail_to_pass_sets
from trajforge.verifiers.validate.rules import (
    control_cell,
    judge_controls,
    judge_mutants,
    judge_oracle,
    kill_summary,
    label,
    mutant_cell,
)

UNEXAMINED = "not looked at closely (not a Python file)"


def _oracle_cell(result: MatrixResult, dropped: list[str], ok: bool) -> ControlCell:
    passed = sum(1 for r in result.oracle_runs if not r.rejects(dropped))
    return ControlCell(
        control=Control.ORACLE,
        expect=Outcome.PASS,
        result=Outcome.PASS if ok else Outcome.FAIL,
        passed=passed,
        runs=tuple(r.stored(dropped) for r in result.oracle_runs),
    )


def _mutant_row(
    mutant: Mutant, run: RunOutcome | None, dropped: list[str], verdict: Verdict | None
) -> MutantRow:
    cell = mutant_cell(run, dropped)
    row = MutantRow(
        id=mutant.id,
        path=mutant.path,
        line=mutant.line,
        operator=mutant.operator,
        description=mutant.description,
        result=cell,
        status=run.status if run is not None else None,
        wall_s=run.wall_s if run is not None else 0.0,
        killed_by=tuple(run.failing(dropped)) if run is not None else (),
    )
    if verdict is None or cell != MutantVerdict.SURVIVED:
        return row
    update: dict[str, object] = {"result": verdict.verdict, "evidence": verdict.evidence}
    if verdict.killed_by:
        update.update(killed_by=tuple(verdict.killed_by), derived=True)
    return row.model_copy(update=update)


def _mutant_rows(result: MatrixResult, dropped: list[str]) -> list[MutantRow]:
    verdicts = result.strengthened.verdicts if result.strengthened else {}
    return [_mutant_row(m, run, dropped, verdicts.get(m.id)) for m, run in result.mutants]


def _notes(rows: list[MutantRow]) -> list[MutantNote]:
    return [
        MutantNote(
            id=r.id, description=r.description, verdict=r.result, evidence=r.evidence or UNEXAMINED
        )
        for r in rows
        if r.result in (MutantVerdict.SURVIVED, MutantVerdict.EQUIVALENT)
    ]


def _start_run(result: MatrixResult) -> RunOutcome | None:
    """The starting state's run with the final hidden tests (the control of that state)."""
    if result.start is not None:
        return result.start
    for control in (Control.PREFIX, Control.START, Control.EMPTY):
        if ControlId(control) in result.controls:
            return result.controls[ControlId(control)]
    return None


def _flake_rate(runs: list[RunOutcome], dropped: list[str]) -> float:
    names = {t.name for r in runs for t in r.tests}
    return round(len(dropped) / len(names), 4) if names else 0.0


def _base_evidence(result: MatrixResult, dropped: list[str]) -> CodeEvidence:
    return CodeEvidence(
        dropped_tests=tuple(dropped),
        flake_rate=_flake_rate(result.oracle_runs, dropped),
        timings=result.timings,
        shell_replayed=tuple(result.shell),
        notes=tuple(result.notes),
        timeout_s=result.timeout_s,
    )


def matrix_controls(result: MatrixResult, files: TaskFiles, cfg: ValidateConfig) -> Validation:
    """The validation of a command / tests verifier from its matrix (without the evidence
    every task carries; :func:`~.single.finish` adds it)."""
    found, dropped, ok = judge_oracle(result.oracle_runs, len(files.task.files.unknown))
    oracle = _oracle_cell(result, dropped, ok)
    evidence = _base_evidence(result, dropped)
    if not ok:
        timed_out = all(r.status == Outcome.TIMEOUT for r in result.oracle_runs)
        status = Status.TIMEOUT if timed_out else Status.REJECTED
        return Validation(
            status=status, findings=tuple(found), controls=control_map([oracle]), evidence=evidence
        )
    cells = [oracle]
    for name, run in result.controls.items():
        cells.append(
            ControlCell(
                control=name.control,
                variant=name.variant,
                expect=Outcome.FAIL,
                result=control_cell(run, dropped),
                runs=(run.stored(dropped),),
            )
        )
    controls = control_map(cells)
    failures = judge_controls(result.controls, dropped)
    rows = _mutant_rows(result, dropped)
    notes = _notes(rows)
    summary = kill_summary(rows, cfg, notes)
    final_runs = result.oracle_runs
    update: dict[str, object] = {}
    if result.strengthened is not None:
        update["derived_tests"] = result.strengthened.derived
        if result.strengthened.oracle_runs:
            final_runs = result.strengthened.oracle_runs
            derived = tuple(r.stored(dropped) for r in final_runs)
            controls[Control.ORACLE] = oracle.model_copy(update={"derived_runs": derived})
    bad, kill_notes = judge_mutants(summary, cfg)
    survivors = [f"survivor {n.id}: {n.description} ({n.evidence})" for n in summary.survivors]
    update.update(
        mutant_summary=summary if rows else None,
        mutants_batched=result.batched,
        test_sets=fail_to_pass_sets(final_runs, _start_run(result), dropped),
        notes=(*evidence.notes, *kill_notes, *survivors),
    )
    failures += bad
    if not failures:
        rejected = ", ".join(label(n) for n in result.controls)
        text = f"rejects {rejected}" if rejected else "no must-fail control applied"
        found += [finding(Reason.PROVEN, t) for t in (text, *kill_notes)]
    return Validation(
        status=Status.REJECTED if failures else Status.ACCEPTED,
        findings=tuple(failures or found),
        controls=controls,
        mutants=tuple(rows),
        evidence=evidence.model_copy(update=update),
    )
