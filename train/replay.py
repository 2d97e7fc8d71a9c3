"""One scripted rollout through a real harness: ``trajforge replay TASK_DIR --harness NAME``.

A run = a fresh temp copy of the task's ``workspace/`` + the harness process + the scripted
model server reached through the guard proxy (rollout id = the API key) + a step budget and a
wall-clock budget. The harness runs on the host in the temp folder (the local sandbox has no
route to a loopback model server); only the task's hidden verifier runs in the sandbox. The
harness's own session log is parsed back with the matching reconstruct format (the loop
closes), and the reward is the verifier's, or 0 when the guard blocked anything.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trajforge.errors import UsageError
from trajforge.guard.engine import bundle_at
from trajforge.guard.profile import profile_from_task
from trajforge.guard.proxy import GuardProxy
from trajforge.protocols import Harness, HarnessRun, Sandbox
from trajforge.records import SCHEMA_VERSION, Session, Task, load_record
from trajforge.registry import FORMATS, HARNESSES, create
from trajforge.train.policy import cheating_actions, episode_actions, script
from trajforge.train.scripted import ScriptedServer
from trajforge.verifiers.validate.verify import verify_files

log = logging.getLogger(__name__)
Policy = Literal["replay", "cheat"]


class ReplayResult(BaseModel):
    """Outcome of one scripted rollout through a real harness."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = SCHEMA_VERSION
    """Version of the record schema."""
    task: str
    """Task id."""
    harness: str
    """Harness registry name."""
    harness_version: str | None
    """Exact version the installed CLI reported."""
    policy: Policy
    """replay: the recorded episode's actions; cheat: the scripted cheating policy."""
    status: Literal["ok", "blocked", "error", "timeout"]
    """ok: ran and was scored; blocked: the guard blocked a call (reward 0); error / timeout."""
    reasons: tuple[str, ...] = ()
    """Why the status is not ok."""
    reward: float
    """Verifier reward, or 0 when anything was blocked or the run failed."""
    verifier_reward: float | None = None
    """What the verifier said about the final workspace (None when it did not run: blocked)."""
    tests: tuple[dict[str, Any], ...] = ()
    """Per-test results of the verifier."""
    scripted_turns: int
    """Turns in the scripted policy (tool-call turns + the final answer)."""
    guard_calls: int
    """Tool calls the guard proxy judged."""
    blocks: tuple[dict[str, Any], ...] = ()
    """Guard block records (rule, reason, tool)."""
    session_log: str | None = None
    """Session log the harness wrote (kept with ``--keep``; otherwise a deleted temp path)."""
    session_tool_calls: int | None = None
    """Tool calls in the harness's session log, parsed back by reconstruct."""
    exit_code: int | None = None
    """Harness exit code."""
    wall_s: float
    """Wall time of the harness process."""
    workspace: str | None = None
    """Final workspace folder (only with ``--keep``)."""
    stderr_tail: str = ""
    """Last harness stderr (scrubbed), for errors."""


class Budget(BaseModel):
    """Step and wall-clock budget of one run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_steps: int = Field(default=50, ge=1)
    """Tool-call turns the scripted policy may take (longer scripts are cut)."""
    timeout_s: float = Field(default=120.0, gt=0)
    """Wall-clock limit of the harness process."""


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


def count_tool_calls(harness: str, log_path: str | None) -> int | None:
    """Tool calls in the harness's own session log (None when there is none or it is unreadable)."""
    if log_path is None or not Path(log_path).exists():
        return None
    fmt = create(FORMATS, harness, "format")
    sessions = [s for s in fmt.parse(Path(log_path)) if isinstance(s, Session)]
    return sum(1 for s in sessions for e in s.events if e.kind == "tool_call")


@contextmanager
def guarded(upstream: str, task_dir: Path, workspace: Path) -> Iterator[tuple[GuardProxy, str]]:
    """A guard proxy in front of ``upstream`` with the task's protected set; yields its URL."""
    proxy = GuardProxy(upstream, bundle_at(None), profile_from_task(task_dir, str(workspace)))
    server = proxy.serve("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _turns(
    harness: Harness, task: Task, task_dir: Path, session: Path | None, policy: Policy, ws: Path
) -> list[dict[str, Any]]:
    if policy == "cheat":
        calls = [harness.tool_call(a, ws) for a in cheating_actions(task, task_dir)]
        return script([calls], "I made the tests pass.")
    actions, answer = episode_actions(
        load_session(task, resolve_session(task, task_dir, session)), task
    )
    return script([[harness.tool_call(a, ws)] for a in actions], answer)


def _score(
    task: Task, task_dir: Path, ws: Path, sandbox: Sandbox, blocked: bool
) -> tuple[float, float | None, tuple[dict[str, Any], ...]]:
    if blocked or task.family == "qa" or task.verifier.command is None:
        return 0.0, None, ()
    result = verify_files(task_dir, task, ws, sandbox)
    verifier_reward = float(result["reward"])
    return (0.0 if blocked else verifier_reward), verifier_reward, tuple(result["tests"])


def _status(run: HarnessRun, blocked: bool) -> tuple[str, tuple[str, ...]]:
    if run.timed_out:
        return "timeout", ("wall-clock budget ran out",)
    if blocked:
        return "blocked", ("the guard blocked a tool call",)
    if run.exit_code != 0:
        return "error", (f"harness exited with {run.exit_code}",)
    if run.session_log is None:
        return "error", ("the harness wrote no session log",)
    return "ok", ()


def replay_task(
    task_dir: Path,
    harness_name: str,
    sandbox: Sandbox,
    policy: Policy = "replay",
    budget: Budget | None = None,
    session: Path | None = None,
    keep: Path | None = None,
) -> ReplayResult:
    """Run the scripted ``policy`` for the task through the real harness; score the result."""
    budget = budget or Budget()
    task = load_record(Task, task_dir / "task.json")
    harness: Harness = create(HARNESSES, harness_name, "harness")
    version = harness.version()
    if version is None:
        raise UsageError(f"{harness_name} CLI not installed: run `trajforge harness install`")
    with tempfile.TemporaryDirectory(prefix=f"trajforge-{harness_name}-") as tmp:
        root = Path(keep or tmp).resolve()
        ws = root / "workspace"
        shutil.copytree(task_dir / task.workspace, ws)
        turns = _turns(harness, task, task_dir, session, policy, ws)
        if len(turns) - 1 > budget.max_steps:
            turns = turns[: budget.max_steps] + turns[-1:]
        rollout = f"rollout-{uuid.uuid4().hex[:12]}"
        with (
            ScriptedServer(turns) as server,
            guarded(server.base_url, task_dir, ws) as (proxy, url),
        ):
            start = time.monotonic()
            run = harness.run(task.instruction, ws, url, rollout, budget.timeout_s)
            wall = time.monotonic() - start
            state = proxy.rollouts[rollout].status() if rollout in proxy.rollouts else {}
        blocked = bool(state.get("blocked"))
        status, reasons = _status(run, blocked)
        reward, verifier_reward, tests = _score(task, task_dir, ws, sandbox, blocked)
        if status in ("error", "timeout"):
            reward = 0.0
        return ReplayResult(
            task=task.id,
            harness=harness_name,
            harness_version=version,
            policy=policy,
            status=status,  # type: ignore[arg-type]
            reasons=reasons,
            reward=reward,
            verifier_reward=verifier_reward,
            tests=tests,
            scripted_turns=len(turns),
            guard_calls=int(state.get("calls", 0)),
            blocks=tuple(state.get("blocks", ())),
            session_log=run.session_log,
            session_tool_calls=count_tool_calls(harness_name, run.session_log),
            exit_code=run.exit_code,
            wall_s=round(wall, 3),
            workspace=str(ws) if keep else None,
            stderr_tail=run.stderr_tail,
        )
