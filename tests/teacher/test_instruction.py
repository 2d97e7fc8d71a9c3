"""The teacher's instruction rewrite, end to end: the real CLI and `openai` client against the
local cassette server. An accepted rewrite becomes the instruction; one that leaks an expected
value of the hidden tests falls back to the offline rewrite, with the reason recorded."""

from __future__ import annotations

from pathlib import Path

from tests.teacher.server import Cassettes, load, serve
from tests.teacher.test_teacher import FAST, MODEL, _task, _user_text, cli
from trajforge.verifiers.validate.leaks import forbidden, mentions

REQUEST = (
    "Create a Python module stats.py with mean(xs) and median(xs) for non-empty lists, plus "
    "pytest tests in test_stats.py, and run the tests."
)
ROUNDS = ("stats_round2_behavioural",)  # accepted at once (the retry loop: test_teacher.py)


def _answer(name: str) -> str:
    return str(load(name)[0]["choices"][0]["message"]["content"])  # type: ignore[index]


def test_teacher_instruction_is_used_when_it_leaks_nothing(out: Path) -> None:
    state = Cassettes(load(*ROUNDS, "stats_instruction_ok"))
    with serve(state) as url:
        result = cli("validate", str(out), "--teacher", MODEL, *FAST, "--json", base_url=url)
    assert result.returncode == 0, result.stderr
    task_dir, task = _task(out)
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


def test_teacher_instruction_that_leaks_falls_back_to_offline(out: Path) -> None:
    state = Cassettes(load(*ROUNDS, "stats_instruction_leak"))
    with serve(state) as url:
        result = cli("validate", str(out), "--teacher", MODEL, *FAST, "--json", base_url=url)
    assert result.returncode == 0, result.stderr
    _, task = _task(out)
    assert task.validation.status == "accepted", task.validation.reasons
    assert "median([10, 20])` must be 15" in _answer("stats_instruction_leak")
    info = task.validation.evidence.instruction
    assert info is not None and info.rewrite == "offline"
    assert info.fallback.startswith("teacher instruction leaks, offline rewrite used: ")
    assert "expected value '15'" in info.fallback
    assert task.instruction.startswith(REQUEST + "\n\n## Interface\n")
    assert "  - `def median(xs)`" in task.instruction and "15" not in task.instruction
    assert info.teacher is not None and info.teacher.completion_tokens == 74


def test_teacher_failure_falls_back_to_offline(out: Path) -> None:
    state = Cassettes(load(*ROUNDS))  # nothing left for the instruction: HTTP 404
    with serve(state) as url:
        result = cli("validate", str(out), "--teacher", MODEL, *FAST, "--json", base_url=url)
    assert result.returncode == 0, result.stderr
    _, task = _task(out)
    info = task.validation.evidence.instruction
    assert info is not None and info.rewrite == "offline" and "HTTP 404" in info.fallback
    assert "`def mean(xs)`" in task.instruction
