"""The teacher loop: ask for hidden tests, prove them with the control matrix, retry with what
survived.

Round n writes the teacher's test files into the task's ``tests/`` folder, points the verifier
at them (``python3 -m pytest -q -p no:cacheprovider FILES``) and runs the existing control
matrix. A rejection the teacher can fix (tests that pass on the stub, the empty or starting
workspace, surviving mutants, tests that fail on the reference) goes back to it, verbatim,
for up to ``teacher_rounds`` rounds. ``validation.evidence["teacher"]`` is ``openai:MODEL`` (a
string, as for ``mined``: dataset versions read it); rounds, tokens, cost and the final verdict
go into ``validation.evidence["teacher_loop"]``.
"""

from __future__ import annotations

import logging
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from trajforge.records import (
    CODE_FAMILIES,
    Status,
    Task,
    TeacherLoop,
    TeacherRound,
    TeacherUsage,
    Validation,
)
from trajforge.verifiers.teacher.client import Answer, Prices, TeacherClient, TeacherError
from trajforge.verifiers.teacher.prompts import (
    INSTRUCTION_SYSTEM,
    SYSTEM,
    changed_sources,
    first_prompt,
    instruction_prompt,
    parse_answer,
    parse_instruction,
)
from trajforge.verifiers.validate.files import read_tree, write_tree
from trajforge.verifiers.validate.instruction import Brief, Written
from trajforge.verifiers.validate.single import HIDDEN_DIR, Context, judge_task, prepare

log = logging.getLogger(__name__)
HIDDEN_NAME = "test_hidden.py"
FAMILIES = CODE_FAMILIES
_FIXABLE = ("passes", "mutant kill rate", "oracle fails", "oracle flaked", "verdict unknown")


@dataclass
class Record:
    """What the loop did for one task, as stored in the evidence."""

    model: str
    prices: Prices
    rounds: list[TeacherRound] = field(default_factory=list)

    def usage(self, answer: Answer) -> TeacherUsage:
        """Tokens and cost of one answer."""
        return TeacherUsage(
            teacher=f"openai:{self.model}",
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            cached=answer.cached,
            cost_usd=round(self.prices.cost(answer), 6),
        )

    def add(
        self, answer: Answer, validation: Validation, survivors: list[str], tests: list[str]
    ) -> None:
        """One round: its tokens, whether it came from the cache, and its outcome."""
        self.rounds.append(
            TeacherRound(
                round=len(self.rounds) + 1,
                usage=self.usage(answer),
                status=validation.status,
                reasons=validation.reasons,
                survivors=tuple(survivors),
                tests=tuple(tests),
            )
        )

    def evidence(self, verdict: Status) -> TeacherLoop:
        """The ``evidence.teacher_loop`` entry."""
        return TeacherLoop(
            teacher=f"openai:{self.model}",
            rounds=tuple(self.rounds),
            prompt_tokens=sum(r.usage.prompt_tokens for r in self.rounds),
            completion_tokens=sum(r.usage.completion_tokens for r in self.rounds),
            cost_usd=round(sum(r.usage.cost_usd for r in self.rounds), 6),
            verdict=verdict,
        )


def _unsuitable(task: Task, changed: dict[str, str]) -> str | None:
    if not task.oracle:
        return "no oracle: nothing to derive an interface contract from"
    if not changed:
        return "no Python source created or changed by the episode: nothing for pytest to test"
    return None


def _with_tests(task: Task, hidden: dict[str, str]) -> Task:
    names = tuple(sorted(hidden))
    command = "python3 -m pytest -q -p no:cacheprovider " + " ".join(names)
    verifier = task.verifier.model_copy(
        update={"kind": "tests", "tests": names, "command": command}
    )
    return task.model_copy(update={"verifier": verifier})


def _install(task_dir: Path, hidden: dict[str, str]) -> None:
    staging = write_tree(task_dir / f".{HIDDEN_DIR}.staging", hidden)
    shutil.rmtree(task_dir / HIDDEN_DIR, ignore_errors=True)
    staging.rename(task_dir / HIDDEN_DIR)


def survivors(validation: Validation) -> list[str]:
    """Every surviving control, in words the teacher can act on."""
    lines = []
    for name, cell in validation.controls.items():
        if name == "oracle" or cell.result != "pass":
            continue
        tests = cell.runs[0].tests if cell.runs else ()
        passed = [t.name for t in tests if t.outcome == "passed"]
        where = "the stub" if name == "stub" else f"the {name} control"
        lines.append(f"these tests pass on {where}: {', '.join(passed) or 'the whole check'}")
    for item in validation.mutants:
        if item.result == "survived":
            lines.append(f"mutant {item.id} survives: {item.description}")
    return lines


def feedback(validation: Validation) -> str:
    """The follow-up message for a rejected round."""
    lines = ["Your tests were rejected by the control matrix:"]
    lines += [f"- {reason}" for reason in validation.reasons]
    lines += [f"- {line}" for line in survivors(validation)]
    oracle = validation.controls.get("oracle")
    failing = oracle.runs[0].failing if oracle is not None and oracle.runs else ()
    if failing:
        lines.append(f"- these tests fail on the reference solution: {', '.join(failing)}")
    lines.append("Answer with the complete corrected test files in the same format.")
    return "\n".join(lines)


def _fixable(validation: Validation) -> bool:
    return validation.status in ("rejected", "timeout") and any(
        marker in reason for reason in validation.reasons for marker in _FIXABLE
    )


def teach(
    task_dir: Path, task: Task, ctx: Context, client: TeacherClient, prices: Prices
) -> tuple[Task, Validation]:
    """Hidden tests for one task from the teacher; the task (new verifier) and its validation."""
    record = Record(client.model, prices)
    workspace = read_tree(task_dir / task.workspace)
    oracle = read_tree(task_dir / task.oracle) if task.oracle else {}
    problem = _unsuitable(task, changed_sources(task, workspace, oracle))
    if problem:
        rejected = Validation(status=Status.REJECTED, reasons=(f"teacher: {problem}",))
        return task, _stamp(rejected, record)
    prompt = first_prompt(task, workspace, oracle, HIDDEN_NAME)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]
    try:
        return _rounds(task_dir, task, ctx, client, messages, record)
    except TeacherError as exc:
        reason = f"teacher boundary (openai:{client.model}): {exc}"
        return task, _stamp(Validation(status=Status.ERROR, reasons=(reason,)), record)


def _rounds(
    task_dir: Path,
    task: Task,
    ctx: Context,
    client: TeacherClient,
    messages: list[dict[str, str]],
    record: Record,
) -> tuple[Task, Validation]:
    validation = Validation(status=Status.REJECTED, reasons=("teacher: no round ran",))
    current = task
    for _ in range(ctx.config.teacher_rounds):
        answer = client.ask(messages)
        hidden, problems = parse_answer(answer.text)
        if problems or not hidden:
            validation = Validation(
                status=Status.REJECTED, reasons=tuple(f"teacher: {p}" for p in problems)
            )
            record.add(answer, validation, [], [])
            reply = "\n".join(["Your answer could not be used:", *problems])
        else:
            _install(task_dir, hidden)
            current = _with_tests(task, hidden)
            validation = judge_task(task_dir, current, hidden, ctx)
            lost = survivors(validation)
            record.add(answer, validation, lost, sorted(hidden))
            if validation.status == "accepted" or not _fixable(validation):
                break
            reply = feedback(validation)
        messages = [
            *messages,
            {"role": "assistant", "content": answer.text},
            {"role": "user", "content": reply},
        ]
    return current, _stamp(validation, record)


def _stamp(validation: Validation, record: Record) -> Validation:
    evidence = validation.evidence.model_copy(
        update={
            "teacher": f"openai:{record.model}",
            "teacher_loop": record.evidence(validation.status),
        }
    )
    reasons = validation.reasons
    if record.rounds and validation.status != "error":
        reasons = (*reasons, f"teacher openai:{record.model}: {len(record.rounds)} round(s)")
    return validation.model_copy(update={"evidence": evidence, "reasons": reasons})


class Teacher:
    """The ``Context.teach`` hook: build / extend / repair tasks get the teacher's tests;
    other families (qa) keep the offline checks of the mined path. Also the instruction
    writer of accepted tasks (:class:`~trajforge.verifiers.validate.instruction.InstructionWriter`).
    """

    def __init__(self, client: TeacherClient, prices: Prices) -> None:
        self.client = client
        self.prices = prices

    def __call__(self, task_dir: Path, task: Task, ctx: Context) -> tuple[Task, Validation]:
        """Validate one task through the teacher (or the mined path for other families)."""
        if task.family not in FAMILIES:
            task, hidden = prepare(task_dir, task)
            return task, judge_task(task_dir, task, hidden, ctx)
        return teach(task_dir, task, ctx, self.client, self.prices)

    def write_instruction(self, brief: Brief) -> Written:
        """The agent-facing instruction, from the request, interface and what must not leak."""
        messages = [
            {"role": "system", "content": INSTRUCTION_SYSTEM},
            {"role": "user", "content": instruction_prompt(brief)},
        ]
        answer = self.client.ask(messages)
        usage = Record(self.client.model, self.prices).usage(answer)
        return Written(parse_instruction(answer.text), usage)
