"""Acceptance: turn the control matrix into accepted / rejected with precise reasons.

Oracle: every run passes (a test that disagrees across runs is dropped as flaky and the task
re-judged). Must-fail controls (empty, starting workspace, pre-fix state, stub, every probe):
some kept test fails. Injected faults: kill rate ≥ ``min_kill_rate`` over decided mutants, with
a Wilson interval; timeouts and collection errors are unknown, never kills; survivors shown to
behave as the oracle on every exercised input are equivalent and not counted (:mod:`.derive`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

from trajforge.records import (
    CellResult,
    Control,
    ControlId,
    Finding,
    MutantNote,
    MutantRow,
    MutantSummary,
    MutantVerdict,
    Outcome,
    Reason,
    finding,
)
from trajforge.verifiers.validate.blame import blame
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.junit import RunOutcome

LABELS = {
    Control.EMPTY: "empty workspace",
    Control.START: "starting workspace",
    Control.PREFIX: "pre-fix state",
    Control.COPY: "the reference with the files it moves also left at their old paths",
}
MAX_SHOWN = 4


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (0, 1 when there are no trials)."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


def label(control: ControlId) -> str:
    """Human name of a control (probe 2 → ``wrong-solution probe 2``)."""
    if control.control == Control.PROBE:
        return f"wrong-solution probe {control.variant}"
    return LABELS.get(control.control, control.key)


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(n.split("::")[-1] for n in names[:MAX_SHOWN])
    return shown + (f" (+{len(names) - MAX_SHOWN} more)" if len(names) > MAX_SHOWN else "")


def flaky_tests(runs: Sequence[RunOutcome]) -> list[str]:
    """Tests whose outcome disagrees across the oracle runs."""
    seen: dict[str, set[bool]] = defaultdict(set)
    for run in runs:
        for test in run.tests:
            if test.outcome != Outcome.SKIPPED:
                seen[test.name].add(test.outcome == Outcome.PASS)
    return sorted(name for name, outcomes in seen.items() if len(outcomes) > 1)


def judge_oracle(runs: Sequence[RunOutcome], missing: int) -> tuple[list[Finding], list[str], bool]:
    """(findings, dropped flaky tests, ok) for the oracle runs."""
    dropped = flaky_tests(runs)
    passing = sum(1 for r in runs if not r.rejects(dropped))
    every = passing == len(runs) and bool(runs)
    kept = {t.name for r in runs for t in r.tests} - set(dropped)
    ok = every and (bool(kept) or not any(r.tests for r in runs))
    notes = [f"dropped flaky test {n} (disagrees across oracle runs)" for n in dropped]
    found = [finding(Reason.PROVEN if ok else Reason.ORACLE_FLAKY, n) for n in notes]
    if ok:
        last = finding(Reason.PROVEN, f"oracle passes {passing}/{len(runs)} runs")
    elif every:
        last = finding(Reason.ORACLE_FLAKY, "oracle flaked: every test disagrees across runs")
    elif passing:
        last = finding(Reason.ORACLE_FLAKY, f"oracle flaked {len(runs) - passing}/{len(runs)}")
    else:
        why = _why_failed(runs[0], dropped)
        if missing:
            why += f"; {missing} files the session touched could not be recovered"
        tail = runs[0].detail if runs[0].status != Outcome.TIMEOUT else ""
        who = blame(tail, missing) if tail else Reason.ORACLE_FAILS
        head = "oracle fails" if who == Reason.ORACLE_FAILS else f"{who}: oracle run fails"
        last = finding(who, f"{head}: {why}" + (f"; output ends:\n{tail}" if tail else ""))
    return [*found, last], dropped, ok


def _why_failed(first: RunOutcome, dropped: Sequence[str]) -> str:
    failing = first.failing(dropped)
    if len(first.tests) == 1 and first.tests[0].message.startswith("exit"):
        return f"`{first.tests[0].name}` exits {first.exit_code}"  # a check without test report
    if failing:
        return f"{_names(failing)} fail(s)"
    return first.detail.splitlines()[0] if first.detail else f"exit {first.exit_code}"


def control_cell(run: RunOutcome, dropped: Sequence[str]) -> CellResult:
    """pass / fail / unknown of a must-fail control (a timeout is unknown)."""
    if run.status == Outcome.TIMEOUT:
        return Outcome.UNKNOWN
    return Outcome.FAIL if run.rejects(dropped) else Outcome.PASS


def mutant_cell(run: RunOutcome | None, dropped: Sequence[str]) -> MutantVerdict:
    """killed (a kept test failed) / survived / unknown (timeout, collection or usage error)."""
    if run is None or run.status in (Outcome.TIMEOUT, Outcome.ERROR):
        return MutantVerdict.UNKNOWN
    return MutantVerdict.KILLED if run.rejects(dropped) else MutantVerdict.SURVIVED


def judge_controls(controls: dict[ControlId, RunOutcome], dropped: Sequence[str]) -> list[Finding]:
    """Rejections for must-fail controls the verifier did not reject."""
    found = []
    for name, run in controls.items():
        cell = control_cell(run, dropped)
        if cell == Outcome.PASS:
            passed = [t.name for t in run.tests if t.outcome == Outcome.PASS]
            text = f"{label(name)} passes {_names(passed) or 'the check'}"
            found.append(finding(Reason.CONTROL_PASSES, text))
        elif cell == Outcome.UNKNOWN:
            text = f"{label(name)}: verdict unknown ({run.detail})"
            found.append(finding(Reason.VERDICT_UNKNOWN, text))
    return found


def kill_summary(
    rows: Sequence[MutantRow], config: ValidateConfig, notes: Sequence[MutantNote] = ()
) -> MutantSummary:
    """Counts, kill rate and Wilson interval of the mutants' results.

    Equivalent mutants (same behaviour as the oracle on every exercised input) are reported
    but left out of the rate; ``derived`` rows are kills by tests derived from the oracle.
    """
    cells = [r.result for r in rows]
    killed, survived = cells.count(MutantVerdict.KILLED), cells.count(MutantVerdict.SURVIVED)
    decided = killed + survived
    lo, hi = wilson(killed, decided, config.wilson_z)
    return MutantSummary(
        total=len(cells),
        killed=killed,
        killed_by_derived=sum(1 for r in rows if r.derived),
        survived=survived,
        equivalent=cells.count(MutantVerdict.EQUIVALENT),
        unknown=cells.count(MutantVerdict.UNKNOWN),
        kill_rate=round(killed / decided, 4) if decided else None,
        wilson_low=lo,
        wilson_high=hi,
        z=config.wilson_z,
        equivalents=tuple(n for n in notes if n.verdict == MutantVerdict.EQUIVALENT),
        survivors=tuple(n for n in notes if n.verdict == MutantVerdict.SURVIVED),
    )


def judge_mutants(
    summary: MutantSummary, config: ValidateConfig
) -> tuple[list[Finding], list[str]]:
    """(rejections, notes) for the kill rate."""
    rate = summary.kill_rate
    decided = summary.killed + summary.survived
    if rate is None:
        note = (
            f"kill rate not measured: no decided mutant ({summary.unknown} unknown, "
            f"{summary.equivalent} equivalent)"
        )
        rejected = [finding(Reason.WEAK_MUTANT_KILL, note)] if config.require_mutants else []
        return rejected, [note]
    extra = ""
    if summary.killed_by_derived:
        extra += f", {summary.killed_by_derived} by tests derived from the oracle"
    if summary.equivalent:
        extra += f"; {summary.equivalent} equivalent, not counted"
    text = (
        f"mutant kill rate {rate:.2f} ({summary.killed}/{decided} killed{extra}; "
        f"{summary.unknown} unknown; CI {summary.wilson_low:.2f}–{summary.wilson_high:.2f})"
    )
    if rate < config.min_kill_rate:
        return [finding(Reason.WEAK_MUTANT_KILL, f"{text} < {config.min_kill_rate:.2f}")], []
    return [], [text]
