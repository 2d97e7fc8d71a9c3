"""Records of one rollout through a real harness: its budget, the guard's blocks, its outcome.

Written by ``trajforge.train.rollout`` (replay, train, eval) and read by the eval rows, the
training log (``rollouts.jsonl``) and ``trajforge replay --json``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

from trajforge.records.base import FROZEN, SCHEMA_VERSION, Family
from trajforge.records.validation import VerifyTest


class RolloutStatus(StrEnum):
    """How one rollout ended. ``error`` and ``timeout`` mean what they mean in validation's
    ``Status``."""

    OK = "ok"
    """It ran and was scored."""
    BLOCKED = "blocked"
    """The guard blocked a call (reward 0)."""
    ERROR = "error"
    """Unscored: the harness, the sandbox or the verifier failed."""
    TIMEOUT = "timeout"
    """The wall clock ran out (still scored)."""

    @property
    def scored(self) -> bool:
        """The verifier runs on what the rollout left (ok and timeout)."""
        return self in (RolloutStatus.OK, RolloutStatus.TIMEOUT)


class Budget(BaseModel):
    """Step and wall-clock budget of one run."""

    model_config = FROZEN

    max_steps: int = Field(default=50, ge=1)
    """Model turns the policy may take (scripts are cut; the capture proxy ends a model's run)."""
    timeout_s: float = Field(default=120.0, gt=0)
    """Wall-clock limit of the harness process."""
    pids: int = Field(default=1024, ge=16)
    """Processes the harness may run at once (in the sandbox)."""
    disk_mb: int = Field(default=2048, ge=64)
    """Writable space of the sandboxed harness (its workspace, home and tmp)."""


class GuardBlock(BaseModel):
    """One tool call, tool output or workspace change the guard blocked, as it was recorded."""

    model_config = FROZEN

    ts: float
    """Unix time of the decision (seconds, 3 decimals)."""
    rollout: str
    """Rollout id the proxy keyed the call on."""
    bundle: str
    """Version of the rule bundle that decided."""
    kind: Literal["call", "output", "workspace"]
    """call: a proposed tool call; output: a tool output sent back (a literal secret);
    workspace: a protected file the rollout changed, found after it (``check_workspace``)."""
    tool: str
    """Tool name as the harness offered it (``tool`` for an output)."""
    call_id: str
    """The tool call's id in the chat request or response."""
    decision: Literal["block"] = "block"
    """Always block (flags are not kept in the rollout)."""
    rule: str | None
    """Id of the blocking rule."""
    reason: str
    """Which effect matched and why the rule exists (secrets redacted)."""


class Rollout(BaseModel):
    """Outcome of one rollout through a real harness."""

    model_config = FROZEN

    schema_version: int = SCHEMA_VERSION
    """Version of the record schema."""
    rollout_id: str
    """Rollout id (the API key the harness sent; the guard proxy keys its state on it)."""
    task: str
    """Task id."""
    family: Family
    """Task family (build, extend, repair, qa, data)."""
    harness: str
    """Harness registry name."""
    harness_version: str | None
    """Exact version the installed CLI reported."""
    policy: str
    """What produced the model turns: replay, cheat, give_up, or a model label."""
    status: RolloutStatus
    """ok / blocked / error / timeout (see :data:`RolloutStatus`)."""
    reasons: tuple[str, ...] = ()
    """Why the status is not ok."""
    reward: float | None
    """Verifier reward (also after a timeout); 0 when anything was blocked; None = unscored."""
    verifier_reward: float | None = None
    """What the verifier said about the final workspace (None when it did not run)."""
    tests: tuple[VerifyTest, ...] = ()
    """Per-test results of the verifier."""
    policy_turns: int | None = None
    """Turns in a scripted policy (tool-call turns + the final answer); None for a model."""
    guard_calls: int
    """Tool calls the guard proxy judged."""
    blocks: tuple[GuardBlock, ...] = ()
    """What the guard blocked, in order."""
    session_log: str | None = None
    """Session log the harness wrote (kept with ``keep``; otherwise a deleted temp path)."""
    session_tool_calls: int | None = None
    """Tool calls in the harness's session log, parsed back by reconstruct."""
    answer: str | None = None
    """The harness's last assistant text (the answer for qa tasks)."""
    exit_code: int | None = None
    """Harness exit code."""
    wall_s: float
    """Wall time of the harness process."""
    workspace: str | None = None
    """Final workspace folder (only with ``keep``)."""
    stderr_tail: str = ""
    """Last harness stderr (scrubbed), for errors."""
    harness_sandbox: str | None = None
    """Sandbox backend the harness process ran in (``local``); None: on the host."""
    system_prompt_sha256: str | None = None
    """sha256 of the harness's normalised system prompt (None: no tool-offering request seen)."""
    tools_sha256: str | None = None
    """sha256 of the harness's normalised tool schema (canonical JSON)."""
    harness_revision: str | None = None
    """sha256 over harness, version, system prompt and tools: the deployment unit's revision
    (full texts in ``harness_revision.json`` of a kept run folder)."""
