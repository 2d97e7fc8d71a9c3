"""Score one candidate solution against an accepted task (``trajforge verify``, the training
reward and eval all call these two functions).

Files: the starting workspace, the solution's files laid over it, the hidden tests on top;
then the task's check runs in the sandbox and :func:`~.reward.score` gives the fail-to-pass
reward: 1 when every test that failed on the starting workspace passes and none that passed
there breaks, else 0. Answers (qa, data): the answer checker. Tests dropped as flaky during
validation do not count.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from trajforge.errors import UsageError
from trajforge.protocols import Limits, Sandbox
from trajforge.records import (
    CodeEvidence,
    FailToPass,
    Outcome,
    Task,
    TestOutcome,
    VerifyResult,
    VerifyTest,
)
from trajforge.taskdir import HIDDEN_DIR
from trajforge.verifiers.environments import for_task
from trajforge.verifiers.validate.files import read_tree, write_tree
from trajforge.verifiers.validate.matrix import ControlRunner
from trajforge.verifiers.validate.qa import check_task_answer
from trajforge.verifiers.validate.reward import score
from trajforge.verifiers.validate.runner_files import Screened, TaskView, screen

DEFAULT_TIMEOUT_S = 60.0


def verify_answer(task: Task, answer: str) -> VerifyResult:
    """Reward of an answer to a qa or data-analysis task."""
    if task.family != "qa" and task.verifier.kind != "answer":
        raise UsageError(f"task {task.id} is a {task.family} task: give --files DIR, not --answer")
    check = check_task_answer(task, answer)
    outcome: TestOutcome = Outcome.PASS if check.passed else Outcome.FAIL
    return VerifyResult(
        reward=1.0 if check.passed else 0.0,
        passed=check.passed,
        tests=(VerifyTest(name="answer", outcome=outcome, message=check.reason),),
    )


def verify_files(
    task_dir: Path, task: Task, solution: Path, sandbox: Sandbox, whole: bool = False
) -> VerifyResult:
    """Reward of a solution folder for a build / extend / repair task. ``whole``: the folder is
    the entire final workspace (files of the start it lacks were deleted), not files laid over
    the start."""
    if task.family == "qa" or task.verifier.kind == "answer" or task.verifier.command is None:
        raise UsageError(f"task {task.id} is answered, not built: give --answer TEXT")
    if not solution.is_dir():
        raise UsageError(f"--files {solution}: not a directory")
    screened = screen(task_view(task_dir, task), read_tree(solution), whole)
    if screened.tampering:
        return _tampered(screened)
    sandbox = for_task(task_dir, task, sandbox).sandbox  # its environment, as validation used
    evidence = task.validation.evidence
    code = evidence if isinstance(evidence, CodeEvidence) else CodeEvidence()  # not validated
    dropped = code.dropped_tests
    timeout = code.timeout_s or float(evidence.config.get("timeout_s", DEFAULT_TIMEOUT_S))
    with tempfile.TemporaryDirectory(prefix="trajforge-verify-") as scratch:
        first = write_tree(Path(scratch) / "ws", screened.files)
        memory = int(evidence.config.get("memory_mb", Limits().memory_mb))
        with sandbox.session(first, Limits(timeout_s=timeout, memory_mb=memory)) as box:
            runner = ControlRunner(box, task.verifier.command, Path(scratch), screened.files)
            run = runner.run(screened.files, timeout)
    scored = score(run, code.test_sets, dropped)
    tests = tuple(
        VerifyTest(name=t.name, outcome=t.outcome, message=t.message, counted=t.name not in dropped)
        for t in run.tests
    )
    return VerifyResult(
        reward=scored.reward,
        passed=scored.passed,
        tests=tests,
        fail_to_pass=FailToPass(passed=scored.fixed, of=scored.to_fix),
        broken=scored.broken,
        status=run.status,
        exit_code=run.exit_code,
        detail=run.detail,
        set_aside=screened.set_aside,
    )


def task_view(task_dir: Path, task: Task) -> TaskView:
    """The task's files a solution's check takes its tests and runner files from."""
    hidden = read_tree(task_dir / HIDDEN_DIR) if task.verifier.kind == "tests" else {}
    oracle = read_tree(task_dir / task.oracle) if task.oracle else {}
    start = read_tree(task_dir / task.workspace)
    return TaskView(start=start, oracle=oracle, hidden=hidden, command=task.verifier.command or "")


def _tampered(screened: Screened) -> VerifyResult:
    """Reward 0 without running: the solution's files reach into the check."""
    detail = "the solution reaches into the check: " + "; ".join(screened.tampering)
    return VerifyResult(
        reward=0.0,
        passed=False,
        status=Outcome.ERROR,
        detail=detail,
        set_aside=screened.set_aside,
        tampering=screened.tampering,
    )
