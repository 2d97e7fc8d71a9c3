"""The derived test file: one differential test per chosen input, checked by real runs.

The file is :mod:`._derived_prelude` (stdlib only) followed by one ``test_trajforge_dNN_<fn>``
per input, each expecting what the oracle did. The checked kept set: tests that pass on the
oracle in every run and fail on the stub (when there is one), on the empty workspace and on at
least one surviving mutant. Tests that fail the bar are dropped and the rest re-checked once.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from trajforge.oracles.mutate import Mutant
from trajforge.records import Outcome
from trajforge.verifiers.validate._derived_prelude import plain, same
from trajforge.verifiers.validate.files import layered
from trajforge.verifiers.validate.junit import RunOutcome
from trajforge.verifiers.validate.observe import CallInput, Observation

if TYPE_CHECKING:
    from trajforge.verifiers.validate.matrix import ControlRunner

PRELUDE = Path(__file__).with_name("_derived_prelude.py")
FILE_NAME = "test_trajforge_derived.py"
PREFIX = "test_trajforge_d"


@dataclass(frozen=True)
class DerivedInput:
    """One input turned into a test: the call and what the oracle did on it."""

    name: str
    """Test function name."""
    item: CallInput
    """The call."""
    expected: str
    """The ``expected`` dict of the test, as Python source."""
    targets: tuple[str, ...]
    """Ids of the survivors the observations say it fails on."""


@dataclass
class Checked:
    """What the real runs showed."""

    kept: list[DerivedInput] = field(default_factory=list)
    kills: dict[str, list[str]] = field(default_factory=dict)
    """Test name → survivor ids it failed on."""
    dropped: int = 0
    oracle_runs: list[RunOutcome] = field(default_factory=list)
    """The last oracle runs, with the kept tests among the hidden tests."""


def expected_source(seen: Observation) -> str | None:
    """The ``expected`` dict for an observation a test can pin; None when it cannot."""
    parts: list[str] = []
    if seen.get("status") == "returned" and seen.get("value") is not None:
        parts.append(f"'value': {seen['value']}")
    elif seen.get("status") == "raised" and "Exception" in seen.get("exc_mro", []):
        parts.append(f"'raises': {seen['type']!r}")
    else:
        return None
    if seen.get("stdout"):
        parts.append(f"'stdout': {seen['stdout']!r}")
    after = seen.get("args_after")
    if after is not None:
        try:
            ast.literal_eval(after)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        parts.append(f"'args_after': {after}")
    return "{" + ", ".join(parts) + "}"


def lenient_differs(expected: Observation, seen: Observation) -> bool:
    """Would the derived test of ``expected`` fail on ``seen``? (mirrors the prelude's check)"""
    if expected.get("status") == "raised":
        wrong = seen.get("status") != "raised" or expected["type"] not in seen.get("exc_mro", [])
    else:
        wrong = seen.get("status") != "returned" or seen.get("value") is None
        if not wrong:
            value = plain(ast.literal_eval(seen["value"]))
            wrong = not same(ast.literal_eval(expected["value"]), value)
    if expected.get("stdout") and expected["stdout"] != seen.get("stdout"):
        wrong = True
    return wrong or (
        bool(expected.get("args_after")) and expected["args_after"] != seen.get("args_after")
    )


def render(candidates: Sequence[DerivedInput]) -> str:
    """The derived test file's text."""
    lines = [PRELUDE.read_text(encoding="utf-8").rstrip(), ""]
    for c in candidates:
        where = c.item.origin if c.item.source != "instruction" else "the instruction"
        doc = f"{c.item.text()} (from {c.item.source}: {where})"
        call = f"{c.item.module!r}, {c.item.function!r}, {c.item.args!r}, {c.item.kwargs!r}"
        lines += [
            "",
            f"def {c.name}():",
            f"    {ast.unparse(ast.Constant(doc[:300]))}",
            f"    check({call}, {c.expected})",
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def _derived_failures(run: RunOutcome) -> set[str]:
    return {_func(t.name) for t in run.tests if PREFIX in t.name and t.outcome != Outcome.PASS}


def _derived_passes(run: RunOutcome) -> set[str]:
    return {_func(t.name) for t in run.tests if PREFIX in t.name and t.outcome == Outcome.PASS}


def _not_passed(run: RunOutcome, names: set[str]) -> set[str]:
    """Of ``names``, the tests a rejected run did not pass (a collection error runs none)."""
    return names - _derived_passes(run) if run.rejects() else set()


def _func(test_name: str) -> str:
    return test_name.split("::")[-1].split("[")[0]


@dataclass(frozen=True)
class FileSets:
    """The file sets the derived tests run against."""

    oracle: dict[str, str]
    workspace: dict[str, str]
    hidden: dict[str, str]
    stub: dict[str, str] | None
    survivors: tuple[Mutant, ...]
    dropped: tuple[str, ...] = ()
    """Tests dropped as flaky (they do not decide a run)."""


def check_tests(
    runner: ControlRunner,
    sets: FileSets,
    candidates: list[DerivedInput],
    path: str,
    runs: tuple[int, float],
) -> Checked:
    """Run the candidates for real and keep those that meet the bar (see the module doc)."""
    k, timeout = runs
    hidden = {**sets.hidden, path: render(candidates)}
    oracle = [runner.run(layered(sets.oracle, hidden), timeout) for _ in range(k)]
    passing = set.intersection(*(_derived_passes(r) for r in oracle))
    empty = _not_passed(runner.run(dict(hidden), timeout), passing)
    stubbed = passing
    if sets.stub is not None:
        stubbed = _not_passed(runner.run(layered(sets.oracle, sets.stub, hidden), timeout), passing)
    kills: dict[str, list[str]] = {}
    for mutant in sets.survivors:
        mutated = layered(sets.oracle, {mutant.path: mutant.content}, hidden)
        for name in _derived_failures(runner.run(mutated, timeout)):
            kills.setdefault(name, []).append(mutant.id)
    kept = [c for c in candidates if {c.name} <= passing & empty & stubbed and kills.get(c.name)]
    checked = Checked(kept, {c.name: kills[c.name] for c in kept}, len(candidates) - len(kept))
    if kept and len(kept) < len(candidates):
        final = {**sets.hidden, path: render(kept)}
        oracle = [runner.run(layered(sets.oracle, final), timeout) for _ in range(k)]
    if kept and any(r.rejects(sets.dropped) for r in oracle):
        return Checked(dropped=len(candidates))
    checked.oracle_runs = oracle if kept else []
    return checked
