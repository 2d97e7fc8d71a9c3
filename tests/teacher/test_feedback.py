"""The teacher's feedback reads the same for the same rejection on every run: the next request's
hash finds its recorded answer again (tests/teacher/keyed_server.py)."""

from __future__ import annotations

import json
from pathlib import Path

from trajforge.records import (
    Control,
    ControlCell,
    MutantRow,
    MutantVerdict,
    Reason,
    Status,
    Validation,
    finding,
)
from trajforge.verifiers.teacher.feedback import feedback, steady

# three runs of one round of extend-8980cce3 (dark-factory), as recorded before the feedback
# was steadied: the same rejection, other wall times
THREE_RUNS = Path(__file__).parents[1] / "fixtures" / "teacher_feedback" / "three_runs.json"


def test_three_recorded_runs_of_one_rejection_read_the_same_once_steady() -> None:
    texts = json.loads(THREE_RUNS.read_text())["runs"]
    assert len(set(texts)) == 3  # as recorded: only the node runner's wall times differ
    steadied = {steady(t) for t in texts}
    assert len(steadied) == 1, steadied
    (text,) = steadied
    assert "ms)" not in text and "duration_ms <t>" in text
    assert "index.hidden.test.ts:358:2" in text  # line numbers and paths are kept
    assert "Node.js v20.20.2" in text  # a version is not a wall time


def test_steady_blanks_wall_times_only() -> None:
    assert steady("Time: 1.25s, took 3 s (12.5ms)") == "Time: <t>, took <t> (<t>)"
    # vitest prints the clock time its run started: a file-move task's feedback held it
    assert steady("   Start at  17:19:33\n") == "   Start at  <t>\n"
    kept = "mutant m3 survives: `3000` → `2999` in core/src/index.ts line 4; 2 fail(s)"
    assert steady(kept) == kept


def _rejected(killed: int, unknown: int) -> Validation:
    rows = [
        MutantRow(id="m1", path="a.ts", line=3, operator="num", description="`1` → `2` in a.ts",
                  result=MutantVerdict.SURVIVED),
        *[MutantRow(id=f"k{n}", path="a.ts", line=5, operator="num", description="k",
                    result=MutantVerdict.KILLED) for n in range(killed)],
        *[MutantRow(id=f"u{n}", path="a.ts", line=5, operator="num", description="u",
                    result=MutantVerdict.UNKNOWN) for n in range(unknown)],
    ]  # fmt: skip
    rate = f"mutant kill rate {killed / (killed + 1):.2f} ({killed}/{killed + 1} killed; "
    found = finding(Reason.WEAK_MUTANT_KILL, f"{rate}{unknown} unknown) < 0.80")
    stub = ControlCell(control=Control.STUB, expect="fail", result="fail")
    return Validation(
        status=Status.REJECTED, findings=(found,), mutants=tuple(rows), controls={"stub": stub}
    )


def test_a_mutant_that_times_out_on_one_run_does_not_change_the_feedback() -> None:
    once, again = feedback(_rejected(3, 0)), feedback(_rejected(2, 1))
    assert once == again
    assert "- mutant m1 survives: `1` → `2` in a.ts" in once
    assert "kill rate" not in once and "k0" not in once and "u0" not in again


def test_the_recorded_later_rounds_ask_in_the_steady_words() -> None:
    """The corpus cassettes' later-round requests were re-keyed to the steady feedback."""
    prompts = Path(__file__).parent / "cassettes" / "real" / "corpus" / "prompts"
    later = 0
    for path in sorted(prompts.glob("*.json")):
        for message in json.loads(path.read_text())["messages"][3:]:
            if message["role"] == "user" and message["content"].startswith("Your tests were"):
                later += 1
                assert steady(message["content"]) == message["content"], path.name
                assert "kill rate" not in message["content"], path.name
    assert later >= 5
