"""One scripted rollout through a real harness: ``trajforge replay TASK_DIR --harness NAME``.

The scripted model server (:mod:`trajforge.train.scripted`) plays a policy — the task's
recorded episode (``replay``), the cheating script (``cheat``) or a policy that gives up at
once (``give_up``) — and :func:`trajforge.train.rollout.rollout_in` runs the run's harness
(a :class:`~trajforge.train.rollout_spec.RolloutSetup`)
against it through the guard proxy and scores the final workspace with the hidden verifier.
The harness's own session log is parsed back with the matching reconstruct format (the loop
closes).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, Literal

from trajforge.errors import UsageError
from trajforge.protocols import Harness
from trajforge.records import Session, Task
from trajforge.registry import FORMATS, create
from trajforge.taskdir import TASK_FILE, load_task
from trajforge.train.harnesses.sandboxed import WORKSPACE
from trajforge.train.policy import GIVE_UP_ANSWER, cheating_actions, episode_actions, script
from trajforge.train.rollout import Budget, Rollout, rollout_in
from trajforge.train.rollout_spec import RolloutSetup, RolloutSpec
from trajforge.train.scripted import ScriptedServer

Policy = Literal["replay", "cheat", "give_up"]
POLICIES: tuple[str, ...] = ("replay", "cheat", "give_up")
ReplayResult = Rollout
__all__ = ["POLICIES", "Budget", "Policy", "ReplayResult", "replay_task", "scripted_turns"]


def resolve_session(task: Task, task_dir: Path, override: Path | None) -> Path:
    """The source session file: ``override``, else ``source.path`` as given or near the task."""
    candidates = [override] if override else []
    raw = Path(task.source.path)
    candidates += [raw, task_dir.parent.parent / raw, task_dir / raw]
    for path in candidates:
        if path is not None and path.exists():
            return path
    raise UsageError(
        f"{task_dir / TASK_FILE}: source.path {task.source.path!r} not found; give --session PATH"
    )


def load_session(task: Task, path: Path) -> Session:
    """The parsed session the task was made from (matched by session id)."""
    fmt = create(FORMATS, task.source.harness, "format")
    sessions = [s for s in fmt.parse(path) if isinstance(s, Session)]
    for session in sessions:
        if session.header.session_id == task.source.session:
            return session
    if len(sessions) == 1:
        return sessions[0]
    raise UsageError(f"{path}: no session {task.source.session!r} in it")


def scripted_turns(
    harness: Harness, task: Task, task_dir: Path, session: Path | None, policy: str, ws: Path
) -> list[dict[str, Any]]:
    """The scripted server's turns for ``policy`` with tool calls in ``harness``'s dialect."""
    if policy == "give_up":
        return script([], GIVE_UP_ANSWER)
    if policy == "cheat":
        calls = [harness.tool_call(a, ws) for a in cheating_actions(task, task_dir)]
        return script([calls], "I made the tests pass.")
    if policy != "replay":
        raise UsageError(f"policy {policy!r}: expected one of {', '.join(POLICIES)}")
    actions, answer = episode_actions(
        load_session(task, resolve_session(task, task_dir, session)), task, task_dir
    )
    return script([[harness.tool_call(a, ws)] for a in actions], answer)


def replay_task(
    setup: RolloutSetup,
    task_dir: Path,
    policy: str = "replay",
    session: Path | None = None,
    keep: Path | None = None,
) -> Rollout:
    """Run the scripted ``policy`` for the task through the run's harness; score the result.

    ``session``: the source session file (default: the task's ``source.path``); ``keep``: a
    new folder to keep the run in. Where the harness runs is the setup's (:func:`setup_for`).
    """
    task = load_task(task_dir)
    max_steps = setup.budget.max_steps
    with tempfile.TemporaryDirectory(prefix=f"trajforge-{setup.harness.name}-") as tmp:
        root = Path(keep or tmp).resolve()
        ws = root / "workspace"
        shutil.copytree(task_dir / task.workspace, ws)
        seen = WORKSPACE if setup.in_sandbox else ws
        turns = scripted_turns(setup.harness, task, task_dir, session, policy, seen)
        if len(turns) - 1 > max_steps:
            turns = turns[:max_steps] + turns[-1:]
        with ScriptedServer(turns) as server:
            spec = RolloutSpec(
                setup, task_dir, task, server.base_url, policy, keep=keep, policy_turns=len(turns)
            )
            return rollout_in(spec, ws)
