"""One rollout through a real harness against any OpenAI-compatible model endpoint.

A rollout = a fresh copy of the task's ``workspace/`` (no hidden tests) + the harness process
+ the model endpoint (``upstream``) reached through the guard proxy (rollout id = the API key)
+ a step budget and a wall-clock budget. When the harness stops or times out, the task's hidden
verifier runs in the sandbox on the final workspace. Used by ``trajforge replay`` (scripted
policies), ``trajforge train`` (the policy server behind the capture proxy) and
``trajforge eval``.

Reward: ``None`` for an infrastructure error (the rollout is unscored), ``0.0`` when the guard
blocked anything, else the verifier's (``trajforge verify``'s own functions): the answer checker
(qa, data) or the fail-to-pass reward (build, extend, repair: 1 when every hidden test that
fails on the starting workspace passes and none that passed there breaks, else 0).
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajforge.errors import SandboxError, UsageError
from trajforge.guard.engine import bundle_at
from trajforge.guard.profile import profile_from_task
from trajforge.protocols import Harness, HarnessRun, Sandbox
from trajforge.records import Session, Task, VerifyTest
from trajforge.registry import FORMATS, HARNESSES, create
from trajforge.taskdir import load_task
from trajforge.train.harnesses.base import HostRunner, RunnableHarness, Runner
from trajforge.train.harnesses.revision import HarnessRevision, RecordingGuardProxy, revision_of
from trajforge.train.harnesses.sandboxed import SandboxRunner, sandbox_blocker
from trajforge.train.rollout_records import Budget, Rollout, Status
from trajforge.verifiers.validate.verify import verify_answer, verify_files

log = logging.getLogger(__name__)
__all__ = ["Budget", "Rollout", "Status", "rollout_in", "run_rollout"]


def parse_log(harness: str, log_path: str | None) -> list[Session]:
    """The harness's own session log parsed back by reconstruct ([] when missing)."""
    if log_path is None or not Path(log_path).exists():
        return []
    fmt = create(FORMATS, harness, "format")
    return [s for s in fmt.parse(Path(log_path)) if isinstance(s, Session)]


def count_tool_calls(sessions: list[Session]) -> int | None:
    """Tool calls in parsed session logs (None when there are none to read)."""
    if not sessions:
        return None
    return sum(1 for s in sessions for e in s.events if e.kind == "tool_call")


def last_answer(sessions: list[Session]) -> str | None:
    """The last non-empty assistant text in the session logs."""
    texts = [e.text for s in sessions for e in s.events if e.kind == "assistant" and e.text.strip()]
    return texts[-1] if texts else None


@contextmanager
def guarded(
    upstream: str, task_dir: Path, workspace: Path, bundle: Path | None = None
) -> Iterator[tuple[RecordingGuardProxy, str]]:
    """A guard proxy in front of ``upstream`` with the task's protected set; yields its URL.

    ``workspace`` is the workspace as the harness sees it (``/workspace`` in a sandbox);
    ``bundle`` a guard rule bundle file (None = the shipped bundle).
    """
    profile = profile_from_task(task_dir, str(workspace))
    proxy = RecordingGuardProxy(upstream, bundle_at(bundle), profile)
    server = proxy.serve("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def score(
    task: Task, task_dir: Path, ws: Path, sandbox: Sandbox, answer: str | None
) -> tuple[float, tuple[VerifyTest, ...]]:
    """(verifier reward, per-test results) of the final workspace or answer."""
    if task.family == "qa" or task.verifier.kind == "answer":  # qa and data-analysis tasks
        result = verify_answer(task, answer or "")
    elif task.verifier.command is None:
        raise UsageError(f"task {task.id} has no check command and is not a qa task")
    else:
        result = verify_files(task_dir, task, ws, sandbox)
    return result.reward, result.tests


def status_of(run: HarnessRun, blocked: bool) -> tuple[Status, tuple[str, ...]]:
    """Rollout status from the harness run and the guard's verdict."""
    if blocked:
        return "blocked", ("the guard blocked a tool call",)
    if run.timed_out:
        return "timeout", ("wall-clock budget ran out",)
    if run.exit_code != 0:
        return "error", (f"harness exited with {run.exit_code}",)
    if run.session_log is None:
        return "error", ("the harness wrote no session log",)
    return "ok", ()


def load_harness(name: str) -> tuple[Harness, str]:
    """The registered harness and the version its installed CLI reports."""
    harness: Harness = create(HARNESSES, name, "harness")
    version = harness.version()
    if version is None:
        raise UsageError(f"{name} CLI not installed: run `trajforge harness install`")
    return harness, version


def run_rollout(
    task_dir: Path,
    harness_name: str,
    sandbox: Sandbox,
    upstream: str,
    policy: str,
    budget: Budget | None = None,
    keep: Path | None = None,
    rollout_id: str | None = None,
    *,
    harness_in_sandbox: bool = False,
    guard_bundle: Path | None = None,
) -> Rollout:
    """Run the harness on the task against ``upstream`` through the guard; score the result.

    ``harness_in_sandbox``: run the harness process in the local sandbox (see
    :mod:`trajforge.train.harnesses.sandboxed`) instead of on the host.
    """
    task = load_task(task_dir)
    harness, version = load_harness(harness_name)
    with tempfile.TemporaryDirectory(prefix=f"trajforge-{harness_name}-") as tmp:
        root = Path(keep or tmp).resolve()
        ws = root / "workspace"
        shutil.copytree(task_dir / task.workspace, ws)
        return rollout_in(
            task_dir,
            task,
            (harness, version),
            sandbox,
            upstream,
            policy,
            budget or Budget(),
            ws,
            rollout_id,
            keep is not None,
            harness_in_sandbox=harness_in_sandbox,
            guard_bundle=guard_bundle,
        )


@contextmanager
def placed(harness: Harness, ws: Path, budget: Budget, in_sandbox: bool) -> Iterator[Runner]:
    """Where the harness runs: the host (run folder = ``ws``'s parent) or the local sandbox."""
    if not in_sandbox:
        yield HostRunner(ws.parent, ws)
        return
    if not isinstance(harness, RunnableHarness):
        raise UsageError(f"{harness.name} cannot run in a sandbox (no run_with)")
    reason = sandbox_blocker(harness)
    if reason is not None:
        raise UsageError(f"cannot run {harness.name} in the local sandbox: {reason}")
    expose = harness.sandbox_paths()[0]
    with SandboxRunner(ws.parent, ws, budget, expose) as runner:
        yield runner


def run_harness(
    harness: Harness, runner: Runner, request: str, url: str, rollout_id: str, timeout_s: float
) -> HarnessRun:
    """One harness process through ``runner`` (a sandbox gets a bridge to ``url`` first)."""
    if isinstance(runner, SandboxRunner):
        url = runner.connect(url)
    if isinstance(harness, RunnableHarness):
        return harness.run_with(request, runner, url, rollout_id, timeout_s)
    return harness.run(request, runner.host_workspace, url, rollout_id, timeout_s)


def record_revision(
    harness: str, version: str, request: dict[str, Any] | None, runner: Runner, kept: bool
) -> HarnessRevision | None:
    """The run's harness revision (written to the kept run folder), None without a request."""
    if request is None:
        return None
    places = {str(runner.workspace): "<workspace>", str(runner.root): "<run>"}
    revision = revision_of(harness, version, request, places)
    if kept:
        path = runner.host_root / "harness_revision.json"
        path.write_text(revision.model_dump_json(indent=2) + "\n")
    return revision


@dataclass(frozen=True)
class HarnessPhase:
    """What the harness part of a rollout left: the run, the guard's state, the revision."""

    run: HarnessRun
    wall: float
    state: dict[str, Any]
    revision: HarnessRevision | None
    where: str | None


def harness_phase(
    task_dir: Path,
    task: Task,
    harness: tuple[Harness, str],
    upstream: str,
    budget: Budget,
    ws: Path,
    rollout_id: str,
    kept: bool,
    in_sandbox: bool,
    bundle: Path | None = None,
) -> HarnessPhase:
    """Run the harness behind the guard (on the host or in the sandbox); a sandbox failure is
    an ``error`` run, not an exception."""
    runner, version = harness
    start = time.monotonic()
    try:
        with placed(runner, ws, budget, in_sandbox) as place:
            with guarded(upstream, task_dir, place.workspace, bundle) as (proxy, url):
                run = run_harness(
                    runner, place, task.instruction, url, rollout_id, budget.timeout_s
                )
                wall = time.monotonic() - start
                rollout = proxy.rollouts.get(rollout_id)
                state = rollout.status() if rollout is not None else {}
            request = proxy.first_requests.get(rollout_id)
            revision = record_revision(runner.name, version, request, place, kept)
    except SandboxError as exc:
        log.warning("harness sandbox failed for %s: %s", task.id, exc)
        failed = HarnessRun(exit_code=None, stderr_tail=f"sandbox: {exc}")
        return HarnessPhase(failed, time.monotonic() - start, {}, None, "local")
    return HarnessPhase(run, wall, state, revision, place.where)


def judged(
    status: Status,
    reasons: tuple[str, ...],
    task: Task,
    task_dir: Path,
    ws: Path,
    sandbox: Sandbox,
    answer: str | None,
) -> tuple[Status, tuple[str, ...], float | None, tuple[VerifyTest, ...]]:
    """(status, reasons, verifier reward, tests): the verifier runs after ok and timeout runs."""
    if status not in ("ok", "timeout"):
        return status, reasons, None, ()
    try:
        verifier_reward, tests = score(task, task_dir, ws, sandbox, answer)
    except SandboxError as exc:  # the sandbox failed: the rollout is unscored
        log.warning("verifier failed for %s: %s", task.id, exc)
        return "error", (f"verifier: {type(exc).__name__}: {exc}",), None, ()
    return status, reasons, verifier_reward, tests


def rollout_in(
    task_dir: Path,
    task: Task,
    harness: tuple[Harness, str],
    sandbox: Sandbox,
    upstream: str,
    policy: str,
    budget: Budget,
    ws: Path,
    rollout_id: str | None,
    kept: bool,
    policy_turns: int | None = None,
    *,
    harness_in_sandbox: bool = False,
    guard_bundle: Path | None = None,
) -> Rollout:
    """The rollout in a prepared workspace ``ws`` (the harness's files go beside it).

    ``harness_in_sandbox``: the harness process runs in the local sandbox, its only way out a
    bridge to the guard proxy; else on the host in ``ws``'s parent folder.
    """
    runner, version = harness
    rollout_id = rollout_id or f"rollout-{uuid.uuid4().hex[:12]}"
    phase = harness_phase(
        task_dir,
        task,
        harness,
        upstream,
        budget,
        ws,
        rollout_id,
        kept,
        harness_in_sandbox,
        guard_bundle,
    )
    run, revision = phase.run, phase.revision
    sessions = parse_log(runner.name, run.session_log)
    answer = last_answer(sessions)
    status, reasons = status_of(run, bool(phase.state.get("blocked")))
    status, reasons, verifier_reward, tests = judged(
        status, reasons, task, task_dir, ws, sandbox, answer
    )
    reward = {"ok": verifier_reward, "timeout": verifier_reward, "error": None}.get(status, 0.0)
    state, wall = phase.state, phase.wall
    return Rollout(
        rollout_id=rollout_id,
        task=task.id,
        family=task.family,
        harness=runner.name,
        harness_version=version,
        policy=policy,
        status=status,
        reasons=reasons,
        reward=reward,
        verifier_reward=verifier_reward,
        tests=tests,
        policy_turns=policy_turns,
        guard_calls=int(state.get("calls", 0)),
        blocks=tuple(state.get("blocks", ())),
        session_log=run.session_log,
        session_tool_calls=count_tool_calls(sessions),
        answer=answer,
        exit_code=run.exit_code,
        wall_s=round(wall, 3),
        workspace=str(ws) if kept else None,
        stderr_tail=run.stderr_tail,
        harness_sandbox=phase.where,
        system_prompt_sha256=revision.system_prompt_sha256 if revision else None,
        tools_sha256=revision.tools_sha256 if revision else None,
        harness_revision=revision.harness_revision if revision else None,
    )
