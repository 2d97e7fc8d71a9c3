"""The teacher loop: ask for hidden tests, prove them with the control matrix, retry with what
survived.

Round n writes the teacher's test files into the task's ``tests/`` folder, points the verifier
at them (the command of the task's :class:`~trajforge.protocols.Language`: pytest, or the
package's own vitest / jest / mocha / ``bun test`` / ``node --test``) and runs the existing control
matrix (validation's ``prove``, handed in: the teacher never calls the judge by name). A
rejection the teacher can fix (tests that pass on the stub, the empty or starting workspace,
surviving mutants, tests that fail on the reference) goes back to it (``feedback``: the same
rejection in the same words on every run) for up to
``teacher_rounds`` rounds — unless the starting workspace passed every test of
``KEEPS_BEHAVIOUR_ROUNDS`` rounds running: the change keeps what tests can observe (a refactor,
a de-duplication), so no round more is asked and the task ends ``control_passes`` saying so.
``evidence.teacher`` is ``openai:MODEL`` (as it is ``mined`` for the offline teacher: dataset
versions read it); rounds, tokens, cost and the final verdict go into
``evidence.teacher_loop`` (:class:`~trajforge.records.TeacherLoop`).
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from trajforge.protocols import Language, Prove
from trajforge.records import (
    Control,
    Finding,
    InstructionBrief,
    Outcome,
    Reason,
    Status,
    Task,
    TeacherLoop,
    TeacherRound,
    TeacherUsage,
    Validation,
    WrittenInstruction,
    finding,
)
from trajforge.registry import LANGUAGES
from trajforge.taskdir import HIDDEN_DIR
from trajforge.verifiers.languages import language_named
from trajforge.verifiers.teacher.client import (
    Answer,
    Prices,
    TeacherClient,
    TeacherError,
    parse_spec,
)
from trajforge.verifiers.teacher.feedback import feedback, survivors
from trajforge.verifiers.teacher.prompts import (
    changed_code,
    changed_sources,
    first_prompt,
    instruction_messages,
    parse_answer,
    parse_instruction,
    system,
    task_language,
)
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.files import read_tree, write_tree

log = logging.getLogger(__name__)
_FIXABLE = frozenset(
    {
        Reason.CONTROL_PASSES,
        Reason.WEAK_MUTANT_KILL,
        Reason.ORACLE_FAILS,
        Reason.ORACLE_FLAKY,
        Reason.VERDICT_UNKNOWN,
        Reason.UNSTATED_INTERFACE,
    }
)
"""Rejections the teacher can fix with better tests; any other ends the loop."""
KEEPS_BEHAVIOUR_ROUNDS = 2
"""Rounds running whose tests all pass on the starting workspace that end the loop."""


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
                findings=validation.findings,
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


def _unsuitable(
    task: Task, workspace: dict[str, str], oracle: dict[str, str]
) -> tuple[Language | None, Finding | None]:
    """The task's language, or why the teacher cannot write its tests."""
    if not task.oracle:
        text = "teacher: no oracle: nothing to derive an interface contract from"
        return None, finding(Reason.TEACHER_UNSUITABLE, text)
    language = task_language(workspace, oracle)
    changed = sorted(changed_code(workspace, oracle))
    if not changed:
        tests = sorted(p for p, text in oracle.items() if workspace.get(p) != text)
        shown = ", ".join(tests[:4]) + (" …" if len(tests) > 4 else "")
        text = f"teacher: the episode changed only tests ({shown or 'nothing'}): no code to test"
        return None, finding(Reason.TEACHER_UNSUITABLE, text)
    if language is None:
        shown = ", ".join(changed[:4]) + (" …" if len(changed) > 4 else "")
        langs = ", ".join(LANGUAGES)
        text = f"teacher: no source in a language it tests ({langs}) was changed: {shown}"
        return None, finding(Reason.UNSUPPORTED_LANGUAGE, text)
    if not changed_sources(language, workspace, oracle):
        return None, finding(Reason.TEACHER_UNSUITABLE, "teacher: no source changed")
    return language, None


def _with_tests(
    task: Task, hidden: dict[str, str], language: Language, files: Mapping[str, str]
) -> Task:
    names = tuple(sorted(hidden))
    command = language.test_command(names, files)
    verifier = task.verifier.model_copy(
        update={"kind": "tests", "tests": names, "command": command}
    )
    return task.model_copy(update={"verifier": verifier})


def _install(task_dir: Path, hidden: dict[str, str]) -> None:
    staging = write_tree(task_dir / f".{HIDDEN_DIR}.staging", hidden)
    shutil.rmtree(task_dir / HIDDEN_DIR, ignore_errors=True)
    staging.rename(task_dir / HIDDEN_DIR)


def _fixable(validation: Validation) -> bool:
    return validation.status in (Status.REJECTED, Status.TIMEOUT) and bool(
        _FIXABLE.intersection(validation.codes)
    )


@dataclass(frozen=True)
class _Asking:
    """One task's conversation with the teacher: its client, its record and the round limit."""

    client: TeacherClient
    record: Record
    rounds: int
    language: Language = field(default_factory=lambda: language_named("python"))
    """The language of the task's changed source: its tests, runner and answer format."""
    files: Mapping[str, str] = field(default_factory=dict)
    """The oracle's files (its manifests tell the runner)."""


def teach(task_dir: Path, task: Task, prove: Prove, asking: _Asking) -> tuple[Task, Validation]:
    """Hidden tests for one task from the teacher; the task (new verifier) and its validation."""
    record, model = asking.record, asking.client.model
    workspace = read_tree(task_dir / task.workspace)
    oracle = read_tree(task_dir / task.oracle) if task.oracle else {}
    language, problem = _unsuitable(task, workspace, oracle)
    if problem is not None or language is None:
        rejected = Validation(status=Status.REJECTED, findings=(problem,) if problem else ())
        return task, _stamp(rejected, record)
    prompt = first_prompt(task, workspace, oracle)
    system_text = system(language)
    messages = [{"role": "system", "content": system_text}, {"role": "user", "content": prompt}]
    try:
        speaking = replace(asking, language=language, files=oracle)
        return _rounds(task_dir, task, prove, speaking, messages)
    except TeacherError as exc:
        failed = finding(Reason.TEACHER_FAILED, f"teacher boundary (openai:{model}): {exc}")
        return task, _stamp(Validation(status=Status.ERROR, findings=(failed,)), record)


def _rounds(
    task_dir: Path, task: Task, prove: Prove, asking: _Asking, messages: list[dict[str, str]]
) -> tuple[Task, Validation]:
    none_ran = finding(Reason.TEACHER_FAILED, "teacher: no round ran")
    validation = Validation(status=Status.REJECTED, findings=(none_ran,))
    current = task
    start_passed = 0
    for _ in range(asking.rounds):
        answer = asking.client.ask(messages)
        hidden, problems = parse_answer(answer.text, asking.language)
        if problems or not hidden:
            unusable = tuple(finding(Reason.TEACHER_FAILED, f"teacher: {p}") for p in problems)
            validation = Validation(status=Status.REJECTED, findings=unusable)
            asking.record.add(answer, validation, [], [])
            reply = "\n".join(["Your answer could not be used:", *problems])
        else:
            _install(task_dir, hidden)
            current = _with_tests(task, hidden, asking.language, asking.files)
            validation = prove(current, hidden)
            lost = survivors(validation)
            asking.record.add(answer, validation, lost, sorted(hidden))
            if validation.accepted or not _fixable(validation):
                break
            start_passed = start_passed + 1 if _start_passes(validation) else 0
            if start_passed >= KEEPS_BEHAVIOUR_ROUNDS:
                validation = _keeps_behaviour(validation, start_passed)
                break
            reply = feedback(validation)
        messages = [
            *messages,
            {"role": "assistant", "content": answer.text},
            {"role": "user", "content": reply},
        ]
    return current, _stamp(validation, asking.record)


def _start_passes(validation: Validation) -> bool:
    """The starting workspace (or the pre-fix one) passed the whole check."""
    starts = [c for c in validation.controls.values() if c.control in _STARTS]
    return bool(starts) and all(c.result == Outcome.PASS for c in starts)


_STARTS = frozenset({Control.START, Control.PREFIX})


def _keeps_behaviour(validation: Validation, rounds: int) -> Validation:
    text = (
        f"{Reason.CONTROL_PASSES}: the starting workspace passed every test of {rounds} rounds "
        "running: the change keeps what tests can observe (a refactor?), so no round more was "
        "asked"
    )
    found = (*validation.findings, finding(Reason.CONTROL_PASSES, text))
    return validation.model_copy(update={"findings": found})


def _noted(validation: Validation, note: str) -> Validation:
    notes = (*validation.evidence.notes, note)
    return validation.model_copy(
        update={"evidence": validation.evidence.model_copy(update={"notes": notes})}
    )


def _stamp(validation: Validation, record: Record) -> Validation:
    evidence = validation.evidence.model_copy(
        update={
            "teacher": f"openai:{record.model}",
            "teacher_loop": record.evidence(validation.status),
        }
    )
    found = validation.findings
    if record.rounds and validation.status != Status.ERROR:
        reason = Reason.PROVEN if validation.accepted else Reason.TEACHER_FAILED
        text = f"teacher openai:{record.model}: {len(record.rounds)} round(s)"
        found = (*found, finding(reason, text))
    return validation.model_copy(update={"evidence": evidence, "findings": found})


class OpenAITeacher:
    """``openai:MODEL``: build / extend / repair tests written by a model, proven by the
    control matrix, retried with what survived; also writes accepted tasks' instructions."""

    def __init__(self, client: TeacherClient, prices: Prices, rounds: int) -> None:
        self.client = client
        self.prices = prices
        self.rounds = rounds
        self.name = f"openai:{client.model}"
        self.writes_tests = True

    @classmethod
    def from_spec(cls, name: str, cfg: ValidateConfig, out_dir: Path) -> OpenAITeacher:
        """``openai:MODEL``: a client on this process's ``OPENAI_*`` environment, its answer
        cache under ``out_dir``, the prices and limits of ``cfg``."""
        model = parse_spec(name)
        timeout, concurrency = cfg.teacher_timeout_s, cfg.teacher_concurrency
        client = TeacherClient(model, dict(os.environ), out_dir, timeout, concurrency)
        prices = Prices(cfg.teacher_usd_per_mtok_in, cfg.teacher_usd_per_mtok_out)
        return cls(client, prices, cfg.teacher_rounds)

    def hidden_tests(self, task_dir: Path, task: Task, prove: Prove) -> tuple[Task, Validation]:
        """Ask → prove → feed back, for up to ``rounds`` rounds; a repair that the session's
        own recorded check proves (it failed, then passed: pi-mono's ``npm run check``) keeps
        that check and asks nothing — a type error fixed leaves no behaviour a test could
        tell apart, and the session's check is the repair's own evidence."""
        why = ""
        if task.family == "repair" and task.verifier.kind == "command" and task.verifier.command:
            own = prove(task, {})
            if own.accepted:
                return task, _noted(
                    own, "the session's own check proves the repair: no teacher asked"
                )
            why = (
                f"the session's own check did not prove the repair ({'; '.join(own.reasons)[:500]})"
            )
        asking = _Asking(self.client, Record(self.client.model, self.prices), self.rounds)
        task, validation = teach(task_dir, task, prove, asking)
        return task, _noted(validation, why) if why else validation

    def write_instruction(self, brief: InstructionBrief) -> WrittenInstruction:
        """The agent-facing instruction, from the request, interface and what must not leak."""
        answer = self.client.ask(instruction_messages(brief))
        usage = Record(self.client.model, self.prices).usage(answer)
        return WrittenInstruction(text=parse_instruction(answer.text), usage=usage)
