"""The values that cross the seams (:mod:`trajforge.protocols`): sandbox limits and run
results, built environments, executor outcomes, guard decisions, harness and process results.
Plain frozen records: importing them loads no implementation."""

from __future__ import annotations

from pathlib import Path
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from trajforge.records.base import FROZEN
from trajforge.records.controls import Status

ResultT = TypeVar("ResultT")


class Limits(BaseModel):
    """Resource caps for one sandboxed command."""

    model_config = FROZEN

    timeout_s: float = 60.0
    """Wall-clock limit; the whole process group is killed after it."""
    cpu_s: int = 120
    """CPU-seconds limit (RLIMIT_CPU)."""
    memory_mb: int = 2048
    """Address-space / cgroup memory limit."""
    pids: int = 256
    """Maximum number of processes (RLIMIT_NPROC / pids-limit)."""
    file_size_mb: int = 256
    """Largest file a command may write (RLIMIT_FSIZE)."""
    disk_mb: int = 1024
    """Size of the writable workspace/tmp area where the backend can cap it."""
    output_bytes: int = 1_000_000
    """Cap on captured stdout and on stderr, each; the rest is discarded and flagged."""


class FileChanges(BaseModel):
    """Workspace files a command changed, relative to the workspace root."""

    model_config = FROZEN

    added: tuple[str, ...] = ()
    """Files that did not exist before the run."""
    modified: tuple[str, ...] = ()
    """Files whose content changed."""
    deleted: tuple[str, ...] = ()
    """Files that no longer exist."""


class RunResult(BaseModel):
    """What one sandboxed command did."""

    model_config = FROZEN

    backend: str
    """Sandbox backend name."""
    command: tuple[str, ...]
    """The argv that ran."""
    exit_code: int | None
    """Exit status; negative for a signal; None when it never started."""
    stdout: str
    """Captured stdout (capped)."""
    stderr: str
    """Captured stderr (capped)."""
    truncated: bool = False
    """stdout or stderr went past ``Limits.output_bytes``."""
    timed_out: bool = False
    """The wall-clock limit was hit and the process group killed."""
    killed: Literal["timeout", "memory", "cpu", "output", "pids"] | None = None
    """Which limit ended the command, when one did."""
    wall_s: float
    """Wall time of the command."""
    cpu_s: float = 0.0
    """User + system CPU time of the command and its children."""
    max_rss_kb: int = 0
    """Peak resident memory of the largest process, in KiB, where known."""
    files: FileChanges = Field(default_factory=FileChanges)
    """Files changed in the workspace by this run."""


class EnvironmentFolder(BaseModel):
    """A built task environment on the host, for :meth:`Sandbox.with_environment`."""

    model_config = FROZEN

    folder: Path
    """The environment folder on the host (``node_modules``, a virtualenv, ...)."""
    key: str
    """Its content hash: names what a backend makes of it (docker: the image tag)."""
    ecosystems: tuple[str, ...] = ()
    """Ecosystems of its recipes (``node``: the runs need the node toolchain)."""


class WorkOutcome(BaseModel, Generic[ResultT]):
    """What happened to one work item handed to an :class:`Executor`."""

    model_config = ConfigDict(**FROZEN, arbitrary_types_allowed=True)

    schema_version: int = 1
    """Record layout version."""
    index: int
    """Position of the item in the sequence given to ``Executor.map``."""
    reason: Literal[Status.ACCEPTED, Status.ERROR]
    """accepted: the item function returned; error: it failed on every attempt (the one
    :class:`Status` vocabulary)."""
    value: ResultT | None = None
    """What the item function returned (accepted only)."""
    error: str | None = None
    """Why the last attempt failed (error only), as ``ExceptionType: message``."""
    attempts: int = 1
    """Attempts charged to this item (a crash shared by several items is charged to none)."""


class GuardDecision(BaseModel):
    """What a guard detector decided about one proposed tool call (or tool output)."""

    model_config = FROZEN

    decision: Literal["allow", "flag", "block"]
    """allow: run it; flag: run it and log; block: never run it, zero reward for the rollout."""
    rule: str | None = None
    """Id of the deciding rule (the first blocking one, else the first flagging one)."""
    reason: str = ""
    """Which effect matched and why the rule exists (secrets redacted)."""
    bundle: str = ""
    """Version of the rule bundle that decided."""
    also: tuple[str, ...] = ()
    """Other rules that matched the same call."""


class HarnessRun(BaseModel):
    """What one harness process left behind."""

    model_config = FROZEN

    exit_code: int | None
    """Exit code of the harness process (None when it was killed for the wall-clock budget)."""
    timed_out: bool = False
    """The wall-clock budget ran out and the process was killed."""
    session_log: str | None = None
    """Path of the session log the harness wrote (readable by its reconstruct format)."""
    stderr_tail: str = ""
    """Last lines of the harness's stderr (secrets scrubbed)."""


class ProcessResult(BaseModel):
    """What one harness CLI process did (through a :class:`Runner`)."""

    model_config = FROZEN

    exit_code: int | None
    """Exit status (None when the wall-clock limit killed it)."""
    timed_out: bool
    """The wall-clock limit was hit and the whole process tree killed."""
    stdout: str
    """Captured stdout."""
    stderr: str
    """Captured stderr."""
