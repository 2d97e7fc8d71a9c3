"""`trajforge validate OUT --teacher openai:MODEL` end to end: the real CLI and `openai` client
against a local OpenAI-compatible server replaying recorded responses (cassettes)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.teacher.server import Cassettes, load, serve
from tests.validate.conftest import local_context
from trajforge.reconstruct import pipeline
from trajforge.records import Task, load_record

pytestmark = pytest.mark.slow  # a module fixture validates tasks: dispatched first

KEY = "sk-test-teacher-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
MODEL = "openai:gpt-4.1-mini"
FAST = ("--set", "max_mutants=4", "--set", "oracle_runs=1")


def cli(
    *args: str, base_url: str | None, key: str | None = KEY
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    if base_url is not None:
        env["OPENAI_BASE_URL"] = base_url
    if key is not None:
        env["OPENAI_API_KEY"] = key
    return subprocess.run(
        [sys.executable, "-m", "trajforge.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )


def _task(out: Path) -> tuple[Path, Task]:
    (path,) = out.glob("tasks/*/task.json")
    return path.parent, load_record(Task, path)


def _everything(out: Path, result: subprocess.CompletedProcess[str]) -> str:
    files = [p.read_text() for p in out.rglob("*") if p.is_file()]
    return "\n".join([result.stdout, result.stderr, *files])


def _user_text(request: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in request["messages"] if m["role"] == "user")


def test_retry_loop_rejects_stub_passing_tests_then_accepts(out: Path) -> None:
    state = Cassettes(load("stats_round1_weak", "stats_round2_behavioural", "stats_instruction_ok"))
    with serve(state) as url:
        result = cli("validate", str(out), "--teacher", MODEL, *FAST, "--json", base_url=url)
    assert result.returncode == 0, result.stderr
    task_dir, task = _task(out)
    assert task.validation.status == "accepted", task.validation.reasons
    assert task.verifier.kind == "tests" and task.verifier.tests == ("test_hidden.py",)
    assert "callable" not in (task_dir / "tests" / "test_hidden.py").read_text()
    first, second, instruction = state.requests
    # the instruction's writer reads the accepted tests, to state what they rely on
    written = (task_dir / "tests" / "test_hidden.py").read_text().rstrip()
    assert f"```py file=test_hidden.py\n{written}\n```" in _user_text(instruction)
    assert "never contradict them" in _user_text(instruction)
    assert first["model"] == "gpt-4.1-mini"
    assert "def mean(xs)" in _user_text(first) and "private `_names`" in _user_text(first)
    feedback = second["messages"][-1]["content"]
    assert "these tests pass on the stub: " in feedback and "test_functions_exist" in feedback
    assert second["messages"][-2] == {"role": "assistant", "content": first_answer()}
    assert task.validation.evidence.teacher == MODEL  # a string, as splits reads it
    teacher = task.validation.evidence.teacher_loop
    assert teacher is not None
    assert [r.status for r in teacher.rounds] == ["rejected", "accepted"]
    assert any("stub passes" in r for r in teacher.rounds[0].reasons)
    assert teacher.prompt_tokens == 812 + 1034 and teacher.completion_tokens == 46 + 271
    assert teacher.teacher == MODEL and teacher.verdict == "accepted"
    assert task.validation.controls["stub"].result == "fail"
    assert headers_have_key(state) and KEY not in _everything(out, result)


def first_answer() -> str:
    return str(load("stats_round1_weak")[0]["choices"][0]["message"]["content"])  # type: ignore[index]


def headers_have_key(state: Cassettes) -> bool:
    found = [{k.lower(): v for k, v in h.items()}.get("authorization") for h in state.headers]
    return bool(found) and all(a == f"Bearer {KEY}" for a in found)


def test_rerun_uses_the_cache_and_makes_no_request(out: Path) -> None:
    state = Cassettes(load("stats_round1_weak", "stats_round2_behavioural", "stats_instruction_ok"))
    with serve(state) as url:
        assert cli("validate", str(out), "--teacher", MODEL, *FAST, base_url=url).returncode == 0
        asked = len(state.requests)
        again = cli("validate", str(out), "--teacher", MODEL, *FAST, "--json", base_url=url)
        assert json.loads(again.stdout)["run"] == {"validated": 0, "cached": 1}
        # new settings re-validate the task; the prompts are the same, so answers come from disk
        third = cli(
            "validate", str(out), "--teacher", MODEL, *FAST, "--set", "timeout_s=90", base_url=url
        )
    assert third.returncode == 0, third.stderr
    assert asked == 3 and len(state.requests) == 3  # two test rounds and the instruction
    _, task = _task(out)
    assert task.validation.status == "accepted"
    loop, info = task.validation.evidence.teacher_loop, task.validation.evidence.instruction
    assert loop is not None and all(r.usage.cached for r in loop.rounds)
    assert info is not None and info.teacher is not None and info.teacher.cached is True
    assert list((out / ".teacher-cache").glob("*.json"))


def test_api_error_is_a_task_error_naming_the_teacher(out: Path) -> None:
    state = Cassettes([500])
    with serve(state) as url:
        result = cli("validate", str(out), "--teacher", MODEL, *FAST, "--json", base_url=url)
    assert result.returncode == 1
    _, task = _task(out)
    assert task.validation.status == "error"
    (reason,) = task.validation.reasons
    assert reason.startswith("teacher boundary (openai:gpt-4.1-mini): HTTP 500"), reason
    assert KEY not in _everything(out, result)


@pytest.mark.parametrize(
    ("teacher", "base", "key", "message"),
    [
        ("openai:", "http://127.0.0.1:9/v1", KEY, "expected mined or openai:MODEL"),
        ("gpt", "http://127.0.0.1:9/v1", KEY, "expected mined or openai:MODEL"),
        (MODEL, None, KEY, "needs OPENAI_BASE_URL in the environment"),
        (MODEL, "http://127.0.0.1:9/v1", None, "needs OPENAI_API_KEY in the environment"),
    ],
)
def test_usage_errors_exit_2(
    tmp_path: Path, teacher: str, base: str | None, key: str | None, message: str
) -> None:
    (tmp_path / "tasks").mkdir()
    result = cli("validate", str(tmp_path), "--teacher", teacher, base_url=base, key=key)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def _only(tmp_path: Path, family: str) -> Path:
    """pi's ``FAMILY.jsonl`` fixture reconstructed, its task of that family alone in OUT."""
    local_context()
    out = tmp_path / "out"
    pipeline.run(
        [Path(__file__).parents[1] / "fixtures" / "sessions" / "pi" / f"{family}.jsonl"], out
    )
    for task_dir in [p.parent for p in out.glob("tasks/*/task.json")]:
        if not task_dir.name.startswith(f"{family}-"):
            shutil.rmtree(task_dir)
    return out


def _answer(text: str) -> dict[str, Any]:
    """A chat completion whose message is ``text`` (an answer written for this test)."""
    message = {"role": "assistant", "content": text}
    usage = {"prompt_tokens": 900, "completion_tokens": 60, "total_tokens": 960}
    return {"id": "chatcmpl-keeps", "object": "chat.completion", "created": 1764460900,
            "model": "gpt-4.1-mini", "choices": [{"index": 0, "message": message,
            "finish_reason": "stop"}], "usage": usage}  # fmt: skip


OLD_BEHAVIOUR = """```python file=test_hidden.py
from inventory import Inventory


def test_adding_counts_up():
    inv = Inventory()
    assert inv.add_item("apple", 2) == 2
    assert inv.add_item("apple") == 3
```
"""
"""Tests a capable model might write for a change it takes for a refactor: they hold on the
start as on the reference (pi's extend fixture adds ``remove_item`` to an Inventory that could
already add)."""


def test_tests_that_pass_on_the_start_two_rounds_running_end_the_loop(tmp_path: Path) -> None:
    """A change whose every test passes on the starting workspace, round after round, keeps
    what tests observe (pi-mono's showSelector refactor and de-duplication asked three rounds
    and never told the start apart): after the second such round no third is asked, and the
    task ends control_passes saying so."""
    out = _only(tmp_path, "extend")
    state = Cassettes([_answer(OLD_BEHAVIOUR), _answer(OLD_BEHAVIOUR), _answer(OLD_BEHAVIOUR)])
    with serve(state) as url:
        result = cli("validate", str(out), "--teacher", MODEL, *FAST, "--json", base_url=url)
    assert result.returncode == 0, result.stderr  # a rejection is a verdict, not a failure
    _, task = _task(out)
    assert len(state.requests) == 2  # the third answer is never asked for
    assert task.validation.status == "rejected" and "control_passes" in task.validation.codes
    assert any(
        "passed every test of 2 rounds running: the change keeps what tests can observe" in r
        for r in task.validation.reasons
    ), task.validation.reasons
    loop = task.validation.evidence.teacher_loop
    assert loop is not None and len(loop.rounds) == 2


def test_a_repair_its_own_recorded_check_proves_asks_the_teacher_nothing(tmp_path: Path) -> None:
    """pi-mono's ``npm run check`` repairs (a type error fixed: no behaviour for a test to tell
    apart): the session's check failed, then passed, and proves the repair, so the teacher is
    asked neither for tests nor for the instruction (the offline one states the command)."""
    out = _only(tmp_path, "repair")
    state = Cassettes([])
    with serve(state) as url:
        result = cli("validate", str(out), "--teacher", MODEL, *FAST, "--json", base_url=url)
    assert result.returncode == 0, result.stderr
    _, task = _task(out)
    assert state.requests == []
    assert task.validation.status == "accepted", task.validation.reasons
    assert task.verifier.kind == "command" and task.validation.evidence.teacher_loop is None
    assert "the session's own check proves the repair: no teacher asked" in (
        task.validation.evidence.notes
    )
