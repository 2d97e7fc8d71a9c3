"""One scripted rollout through a real harness: ``trajforge replay TASK_DIR --harness NAME``.

The scripted model server (:mod:`trajforge.train.scripted`) plays a policy — the task's
recorded episode (``replay``), the cheating script (``cheat``) or a policy that gives up at
once (``give_up``) — and :func:`trajforge.train.rollout.rollout_in` runs the real harness
against it through the guard proxy and scores the final workspace with the hidden verifier.
The harness's own session log is parsed back with the matching reconstruct format (the loop
closes).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any, Literal

from trajforge.errors import UsageError
from trajforge.protocols import Harness, Sandbox
from trajforge.records import Session, Task
from trajforge.registry import FORMATS, create
from trajforge.taskdir import load_task
from trajforge.train.harnesses.base import RunnableHarness
from trajforge.train.harnesses.sandboxed import WORKSPACE, sandbox_blocker
from trajforge.train.policy import GIVE_UP_ANSWER, cheating_actions, episode_actions, script
from trajforge.train.rollout import Budget, Rollout, load_harness, rollout_in
from trajforge.train.scripted import ScriptedServer

log = logging.getLogger(__name__)
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
        f"{task_dir / 'task.json'}: source.path {task.source.path!r} not found; give --session PATH"
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


HarnessSandbox = Literal["auto", "on", "off"]
"""Where the harness process runs: auto = the local sandbox when usable, else the host."""
ON_HOST: dict[str, bool | None] = {"auto": None, "on": False, "off": True}


def harness_in_sandbox(harness: Harness, on_host: bool | None) -> bool:
    """Whether the harness runs in the local sandbox (see :func:`replay_task`)."""
    if on_host:
        return False
    reason = (
        sandbox_blocker(harness)
        if isinstance(harness, RunnableHarness)
        else f"{harness.name} has no sandbox runner"
    )
    if reason is None:
        return True
    if on_host is False:
        raise UsageError(f"cannot run {harness.name} in the local sandbox: {reason}")
    log.warning("running %s on the host: %s", harness.name, reason)
    return False


def replay_task(
    task_dir: Path,
    harness_name: str,
    sandbox: Sandbox,
    policy: str = "replay",
    budget: Budget | None = None,
    session: Path | None = None,
    keep: Path | None = None,
    harness_on_host: bool | None = None,
) -> Rollout:
    """Run the scripted ``policy`` for the task through the real harness; score the result.

    ``harness_on_host``: True runs the harness on the host, False in the local sandbox (a
    UsageError when it cannot), None (default) in the sandbox when it can, else on the host.
    """
    budget = budget or Budget()
    task = load_task(task_dir)
    harness, version = load_harness(harness_name)
    in_sandbox = harness_in_sandbox(harness, harness_on_host)
    with tempfile.TemporaryDirectory(prefix=f"trajforge-{harness_name}-") as tmp:
        root = Path(keep or tmp).resolve()
        ws = root / "workspace"
        shutil.copytree(task_dir / task.workspace, ws)
        seen = WORKSPACE if in_sandbox else ws
        turns = scripted_turns(harness, task, task_dir, session, policy, seen)
        if len(turns) - 1 > budget.max_steps:
            turns = turns[: budget.max_steps] + turns[-1:]
        with ScriptedServer(turns) as server:
            return rollout_in(
                task_dir,
                task,
                (harness, version),
                sandbox,
                server.base_url,
                policy,
                budget,
                ws,
                None,
                keep is not None,
                policy_turns=len(turns),
                harness_in_sandbox=in_sandbox,
            )
