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

import dataclasses
import logging
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trajforge.errors import SandboxError, UsageError
from trajforge.guard.engine import bundle_at
from trajforge.guard.profile import profile_from_task
from trajforge.protocols import HarnessRun, Runner
from trajforge.records import Budget, GuardBlock, Rollout, RolloutStatus, Session, VerifyTest
from trajforge.registry import FORMATS, create
from trajforge.train.harnesses.base import HostRunner
from trajforge.train.harnesses.revision import HarnessRevision, RecordingGuardProxy, revision_of
from trajforge.train.harnesses.sandboxed import SandboxRunner, sandbox_blocker
from trajforge.train.rollout_spec import (
    RolloutSetup,
    RolloutSpec,
    load_harness,
    setup_for,
    spec_for,
)
from trajforge.verifiers.validate.verify import verify_answer, verify_files

log = logging.getLogger(__name__)
__all__ = [
    "Budget",
    "Rollout",
    "RolloutSetup",
    "RolloutSpec",
    "load_harness",
    "rollout_in",
    "run_rollout",
    "setup_for",
    "spec_for",
]


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
def guarded(spec: RolloutSpec, workspace: Path) -> Iterator[tuple[RecordingGuardProxy, str]]:
    """A guard proxy in front of the spec's upstream with the task's protected set; yields it
    and its URL. ``workspace`` is the workspace as the harness sees it (``/workspace`` in a
    sandbox)."""
    profile = profile_from_task(spec.task_dir, str(workspace))
    proxy = RecordingGuardProxy(spec.upstream, bundle_at(spec.setup.guard_bundle), profile)
    server = proxy.serve("127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class Verdict:
    """How a rollout ended, and what the verifier said (when it ran)."""

    status: RolloutStatus
    reasons: tuple[str, ...] = ()
    verifier_reward: float | None = None
    tests: tuple[VerifyTest, ...] = ()

    @property
    def reward(self) -> float | None:
        """The verifier's reward after ok and timeout runs; 0 when blocked; None = unscored."""
        if self.status.scored:
            return self.verifier_reward
        return None if self.status == RolloutStatus.ERROR else 0.0


def score(spec: RolloutSpec, ws: Path, answer: str | None) -> tuple[float, tuple[VerifyTest, ...]]:
    """(verifier reward, per-test results) of the final workspace or answer."""
    task = spec.task
    if task.family == "qa" or task.verifier.kind == "answer":  # qa and data-analysis tasks
        result = verify_answer(task, answer or "")
    elif task.verifier.command is None:
        raise UsageError(f"task {task.id} has no check command and is not a qa task")
    else:
        result = verify_files(spec.task_dir, task, ws, spec.setup.verifier, whole=True)
    return result.reward, result.tests


def status_of(run: HarnessRun, blocks: tuple[GuardBlock, ...]) -> Verdict:
    """Rollout status from the harness run and the guard's verdict."""
    if blocks:
        why = (
            "the guard blocked a tool call" if b.kind != "workspace" else b.reason for b in blocks
        )
        return Verdict(RolloutStatus.BLOCKED, tuple(dict.fromkeys(why)))
    if run.timed_out:
        return Verdict(RolloutStatus.TIMEOUT, ("wall-clock budget ran out",))
    if run.exit_code != 0:
        return Verdict(RolloutStatus.ERROR, (f"harness exited with {run.exit_code}",))
    if run.session_log is None:
        return Verdict(RolloutStatus.ERROR, ("the harness wrote no session log",))
    return Verdict(RolloutStatus.OK)


def judged(spec: RolloutSpec, verdict: Verdict, ws: Path, answer: str | None) -> Verdict:
    """The verdict with the verifier's reward and tests: it runs after ok and timeout runs."""
    if not verdict.status.scored:
        return verdict
    try:
        verifier_reward, tests = score(spec, ws, answer)
    except SandboxError as exc:  # the sandbox failed: the rollout is unscored
        log.warning("verifier failed for %s: %s", spec.task.id, exc)
        return Verdict(RolloutStatus.ERROR, (f"verifier: {type(exc).__name__}: {exc}",))
    return dataclasses.replace(verdict, verifier_reward=verifier_reward, tests=tests)


def run_rollout(spec: RolloutSpec) -> Rollout:
    """Run the spec's harness on its task against its upstream through the guard; score the
    result. The workspace is a fresh copy of the task's under ``spec.keep`` (or a temp folder).
    """
    name = spec.setup.harness.name
    with tempfile.TemporaryDirectory(prefix=f"trajforge-{name}-") as tmp:
        root = Path(spec.keep or tmp).resolve()
        ws = root / "workspace"
        shutil.copytree(spec.task_dir / spec.task.workspace, ws)
        return rollout_in(spec, ws)


@contextmanager
def placed(setup: RolloutSetup, ws: Path) -> Iterator[Runner]:
    """Where the harness runs: the host (run folder = ``ws``'s parent) or the local sandbox."""
    if not setup.in_sandbox:
        yield HostRunner(ws.parent, ws)
        return
    harness = setup.harness
    reason = sandbox_blocker(harness)
    if reason is not None:
        raise UsageError(f"cannot run {harness.name} in the local sandbox: {reason}")
    expose = harness.sandbox_paths()[0]
    with SandboxRunner(ws.parent, ws, setup.budget, expose) as runner:
        yield runner


def run_harness(spec: RolloutSpec, runner: Runner, url: str) -> HarnessRun:
    """One harness process through ``runner``, reaching ``url`` the way the runner connects."""
    url = runner.connect(url)
    timeout_s = spec.setup.budget.timeout_s
    return spec.setup.harness.run(spec.task.instruction, runner, url, spec.rollout_id, timeout_s)


def record_revision(
    spec: RolloutSpec, request: dict[str, Any] | None, runner: Runner
) -> HarnessRevision | None:
    """The run's harness revision (written to the kept run folder), None without a request."""
    if request is None:
        return None
    places = {str(runner.workspace): "<workspace>", str(runner.root): "<run>"}
    setup = spec.setup
    revision = revision_of(setup.harness.name, setup.harness_version, request, places)
    if spec.keep is not None:
        path = runner.host_root / "harness_revision.json"
        path.write_text(revision.model_dump_json(indent=2) + "\n")
    return revision


@dataclass(frozen=True)
class HarnessPhase:
    """What the harness part of a rollout left: the run, the guard's record, the revision."""

    run: HarnessRun
    wall: float
    guard_calls: int = 0
    blocks: tuple[GuardBlock, ...] = ()
    revision: HarnessRevision | None = None
    where: str | None = None


def check_integrity(proxy: RecordingGuardProxy, rollout_id: str, workspace: Path) -> int:
    """After the harness stopped: protected files (visible tests, graders) the rollout changed
    in ``workspace`` (the host's copy) are blocks, recorded beside the blocked calls — a
    tampering no call-level rule caught still zeroes the reward. Returns how many."""
    rollout = proxy.rollout(rollout_id)
    found = rollout.detector.check_workspace(workspace)
    for decision in found:
        proxy.record(rollout, "workspace", "workspace", "", decision)
    return len(found)


def guard_record(proxy: RecordingGuardProxy, rollout_id: str) -> tuple[int, tuple[GuardBlock, ...]]:
    """(tool calls judged, blocks) the guard proxy recorded for ``rollout_id``."""
    rollout = proxy.rollouts.get(rollout_id)
    if rollout is None:
        return 0, ()
    with rollout.lock:
        events = list(rollout.events)
        calls = rollout.calls
    return calls, tuple(GuardBlock.model_validate(e) for e in events if e["decision"] == "block")


def harness_phase(spec: RolloutSpec, ws: Path) -> HarnessPhase:
    """Run the harness behind the guard (on the host or in the sandbox); a sandbox failure is
    an ``error`` run, not an exception."""
    start = time.monotonic()
    try:
        with placed(spec.setup, ws) as place:
            with guarded(spec, place.workspace) as (proxy, url):
                run = run_harness(spec, place, url)
                wall = time.monotonic() - start
                check_integrity(proxy, spec.rollout_id, place.host_workspace)
                calls, blocks = guard_record(proxy, spec.rollout_id)
            request = proxy.first_requests.get(spec.rollout_id)
            revision = record_revision(spec, request, place)
    except SandboxError as exc:
        log.warning("harness sandbox failed for %s: %s", spec.task.id, exc)
        failed = HarnessRun(exit_code=None, stderr_tail=f"sandbox: {exc}")
        return HarnessPhase(failed, time.monotonic() - start, where="local")
    return HarnessPhase(run, wall, calls, blocks, revision, place.where)


def rollout_in(spec: RolloutSpec, ws: Path) -> Rollout:
    """The rollout in a prepared workspace ``ws`` (the harness's files go beside it).

    ``spec.setup.in_sandbox``: the harness process runs in the local sandbox, its only way out
    a bridge to the guard proxy; else on the host in ``ws``'s parent folder.
    """
    phase = harness_phase(spec, ws)
    run, revision = phase.run, phase.revision
    harness = spec.setup.harness
    sessions = parse_log(harness.name, run.session_log)
    answer = last_answer(sessions)
    verdict = judged(spec, status_of(run, phase.blocks), ws, answer)
    return Rollout(
        rollout_id=spec.rollout_id,
        task=spec.task.id,
        family=spec.task.family,
        harness=harness.name,
        harness_version=spec.setup.harness_version,
        policy=spec.policy,
        status=verdict.status,
        reasons=verdict.reasons,
        reward=verdict.reward,
        verifier_reward=verdict.verifier_reward,
        tests=verdict.tests,
        policy_turns=spec.policy_turns,
        guard_calls=phase.guard_calls,
        blocks=phase.blocks,
        session_log=run.session_log,
        session_tool_calls=count_tool_calls(sessions),
        answer=answer,
        exit_code=run.exit_code,
        wall_s=round(phase.wall, 3),
        workspace=str(ws) if spec.keep is not None else None,
        stderr_tail=run.stderr_tail,
        harness_sandbox=phase.where,
        system_prompt_sha256=revision.system_prompt_sha256 if revision else None,
        tools_sha256=revision.tools_sha256 if revision else None,
        harness_revision=revision.harness_revision if revision else None,
    )
