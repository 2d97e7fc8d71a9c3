"""The agent-facing instruction of an accepted task: the session's request plus the interface
the hidden tests use, with nothing that leaks the tests.

Called once per validated task (:func:`finalise`, from the run loop). For an accepted
build / extend / repair task, the hidden tests are read and resolved against the oracle
(:mod:`.interface`, :mod:`.interface_js`) into an ``## Interface`` section of files, modules
and signatures; a task checked by a recorded command states that command instead, when every
file it names is in the starting workspace. A teacher (``--teacher openai:MODEL``) writes
the instruction instead whenever there is a section or hidden tests to read (tests that load no
module have no section, yet rely on what the request may leave open); its text must name every
interface entry and leak nothing, else it is asked once more, told what was wrong. When no
usable text comes, a task whose hidden tests the teacher wrote is rejected (``teacher_failed``:
its tests may rely on what only such an instruction states); one checked by the session's own
tests gets the offline text, the reason recorded.
Every line of the result goes through :func:`~.leaks.drop_leaks`. ``Task.request`` keeps the
session's request; qa / data tasks and tasks not accepted keep (or get back) the request as
their instruction.
"""

from __future__ import annotations

import logging
import re
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

from trajforge.errors import TrajforgeError
from trajforge.protocols import Teacher
from trajforge.records import (
    ANSWER_FAMILIES,
    InstructionBrief,
    InstructionEvidence,
    Reason,
    Status,
    Task,
    TeacherUsage,
    Validation,
    finding,
)
from trajforge.taskdir import HIDDEN_DIR
from trajforge.verifiers.validate.derived_file import FILE_NAME as DERIVED_FILE
from trajforge.verifiers.validate.interface import Module, python_modules
from trajforge.verifiers.validate.interface_js import js_modules
from trajforge.verifiers.validate.leaks import drop_leaks, forbidden, leaks, mentions

log = logging.getLogger(__name__)
REWRITE_VERSION = 5
"""Bumped when the rewrite changes (2: an ordered list's numbers are no leak; 3: the writer
reads the hidden tests, to state what they rely on that the request leaves open; 4: asked
for tests that load no module too; 5: an unusable answer is asked for again, and tests the
teacher wrote without a usable instruction reject the task): part of every validation cache
key."""
_NAME = re.compile(r"^(?:async def|def|class|function|const|exports\.)\s*([A-Za-z_$][\w$]*)")
_PATHISH = re.compile(r"[/\\]|\.(py|js|ts|mjs|cjs|jsx|tsx|sh|toml|cfg|ini|json)$")


class _Tree:
    """A task folder's file listing, read lazily."""

    def __init__(self, root: Path) -> None:
        self.root = root
        files = root.rglob("*") if root.is_dir() else iter(())
        self.paths = frozenset(
            p.relative_to(root).as_posix() for p in files if p.is_file() and not p.is_symlink()
        )

    def read(self, path: str) -> str | None:
        if path not in self.paths:
            return None
        return (self.root / path).read_text(encoding="utf-8", errors="surrogateescape")


def hidden_tests(task_dir: Path, task: Task) -> dict[str, str]:
    """The task's hidden test files (``tests/``) by path, without the tests derived from the
    oracle (they call what the other tests, the instruction or the session already called)."""
    if task.verifier.kind != "tests":
        return {}
    tree = _Tree(task_dir / HIDDEN_DIR)
    names = [p for p in task.verifier.tests if p.rsplit("/", 1)[-1] != DERIVED_FILE]
    found = {p: tree.read(p) for p in names}
    return {p: t for p, t in found.items() if t is not None}


def _module_lines(module: Module) -> list[str]:
    head = f"- `{module.path}`"
    if module.path.endswith(".py"):
        head += f" (module `{module.name}`)"
    lines = [head]
    for line in module.lines:
        depth = (len(line) - len(line.lstrip(" "))) // 2
        entry = line.strip()
        shown = f"attribute `{entry[10:]}`" if entry.startswith("attribute ") else f"`{entry}`"
        lines.append("  " * (depth + 1) + f"- {shown}")
    return lines


def _command_line(task: Task, workspace: frozenset[str]) -> tuple[list[str], str | None]:
    """The command that must pass, when every file it names is visible; else why not."""
    command = (task.verifier.command or "").strip()
    if task.verifier.kind != "command" or not command:
        return [], None
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    for word in words[1:]:
        path = word.split("::")[0].removeprefix("./").rstrip("/")
        if word.startswith("-") or not _PATHISH.search(path):
            continue
        if path not in workspace and not any(p.startswith(path + "/") for p in workspace):
            return [], f"command not stated: it names {path}, not in the starting workspace"
    return [f"`{command}` must pass (run from the workspace root)."], None


def interface_section(task_dir: Path, task: Task, hidden: dict[str, str]) -> tuple[str, list[str]]:
    """The ``## Interface`` section ('' when nothing is known) and notes for the evidence."""
    oracle = _Tree(task_dir / task.oracle) if task.oracle else _Tree(task_dir / task.workspace)
    modules = python_modules(hidden, oracle.read, oracle.paths)
    modules += js_modules(hidden, oracle.read, oracle.paths)
    body: list[str] = []
    notes: list[str] = []
    if modules:
        body.append("Your work is checked through this interface; keep these names and signatures:")
        body.append("")
        for module in modules:
            body += _module_lines(module)
    elif not hidden:
        body, note = _command_line(task, _Tree(task_dir / task.workspace).paths)
        notes += [note] if note else []
    if hidden and not modules:
        notes.append("no oracle module resolved from the hidden tests' imports")
    return ("## Interface\n\n" + "\n".join(body) if body else ""), notes


def required_names(section: str) -> tuple[str, ...]:
    """Top-level names the interface section lists (a writer must state each)."""
    found = []
    for line in section.splitlines():
        if line.startswith("  - `"):
            match = _NAME.match(line.strip()[3:])
            found.append(match.group(1) if match else line.strip()[3:].strip("`"))
    return tuple(dict.fromkeys(found))


def _restored(task: Task) -> Task:
    if task.request is None:
        return task
    return task.model_copy(update={"instruction": task.request, "request": None})


WRITER_ASKS = 2
"""Asks for a teacher's instruction: the second is told why the first could not be used."""


@dataclass(frozen=True)
class _Written:
    """What asking the teacher for the instruction came to."""

    text: str | None = None
    """Its text, when usable."""
    teacher: TeacherUsage | None = None
    """The calls that wrote it (None: an offline teacher, or the call failed)."""
    fallback: str = ""
    """Why its text was not used."""
    problem: str = ""
    """Why there is no usable text, in words (told to the writer when it is asked again)."""
    retried: str = ""
    """Why the first answer was not used, when a second was asked."""
    answer: str = ""
    """The teacher's text as it came (shown back to it when it is asked again)."""


def _summed(a: TeacherUsage | None, b: TeacherUsage | None) -> TeacherUsage | None:
    if a is None or b is None:
        return b or a
    return b.model_copy(
        update={
            "prompt_tokens": a.prompt_tokens + b.prompt_tokens,
            "completion_tokens": a.completion_tokens + b.completion_tokens,
            "cost_usd": a.cost_usd + b.cost_usd,
            "cached": a.cached and b.cached,
        }
    )


def _by_writer(teacher: Teacher, brief: InstructionBrief) -> _Written:
    """The teacher's text when it is usable, else the reason it is not; an unusable answer
    (a leak, the interface omitted) is asked for once more, told what was wrong."""
    written = _asked(teacher, brief)
    for _ in range(WRITER_ASKS - 1):
        if not written.problem or written.teacher is None:  # usable, or no answer came
            return written
        told = {"previous": written.answer, "retry": written.problem}
        again = _asked(teacher, brief.model_copy(update=told))
        usage = _summed(written.teacher, again.teacher)
        written = replace(again, teacher=usage, retried=written.problem)
    return written


def _asked(teacher: Teacher, brief: InstructionBrief) -> _Written:
    try:
        written = teacher.write_instruction(brief)
    except TrajforgeError as exc:
        failed = f"teacher failed, offline rewrite used: {exc}"
        return _Written(fallback=failed, problem=f"The teacher failed: {exc}.")
    if written is None:  # an offline teacher: nothing to check
        return _Written()
    found = leaks(written.text, brief.forbidden)
    missing = [n for n in brief.required if not mentions(written.text, n)]
    if found:
        reason = "teacher instruction leaks, offline rewrite used: " + "; ".join(found)
        told = "It gives away what the hidden tests check: " + "; ".join(found) + "."
        return _Written(teacher=written.usage, fallback=reason, problem=told, answer=written.text)
    if missing or not written.text.strip():
        what = ", ".join(missing) or "everything"
        reason = f"teacher instruction omits the interface ({what}), offline used"
        told = f"It does not state the interface: {what}."
        return _Written(teacher=written.usage, fallback=reason, problem=told, answer=written.text)
    return _Written(written.text.strip(), written.usage)


def _with_info(task: Task, info: InstructionEvidence) -> Validation:
    evidence = task.validation.evidence.model_copy(update={"instruction": info})
    return task.validation.model_copy(update={"evidence": evidence})


def finalise(task_dir: Path, task: Task, teacher: Teacher) -> Task:
    """The task with its agent-facing instruction for its (final) validation; never raises
    for unreadable task files (the request is kept and the reason recorded)."""
    if task.validation.status != Status.ACCEPTED or task.family in ANSWER_FAMILIES:
        return _restored(task)
    try:
        return _rewrite(task_dir, task, teacher)
    except (OSError, ValueError, RecursionError) as exc:
        log.warning("task %s: instruction not rewritten", task.id, exc_info=True)
        info = InstructionEvidence(
            version=REWRITE_VERSION, rewrite="none", error=f"{type(exc).__name__}: {exc}"
        )
        restored = _restored(task)
        return restored.model_copy(update={"validation": _with_info(restored, info)})


def _rewrite(task_dir: Path, task: Task, teacher: Teacher) -> Task:
    request = task.request if task.request is not None else task.instruction
    hidden = hidden_tests(task_dir, task)
    section, notes = interface_section(task_dir, task, hidden)
    items = forbidden(hidden, f"{request}\n{section}")  # a suite named after its class is no leak
    written = _Written()
    if hidden:  # a writer who reads the tests can state what they rely on (a recorded
        # check's task keeps the offline rewrite: the request and the command that must pass)
        brief = InstructionBrief(
            family=task.family,
            request=request,
            interface=section,
            required=required_names(section),
            forbidden=items,
            tests=hidden,
        )
        written = _by_writer(teacher, brief)
        if written.problem and _teachers_tests(task):
            return _unwritten(task, written, WRITER_ASKS if written.retried else 1)
    text = written.text
    dropped: list[str] = []
    if text is None:
        offline = f"{request.rstrip()}\n\n{section}\n" if section else request
        kept, dropped = drop_leaks(offline, items)
        text = kept.rstrip() + "\n" if dropped else offline
    info = InstructionEvidence(
        version=REWRITE_VERSION,
        rewrite="none" if text == request else "offline" if written.text is None else "teacher",
        notes=tuple(notes),
        interface=tuple(section.splitlines()[2:]),
        dropped=tuple(dropped),
        teacher=written.teacher,
        fallback=written.fallback,
        retried=written.retried,
    )
    validation = _with_info(task, info)
    return task.model_copy(
        update={
            "instruction": text,
            "request": request if text != request else None,
            "validation": validation,
        }
    )


def _teachers_tests(task: Task) -> bool:
    """The hidden tests are the teacher's (its loop wrote them), not the session's."""
    loop = task.validation.evidence.teacher_loop
    return loop is not None and bool(loop.rounds)


def _unwritten(task: Task, written: _Written, asks: int) -> Task:
    """Rejected: the teacher's tests rely on what the request may leave open, and only an
    instruction written from them states it; the offline text (request + interface) is not
    enough to be a task a solver can pass."""
    detail = (
        "no usable instruction for the teacher's hidden tests (they may rely on what the request"
        f" leaves open) after {asks} ask(s): {written.problem.rstrip('.')}"
    )
    kept = tuple(f for f in task.validation.findings if f.reason != Reason.PROVEN)
    evidence = task.validation.evidence
    loop = evidence.teacher_loop
    info = InstructionEvidence(
        version=REWRITE_VERSION,
        rewrite="none",
        teacher=written.teacher,
        fallback=written.problem,  # no offline text was used either
        retried=written.retried,
    )
    update = {
        "instruction": info,
        "teacher_loop": loop.model_copy(update={"verdict": Status.REJECTED}) if loop else None,
    }
    validation = task.validation.model_copy(
        update={
            "status": Status.REJECTED,
            "findings": (*kept, finding(Reason.TEACHER_FAILED, detail)),
            "evidence": evidence.model_copy(update=update),
        }
    )
    return _restored(task).model_copy(update={"validation": validation})
