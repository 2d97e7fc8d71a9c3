"""Fail-to-pass rewards: the one scoring rule of ``trajforge verify``, training and eval.

Validation records two test sets per build / extend / repair task (:class:`TestSets`): the
tests that fail on the starting workspace and pass on the oracle (fail-to-pass) and those that
pass on both (pass-to-pass). A solution earns 1 when every fail-to-pass test passes and no
pass-to-pass test breaks, else 0: a policy that changes nothing fails every fail-to-pass test
and gets 0, and so does a partial fix (the session's own failed attempts score 0, not a share of
the tests they happen to pass). Tests dropped as flaky count for nothing. Tasks validated before
the sets were recorded fall back to the whole check: 1 when it passes, else 0.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from pydantic import BaseModel, ConfigDict

from trajforge.records import Outcome, TestSets
from trajforge.verifiers.validate.junit import RunOutcome


class Score(BaseModel):
    """One solution's reward and what it rests on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reward: float
    """1.0 or 0.0."""
    passed: bool
    """The reward is 1."""
    fixed: int
    """Fail-to-pass tests that pass."""
    to_fix: int
    """Fail-to-pass tests (0 for the whole-check fallback)."""
    broken: tuple[str, ...] = ()
    """Pass-to-pass tests that no longer pass."""


def _passed(run: RunOutcome) -> set[str]:
    return {t.name for t in run.tests if t.outcome == Outcome.PASS}


def fail_to_pass_sets(
    oracle_runs: Sequence[RunOutcome], start: RunOutcome | None, dropped: Collection[str] = ()
) -> TestSets:
    """The sets from the oracle runs and one run of the starting state with the hidden tests.

    A test counts when it passed in every oracle run (flaky ones dropped); it is fail-to-pass
    unless it also passed on the starting state. No start run: every test is fail-to-pass.
    """
    if not oracle_runs:
        return TestSets()
    always = set.intersection(*(_passed(r) for r in oracle_runs)) - set(dropped)
    before = _passed(start) if start is not None else set()
    return TestSets(
        fail_to_pass=tuple(sorted(always - before)), pass_to_pass=tuple(sorted(always & before))
    )


def score(run: RunOutcome, sets: TestSets | None, dropped: Collection[str] = ()) -> Score:
    """The reward of one check run of a candidate solution."""
    if sets is None or not sets.fail_to_pass:
        ok = not run.rejects(dropped)
        return Score(reward=float(ok), passed=ok, fixed=0, to_fix=0)
    passed = _passed(run) if run.status != Outcome.TIMEOUT else set()
    to_fix = [t for t in sets.fail_to_pass if t not in dropped]
    fixed = sum(1 for t in to_fix if t in passed)
    broken = tuple(t for t in sets.pass_to_pass if t not in dropped and t not in passed)
    ok = fixed == len(to_fix) and not broken
    return Score(reward=float(ok), passed=ok, fixed=fixed, to_fix=len(to_fix), broken=broken)
