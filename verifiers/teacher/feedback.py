"""What the teacher is told after a rejected round, in words that do not change run to run.

The feedback is part of the next request, and a recorded answer is found again by the request's
hash (the cassettes: ``tests/teacher/keyed_server.py``), so the same rejection must read the same
on every run: a runner's wall times (``(3848.3ms)``, ``duration_ms 3878.05``, ``Time: 1.2s``)
are blanked, and a weak kill rate is told by the mutants that survived, not by a rate that moves
when a slow mutant times out on one run and not on another.
"""

from __future__ import annotations

import re

from trajforge.records import Control, MutantVerdict, Outcome, Reason, Validation

_WALL = (
    re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds|µs|us|ns)\b"),  # 3848.34749ms, 1.2 s
    re.compile(r"\b(duration_ms|time|duration|elapsed|took)([:=]?\s*)\d+(?:\.\d+)?", re.I),
    re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:\.\d+)?\b"),  # vitest's "Start at  17:19:33"
)


def steady(text: str) -> str:
    """``text`` with wall times and clock times blanked (``…ms`` / ``…s`` / ``duration_ms …`` /
    ``17:19:33`` read ``<t>``)."""
    text = _WALL[0].sub("<t>", text)
    text = _WALL[2].sub("<t>", text)
    return _WALL[1].sub(lambda m: f"{m.group(1)}{m.group(2)}<t>", text)


WHERE = {
    Control.STUB: "the stub",
    Control.COPY: (
        "the reference with every file it moves also left at its old path (copied, not moved: "
        "test that the old paths are gone)"
    ),
}
"""How the feedback names a control that passed (any other: ``the NAME control``)."""


def survivors(validation: Validation) -> list[str]:
    """Every surviving control, in words the teacher can act on."""
    lines = []
    for name, cell in validation.controls.items():
        if cell.control == Control.ORACLE or cell.result != Outcome.PASS:
            continue
        tests = cell.runs[0].tests if cell.runs else ()
        passed = [t.name for t in tests if t.outcome == Outcome.PASS]
        where = WHERE.get(cell.control, f"the {name} control")
        lines.append(f"these tests pass on {where}: {', '.join(passed) or 'the whole check'}")
    for item in validation.mutants:
        if item.result == MutantVerdict.SURVIVED:
            lines.append(f"mutant {item.id} survives: {item.description}")
    return lines


def _finding_lines(validation: Validation) -> list[str]:
    lines = []
    for found in validation.findings:
        if found.reason == Reason.WEAK_MUTANT_KILL:
            line = "too few injected faults (mutants) make a test fail: each one listed survives"
        else:
            line = steady(found.detail)
        if line not in lines:
            lines.append(line)
    return lines


def feedback(validation: Validation) -> str:
    """The follow-up message for a rejected round."""
    lines = ["Your tests were rejected by the control matrix:"]
    lines += [f"- {line}" for line in _finding_lines(validation)]
    lines += [f"- {line}" for line in survivors(validation)]
    oracle = validation.controls.get(Control.ORACLE)
    failing = oracle.runs[0].failing if oracle is not None and oracle.runs else ()
    if failing:
        lines.append(f"- these tests fail on the reference solution: {', '.join(failing)}")
    lines.append("Answer with the complete corrected test files in the same format.")
    return "\n".join(lines)
