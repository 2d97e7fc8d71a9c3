"""`trajforge validate --teacher` on the Lark sheet's shape: the reference pushes its result
through a command-line program the task never names, and the teacher's tests mock
``subprocess.run`` and check that program's sub-commands. The round is rejected as
``unstated_interface`` before anything runs, naming what only the reference used."""

from __future__ import annotations

import json
from pathlib import Path

from tests.teacher.server import Cassettes, serve
from tests.teacher.test_teacher import FAST, MODEL, _task, cli
from trajforge.records import Reason

PUBLISH = '''

def publish(xs):
    """Send the mean to the team's dashboard."""
    import subprocess

    subprocess.run(["statsd-cli", "gauge", "+mean", str(mean(xs))], check=True)
'''
MOCKED = """```python file=test_hidden.py
from unittest import mock

from stats import mean, median, publish


def test_mean_and_median():
    assert mean([1, 2, 3, 4]) == 2.5
    assert median([3, 1, 2]) == 2


def test_publish_sends_the_mean():
    with mock.patch("subprocess.run") as run:
        publish([1, 2, 3])
    assert run.call_args.args[0] == ["statsd-cli", "gauge", "+mean", "2.0"]
```
"""


def _answer(content: str) -> dict[str, object]:
    message = {"role": "assistant", "content": content}
    usage = {"prompt_tokens": 900, "completion_tokens": 120, "total_tokens": 1020}
    return {
        "id": "chatcmpl-unstated-1",
        "object": "chat.completion",
        "created": 1764740000,
        "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": usage,
    }


def test_tests_mocking_a_cli_the_task_never_names_are_rejected(out: Path) -> None:
    task_dir, _ = _task(out)
    oracle = task_dir / "oracle" / "stats.py"
    oracle.write_text(oracle.read_text() + PUBLISH)
    state = Cassettes([_answer(MOCKED)])
    rounds = ("--set", "teacher_rounds=1")
    with serve(state) as url:
        result = cli(
            "validate", str(out), "--teacher", MODEL, *FAST, *rounds, "--json", base_url=url
        )
    assert result.returncode == 0, result.stderr
    _, task = _task(out)
    assert task.validation.status == "rejected"
    assert Reason.UNSTATED_INTERFACE in task.validation.codes, task.validation.reasons
    (why,) = [f.detail for f in task.validation.findings if f.reason == Reason.UNSTATED_INTERFACE]
    assert "`statsd-cli`" in why and "`+mean`" in why and 'patch("subprocess.run")' in why
    assert len(state.requests) == 1 and not task.validation.controls  # nothing ran
    loop = task.validation.evidence.teacher_loop
    assert loop is not None and len(loop.rounds) == 1
    assert Reason.UNSTATED_INTERFACE in {f.reason for f in loop.rounds[0].findings}
    assert json.loads(result.stdout)["tasks"][0]["codes"][0] == "unstated_interface"
