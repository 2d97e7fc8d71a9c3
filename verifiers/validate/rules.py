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

from trajforge.records import CellResult, MutantNote, MutantRow, MutantSummary, MutantVerdict
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.junit import RunOutcome

LABELS = {"empty": "empty workspace", "start": "starting workspace", "prefix": "pre-fix state"}
MAX_NAMES = 4


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion (0, 1 when there are no trials)."""
    if trials == 0:
        return (0.0, 1.0)
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


def label(name: str) -> str:
    """Human name of a control (``probe:2`` → ``wrong-solution probe 2``)."""
    if name.startswith("probe:"):
        return f"wrong-solution probe {name.split(':', 1)[1]}"
    return LABELS.get(name, name)


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(n.split("::")[-1] for n in names[:MAX_NAMES])
    return shown + (f" (+{len(names) - MAX_NAMES} more)" if len(names) > MAX_NAMES else "")


def flaky_tests(runs: Sequence[RunOutcome]) -> list[str]:
    """Tests whose outcome disagrees across the oracle runs."""
    seen: dict[str, set[bool]] = defaultdict(set)
    for run in runs:
        for test in run.tests:
            if test.outcome != "skipped":
                seen[test.name].add(test.outcome == "passed")
    return sorted(name for name, outcomes in seen.items() if len(outcomes) > 1)


def judge_oracle(runs: Sequence[RunOutcome], missing: int) -> tuple[list[str], list[str], bool]:
    """(reasons, dropped flaky tests, ok) for the oracle runs."""
    dropped = flaky_tests(runs)
    passing = sum(1 for r in runs if not r.rejects(dropped))
    reasons = [f"dropped flaky test {n} (disagrees across oracle runs)" for n in dropped]
    if passing == len(runs) and runs:
        kept = {t.name for r in runs for t in r.tests} - set(dropped)
        if not kept and any(r.tests for r in runs):
            return [*reasons, "oracle flaked: every test disagrees across runs"], dropped, False
        return [*reasons, f"oracle passes {passing}/{len(runs)} runs"], dropped, True
    if passing:
        return [*reasons, f"oracle flaked {len(runs) - passing}/{len(runs)}"], dropped, False
    first = runs[0]
    failing = first.failing(dropped)
    if len(first.tests) == 1 and first.tests[0].message.startswith("exit"):
        why = f"`{first.tests[0].name}` exits {first.exit_code}"  # a check without test report
    elif failing:
        why = f"{_names(failing)} fail(s)"
    else:
        why = first.detail or f"exit {first.exit_code}"
    if missing:
        why += f"; {missing} files the session touched could not be recovered"
    return [*reasons, f"oracle fails: {why}"], dropped, False


def control_cell(run: RunOutcome, dropped: Sequence[str]) -> CellResult:
    """pass / fail / unknown of a must-fail control (a timeout is unknown)."""
    if run.status == "timeout":
        return "unknown"
    return "fail" if run.rejects(dropped) else "pass"


def mutant_cell(run: RunOutcome | None, dropped: Sequence[str]) -> MutantVerdict:
    """killed (a kept test failed) / survived / unknown (timeout, collection or usage error)."""
    if run is None or run.status in ("timeout", "error"):
        return "unknown"
    return "killed" if run.rejects(dropped) else "survived"


def judge_controls(controls: dict[str, RunOutcome], dropped: Sequence[str]) -> list[str]:
    """Rejection reasons for must-fail controls the verifier did not reject."""
    reasons = []
    for name, run in controls.items():
        cell = control_cell(run, dropped)
        if cell == "pass":
            passed = [t.name for t in run.tests if t.outcome == "passed"]
            reasons.append(f"{label(name)} passes {_names(passed) or 'the check'}")
        elif cell == "unknown":
            reasons.append(f"{label(name)}: verdict unknown ({run.detail})")
    return reasons


def kill_summary(
    rows: Sequence[MutantRow], config: ValidateConfig, notes: Sequence[MutantNote] = ()
) -> MutantSummary:
    """Counts, kill rate and Wilson interval of the mutants' results.

    Equivalent mutants (same behaviour as the oracle on every exercised input) are reported
    but left out of the rate; ``derived`` rows are kills by tests derived from the oracle.
    """
    cells = [r.result for r in rows]
    killed, survived = cells.count("killed"), cells.count("survived")
    decided = killed + survived
    lo, hi = wilson(killed, decided, config.wilson_z)
    return MutantSummary(
        total=len(cells),
        killed=killed,
        killed_by_derived=sum(1 for r in rows if r.derived),
        survived=survived,
        equivalent=cells.count("equivalent"),
        unknown=cells.count("unknown"),
        kill_rate=round(killed / decided, 4) if decided else None,
        wilson_low=lo,
        wilson_high=hi,
        z=config.wilson_z,
        equivalents=tuple(n for n in notes if n.verdict == "equivalent"),
        survivors=tuple(n for n in notes if n.verdict == "survived"),
    )


def judge_mutants(summary: MutantSummary, config: ValidateConfig) -> tuple[list[str], list[str]]:
    """(rejection reasons, notes) for the kill rate."""
    rate = summary.kill_rate
    decided = summary.killed + summary.survived
    if rate is None:
        note = (
            f"kill rate not measured: no decided mutant ({summary.unknown} unknown, "
            f"{summary.equivalent} equivalent)"
        )
        return ([note] if config.require_mutants else []), [note]
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
        return [f"{text} < {config.min_kill_rate:.2f}"], []
    return [], [text]
