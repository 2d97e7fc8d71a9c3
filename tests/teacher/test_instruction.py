"""The teacher's instruction rewrite, end to end: the real CLI and `openai` client against the
local cassette server. An accepted rewrite becomes the instruction; one that leaks an expected
value of the hidden tests is asked for again, told why; when no usable one comes, the task —
whose hidden tests the teacher wrote — is rejected, never given the offline text."""

from __future__ import annotations

from pathlib import Path

from tests.teacher.server import Cassettes, load, serve
from tests.teacher.test_teacher import FAST, MODEL, _task, _user_text, cli
from trajforge.records import Reason, Task
from trajforge.verifiers.validate.leaks import forbidden, mentions

REQUEST = (
    "Create a Python module stats.py with mean(xs) and median(xs) for non-empty lists, plus "
    "pytest tests in test_stats.py, and run the tests."
)
ROUNDS = ("stats_round2_behavioural",)  # accepted at once (the retry loop: test_teacher.py)


def _validated(out: Path, *answers: str) -> tuple[Cassettes, Path, Task]:
    """``validate --teacher`` through the CLI, answered by the stats rounds then ``answers``."""
    state = Cassettes(load(*ROUNDS, *answers))
    with serve(state) as url:
        result = cli("validate", str(out), "--teacher", MODEL, *FAST, "--json", base_url=url)
    assert result.returncode == 0, result.stderr
    return (state, *_task(out))


def _answer(name: str) -> str:
    return str(load(name)[0]["choices"][0]["message"]["content"])  # type: ignore[index]


def test_teacher_instruction_is_used_when_it_leaks_nothing(out: Path) -> None:
    state, task_dir, task = _validated(out, "stats_instruction_ok")
    assert task.validation.status == "accepted", task.validation.reasons
    assert task.instruction == _answer("stats_instruction_ok").strip()
    assert task.request == REQUEST
    asked = _user_text(state.requests[1])
    assert REQUEST in asked and "`def mean(xs)`" in asked and "`def median(xs)`" in asked
    assert "expected value: 2.5" in asked and "hidden test: test_median_single" in asked
    info = task.validation.evidence.instruction
    assert info is not None and info.rewrite == "teacher" and not info.fallback
    usage = info.teacher
    assert usage is not None and (usage.prompt_tokens, usage.completion_tokens) == (655, 118)
    assert usage.cached is False and usage.teacher == MODEL
    hidden = {"test_hidden.py": (task_dir / "tests" / "test_hidden.py").read_text()}
    assert not [i for _, i in forbidden(hidden, REQUEST).items() if mentions(task.instruction, i)]


def test_an_instruction_that_leaks_is_asked_for_again_told_why(out: Path) -> None:
    state, _, task = _validated(out, "stats_instruction_leak", "stats_instruction_ok")
    assert task.validation.status == "accepted", task.validation.reasons
    assert "median([10, 20])` must be 15" in _answer("stats_instruction_leak")
    assert task.instruction == _answer("stats_instruction_ok").strip()
    first, again = state.requests[1:]
    # the same conversation, then the answer that leaked and why it could not be used
    assert again["messages"][:2] == first["messages"]
    shown, told = again["messages"][2:]
    assert shown == {"role": "assistant", "content": _answer("stats_instruction_leak").strip()}
    assert told["role"] == "user" and "could not be used" in told["content"]
    assert "expected value '15'" in told["content"]
    info = task.validation.evidence.instruction
    assert info is not None and info.rewrite == "teacher" and not info.fallback
    assert info.retried.startswith("It gives away what the hidden tests check: ")
    assert info.teacher is not None and info.teacher.completion_tokens == 74 + 118  # both asks


def test_an_instruction_that_leaks_twice_rejects_a_task_the_teacher_tested(out: Path) -> None:
    state, _, task = _validated(out, "stats_instruction_leak", "stats_instruction_leak")
    assert task.validation.status == "rejected" and len(state.requests) == 3
    assert task.validation.codes == (Reason.TEACHER_FAILED,)  # nothing left saying "proven"
    (detail,) = task.validation.reasons
    assert detail.startswith("no usable instruction for the teacher's hidden tests")
    assert "after 2 ask(s)" in detail and "expected value '15'" in detail
    assert task.instruction == REQUEST and task.request is None  # never the offline text
    info = task.validation.evidence.instruction
    assert info is not None and info.rewrite == "none" and info.retried
    loop = task.validation.evidence.teacher_loop
    assert loop is not None and loop.verdict == "rejected"


def test_teacher_failure_rejects_a_task_the_teacher_tested(out: Path) -> None:
    state, _, task = _validated(out)  # nothing left for the instruction: HTTP 404
    assert task.validation.status == "rejected" and len(state.requests) == 2  # not asked again
    (detail,) = task.validation.reasons
    assert "after 1 ask(s): The teacher failed: HTTP 404" in detail
    info = task.validation.evidence.instruction
    assert info is not None and info.fallback.startswith("The teacher failed: HTTP 404")
    assert not info.retried
    assert task.instruction == REQUEST
