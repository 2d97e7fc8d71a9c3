"""k attempts per task per arm through the real harness, the guard proxy and the verifier.

Each attempt becomes one row; an attempt that fails for any reason is a row with status
``error`` and reward None (unscored), never a crash of the run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from trajforge.protocols import Sandbox
from trajforge.records import RolloutStatus
from trajforge.scrub import Scrubber
from trajforge.train.evaluation.arms import ARMS, endpoint
from trajforge.train.evaluation.config import EvalConfig, ModelArm, ScriptedArm
from trajforge.train.evaluation.dataset import EvalTask
from trajforge.train.replay import replay_task
from trajforge.train.rollout import Budget, Rollout, run_rollout
from trajforge.train.rollout_spec import RolloutSetup, setup_for, spec_for

log = logging.getLogger(__name__)
ANSWER_CHARS = 2000
SUCCESS = 1.0
"""Reward that counts as solving the task (every hidden test passed)."""


@dataclass(frozen=True)
class Attempt:
    """What to run: one arm on one task, the n-th time."""

    arm: str
    """``base`` or ``adapter``."""
    task: EvalTask
    """The task."""
    index: int
    """Attempt number (0-based)."""


def arm_label(arm: ScriptedArm | ModelArm) -> str:
    """Short description of what produced the turns."""
    if isinstance(arm, ScriptedArm):
        return f"scripted:{arm.policy}"
    return f"{arm.base_model}+{arm.adapter}" if arm.adapter else arm.base_model


def _identity(attempt: Attempt, label: str) -> dict[str, Any]:
    """The columns that say which attempt a row is (arm, policy, task, family, index)."""
    return {
        "arm": attempt.arm,
        "policy": label,
        "task": attempt.task.id,
        "family": attempt.task.family,
        "attempt": attempt.index,
    }


def row_of(attempt: Attempt, label: str, result: Rollout) -> dict[str, Any]:
    """One results row from a finished rollout."""
    scrub = Scrubber()
    answer = scrub.text((result.answer or "")[:ANSWER_CHARS]) if result.answer else None
    return {
        **_identity(attempt, label),
        "status": result.status,
        "reward": result.reward,
        "verifier_reward": result.verifier_reward,
        "success": None if result.reward is None else result.reward >= SUCCESS,
        "calls": result.guard_calls,
        "session_tool_calls": result.session_tool_calls,
        "blocked": len(result.blocks),
        "block_rules": sorted({str(b.rule) for b in result.blocks}),
        "wall_s": result.wall_s,
        "reasons": list(result.reasons),
        "answer": answer,
        "stderr_tail": result.stderr_tail if result.status == RolloutStatus.ERROR else "",
        "rollout_id": result.rollout_id,
    }


def error_row(attempt: Attempt, label: str, exc: BaseException) -> dict[str, Any]:
    """The row of an attempt that could not run at all."""
    reason = Scrubber().text(f"{type(exc).__name__}: {exc}")
    return {
        **_identity(attempt, label),
        "status": "error",
        "reward": None,
        "verifier_reward": None,
        "success": None,
        "calls": 0,
        "session_tool_calls": None,
        "blocked": 0,
        "block_rules": [],
        "wall_s": 0.0,
        "reasons": [reason],
        "answer": None,
        "stderr_tail": "",
        "rollout_id": f"{attempt.arm}-{attempt.task.id}-{attempt.index}",
    }


def eval_setup(config: EvalConfig, sandbox: Sandbox) -> RolloutSetup:
    """The run's rollout setup: the harness placed as ``harness_sandbox`` says (its version
    asked once), the verifier ``sandbox``, the budget every attempt of both arms gets."""
    budget = Budget(max_steps=config.budget.max_steps, timeout_s=config.budget.timeout_s)
    return setup_for(config.harness, sandbox, budget, config.harness_sandbox)


def run_attempt(
    setup: RolloutSetup, arm: ScriptedArm | ModelArm, upstream: str | None, attempt: Attempt
) -> dict[str, Any]:
    """One attempt as a row; any failure becomes an ``error`` row."""
    label = arm_label(arm)
    folder = attempt.task.folder
    try:
        if isinstance(arm, ScriptedArm):
            result = replay_task(setup, folder, arm.policy)
        else:
            assert upstream is not None
            rollout_id = f"{attempt.arm}-{attempt.task.id}-{attempt.index}"
            result = run_rollout(spec_for(setup, folder, upstream, label, rollout_id))
    except Exception as exc:  # per-attempt resilience: recorded as an error row
        log.warning("attempt %s/%s/%d failed: %s", attempt.arm, attempt.task.id, attempt.index, exc)
        log.debug("attempt failure", exc_info=True)
        return error_row(attempt, label, exc)
    return row_of(attempt, label, result)


def attempts(config: EvalConfig, tasks: tuple[EvalTask, ...], arm: str) -> Iterator[Attempt]:
    """The attempts of one arm, task by task."""
    for task in tasks:
        for index in range(config.k):
            yield Attempt(arm, task, index)


def run_all(
    config: EvalConfig,
    tasks: tuple[EvalTask, ...],
    sandbox: Sandbox,
    on_done: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Every attempt of both arms (base first), as rows."""
    rows: list[dict[str, Any]] = []
    setup = eval_setup(config, sandbox)

    def done(row: dict[str, Any]) -> None:
        rows.append(row)
        if on_done is not None:
            on_done(row)

    for name in ARMS:
        arm = getattr(config.arms, name)
        with ExitStack() as stack:
            try:
                upstream = stack.enter_context(endpoint(arm, config))
            except Exception as exc:  # the arm's model could not be served: every attempt errs
                log.warning("arm %s: no endpoint: %s", name, exc)
                for attempt in attempts(config, tasks, name):
                    done(error_row(attempt, arm_label(arm), exc))
                continue
            for attempt in attempts(config, tasks, name):
                done(run_attempt(setup, arm, upstream, attempt))
    return rows
