"""qa tasks: the answer checker against the answer, an empty answer, perturbed answers and the
session's earlier answers; and, when a shell command printed the answer, its re-run in the
sandbox on the starting workspace must print it again."""

from __future__ import annotations

from pathlib import Path

from trajforge.protocols import Limits, Sandbox
from trajforge.records import (
    CellResult,
    Control,
    ControlCell,
    ControlId,
    Expect,
    Finding,
    Outcome,
    Reason,
    Reproduction,
    Task,
    control_map,
    finding,
)
from trajforge.verifiers.answer import (
    AnswerCheck,
    check_answer,
    extract_answer,
    perturbed_answers,
    reproduces,
)
from trajforge.verifiers.answer_facts import check_key
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.history import Episode

MAX_PROBES = 5
PREVIEW = 80


def answer_cell(check: AnswerCheck, expect: Expect, control: ControlId) -> ControlCell:
    """The control cell of one answer the checker was given."""
    result: CellResult = Outcome.PASS if check.passed else Outcome.FAIL
    return ControlCell(
        control=control.control,
        variant=control.variant,
        expect=expect,
        result=result,
        given=check.given[:PREVIEW],
        reason=check.reason,
    )


def _cell(expected: str, given: str, expect: Expect, control: ControlId) -> ControlCell:
    return answer_cell(check_answer(expected, given), expect, control)


def answer_controls(expected: str, episode: Episode | None, seed: int) -> dict[str, ControlCell]:
    """Checker verdicts on the oracle answer and on every wrong answer."""
    cells = [
        _cell(expected, expected, Outcome.PASS, ControlId(Control.ORACLE)),
        _cell(expected, "", Outcome.FAIL, ControlId(Control.EMPTY)),
    ]
    for n, wrong in enumerate(perturbed_answers(expected, seed)):
        cells.append(_cell(expected, wrong, Outcome.FAIL, ControlId(Control.PERTURBED, str(n))))
    if episode is not None:
        earlier = [extract_answer(t) for t in episode.assistant_texts()[:-1]]
        wrong_ones = [a for a in dict.fromkeys(earlier) if a and a != expected][:MAX_PROBES]
        for n, answer in enumerate(wrong_ones):
            cell = _cell(expected, answer, Outcome.FAIL, ControlId(Control.PROBE, str(n)))
            if cell.result == Outcome.FAIL:  # an earlier answer the checker accepts was right
                cells.append(cell)
    return control_map(cells)


def reproduce(
    sandbox: Sandbox, workspace: Path, expected: str, episode: Episode | None, cfg: ValidateConfig
) -> list[Reproduction]:
    """Re-run every recorded shell command whose output carried the answer."""
    if episode is None:
        return []
    commands = [c for c, output in episode.shell_outputs() if reproduces(expected, output)]
    if not commands:
        return []
    rows = []
    with sandbox.session(workspace, Limits(timeout_s=cfg.timeout_s)) as box:
        for command in dict.fromkeys(commands):
            box.reset(workspace)
            run = box.run(command, timeout=cfg.timeout_s)
            ok = run.exit_code == 0 and reproduces(expected, run.stdout)
            rows.append(
                Reproduction(
                    command=command,
                    exit_code=run.exit_code,
                    reproduces=ok,
                    output=run.stdout[-PREVIEW:],
                    wall_s=run.wall_s,
                )
            )
    return rows


def misjudged(controls: dict[str, ControlCell]) -> list[Finding]:
    """A finding for every answer control the checker got wrong."""
    found = []
    for name, cell in controls.items():
        if not cell.ok:
            verb = "rejects" if cell.expect == Outcome.PASS else "accepts"
            text = f"answer checker {verb} {name} answer {cell.given!r}"
            found.append(finding(Reason.ANSWER_MISJUDGED, text))
    return found


def qa_rejections(controls: dict[str, ControlCell], rerun: list[Reproduction]) -> list[Finding]:
    """Rejections (empty: accepted)."""
    found = misjudged(controls)
    if rerun and not any(r.reproduces for r in rerun):
        text = f"answer not reproduced: `{rerun[0].command}` no longer prints it"
        found.append(finding(Reason.ANSWER_NOT_REPRODUCED, text))
    return found


def expected_answer(task: Task) -> str:
    """The answer extracted from the final assistant message ('' when there is none)."""
    return extract_answer(task.answer or "").strip()


def check_task_answer(task: Task, given: str) -> AnswerCheck:
    """The one answer check of a qa or data task, as verify, training and eval use it: the
    task's answer key when it has one (reconstructed qa), else the value checker."""
    if task.answer_key is not None:
        return check_key(task.answer_key, given)
    return check_answer(expected_answer(task), given)
