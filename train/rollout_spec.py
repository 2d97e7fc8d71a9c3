"""What a rollout runs: the run's :class:`RolloutSetup` and one rollout's :class:`RolloutSpec`.

A run (``trajforge replay``, ``train``, ``eval``, a warm-start probe) builds one setup with
:func:`setup_for`: the registered harness, the version its CLI reports (asked once per process:
:func:`trajforge.train.harnesses.base.version_of` caches it), where the harness process runs,
the verifier's sandbox, the budget and the guard bundle. Each rollout is that setup on one task
against one model endpoint (:func:`spec_for`); :func:`trajforge.train.rollout.run_rollout`
takes nothing else.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from trajforge.errors import UsageError
from trajforge.protocols import Harness, Sandbox
from trajforge.records import Budget, Task
from trajforge.registry import HARNESSES, create
from trajforge.taskdir import load_task
from trajforge.train.harnesses.sandboxed import sandbox_blocker

log = logging.getLogger(__name__)

HarnessSandbox = Literal["auto", "on", "off"]
"""Where the harness process runs: auto = the local sandbox when usable, else the host;
on = the local sandbox (a UsageError when it cannot); off = the host."""


def placement_of(on_host: bool | None) -> HarnessSandbox:
    """The placement a ``--harness-on-host/--harness-in-sandbox`` flag asks for (None: auto)."""
    if on_host is None:
        return "auto"
    return "off" if on_host else "on"


def new_rollout_id() -> str:
    """A fresh rollout id (the API key the harness sends; the guard keys its state on it)."""
    return f"rollout-{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class RolloutSetup:
    """What every rollout of one run shares; built once per run (:func:`setup_for`)."""

    harness: Harness
    """The registered harness."""
    harness_version: str
    """The version its installed CLI reported."""
    verifier: Sandbox
    """Sandbox the task's hidden verifier runs in."""
    budget: Budget = field(default_factory=Budget)
    """Per-rollout step and wall-clock budget."""
    in_sandbox: bool = False
    """The harness process runs in the local sandbox (else on the host)."""
    guard_bundle: Path | None = None
    """Guard rule bundle file (None = the shipped bundle)."""


@dataclass(frozen=True)
class RolloutSpec:
    """One rollout: the run's setup on one task, against one model endpoint."""

    setup: RolloutSetup
    """The run's harness, verifier sandbox, budget, placement and guard bundle."""
    task_dir: Path
    """The task folder."""
    task: Task
    """Its task record (loaded once)."""
    upstream: str
    """OpenAI-compatible endpoint the harness's model calls reach through the guard proxy."""
    policy: str
    """What produces the model turns: replay, cheat, give_up, ``policy`` or a model label."""
    rollout_id: str = field(default_factory=new_rollout_id)
    """Rollout id (the API key the harness sends)."""
    keep: Path | None = None
    """Run folder to keep (workspace, session log, harness revision); None: a temp folder."""
    policy_turns: int | None = None
    """Turns in a scripted policy; None for a model."""


def load_harness(name: str) -> Harness:
    """The registered harness ``name``; a UsageError when its CLI is not installed."""
    harness: Harness = create(HARNESSES, name, "harness")
    if harness.version() is None:
        raise UsageError(f"{name} CLI not installed: run `trajforge harness install`")
    return harness


def harness_in_sandbox(harness: Harness, placement: HarnessSandbox) -> bool:
    """Whether the harness runs in the local sandbox (see :data:`HarnessSandbox`)."""
    if placement == "off":
        return False
    reason = sandbox_blocker(harness)
    if reason is None:
        return True
    if placement == "on":
        raise UsageError(f"cannot run {harness.name} in the local sandbox: {reason}")
    log.warning("running %s on the host: %s", harness.name, reason)
    return False


def setup_for(
    harness_name: str,
    verifier: Sandbox,
    budget: Budget | None = None,
    placement: HarnessSandbox = "auto",
    guard_bundle: Path | None = None,
) -> RolloutSetup:
    """The run's setup: the harness loaded and placed, its version asked (once per process)."""
    harness = load_harness(harness_name)
    return RolloutSetup(
        harness=harness,
        harness_version=str(harness.version()),
        verifier=verifier,
        budget=budget or Budget(),
        in_sandbox=harness_in_sandbox(harness, placement),
        guard_bundle=guard_bundle,
    )


def spec_for(
    setup: RolloutSetup,
    task_dir: Path,
    upstream: str,
    policy: str,
    rollout_id: str | None = None,
) -> RolloutSpec:
    """One rollout of ``setup`` on the task in ``task_dir`` (its task.json loaded here)."""
    return RolloutSpec(
        setup=setup,
        task_dir=task_dir,
        task=load_task(task_dir),
        upstream=upstream,
        policy=policy,
        rollout_id=rollout_id or new_rollout_id(),
    )
