"""The spine of every record: configuration, versioning, hashing, loading; the closed enums
shared by every stage."""

from __future__ import annotations

import hashlib
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

import orjson
from pydantic import BaseModel, ConfigDict, ValidationError

from trajforge.errors import RecordError

SCHEMA_VERSION = 1
FROZEN = ConfigDict(frozen=True, extra="forbid", defer_build=True)
"""Every record's configuration: immutable, unknown fields rejected; validators are built the
first time a record is made or loaded, not at import (a command pays only for the records it
uses: ``trajforge guard check`` starts about 40 ms sooner)."""

EventKind = Literal["user", "assistant", "tool_call", "tool_result"]
ToolKind = Literal["read", "write", "edit", "patch", "shell", "other"]
CHANGE_KINDS: frozenset[ToolKind] = frozenset({"write", "edit", "patch"})
"""Tool kinds whose call changes a file (a shell command may too: :mod:`~.reconstruct.shell`)."""
Family = Literal["build", "extend", "repair", "qa", "data"]
FAMILIES: tuple[Family, ...] = get_args(Family)
"""Every task family, in the order of :data:`Family`."""
CODE_FAMILIES: tuple[Family, ...] = ("build", "extend", "repair")
"""Families checked by running code (hidden tests or a check command)."""
ANSWER_FAMILIES: tuple[Family, ...] = ("qa", "data")
"""Families checked against an answer (no workspace to build, no instruction to rewrite)."""
VerifierKind = Literal["command", "tests", "answer", "none"]


class Reason(StrEnum):
    """Closed set of reasons a session episode or a candidate does not become a task.

    Triage (reconstruct) drops episodes for the first group; validation and the environment
    stages reject candidates for the second. Reports group by these values.
    """

    HARNESS_INJECTED = "harness_injected"
    """The user-role text was written by the harness or the environment, not by a person."""
    HARNESS_ERROR = "harness_error"
    """The episode ended in an API or harness failure (timeout, login, quota, overload...)."""
    NOT_SELF_CONTAINED = "not_self_contained"
    """The request cannot be understood without the session (acks, unresolved references)."""
    LIVE_STATE = "live_state"
    """The deliverable depends on state outside the workspace (hosts, machine, accounts)."""
    CONVERSATION = "conversation"
    """Opinion, planning or explanation with nothing checkable (qa)."""
    NO_DELIVERABLE = "no_deliverable"
    """An action request that changed no workspace file and asked for no information."""
    DELEGATED = "delegated"
    """Work was done by a sub-agent whose own tool calls the session does not record."""
    DUPLICATE = "duplicate"
    """The same question or answer as a task already kept."""
    REPO_NOT_FOUND = "repo_not_found"
    """The session's repository is not among the checkouts given."""
    COMMIT_AMBIGUOUS = "commit_ambiguous"
    """No commit of the repository matches what the session read well enough."""
    WORKSPACE_INCOMPLETE = "workspace_incomplete"
    """Files the task needs could not be recovered."""
    ENVIRONMENT_UNAVAILABLE = "environment_unavailable"
    """A toolchain or registry the task needs cannot be had here."""
    ENVIRONMENT_BUILD_FAILED = "environment_build_failed"
    """Installing the task's dependencies failed."""
    ORACLE_FAILS = "oracle_fails"
    """The completed workspace does not pass the task's own check."""
    NO_VERIFIER = "no_verifier"
    """Nothing can check the deliverable (no tests, no check command, no answer key)."""
    DOCS_ONLY = "docs_only"
    """The episode changed only documentation or configuration (``.md``, ``.json``, lockfiles):
    not a coding task."""
    UNSUPPORTED_LANGUAGE = "unsupported_language"
    """The changed source is in a language no registered :class:`Language` tests."""
    UNSTATED_INTERFACE = "unstated_interface"
    """The hidden tests rest on an interface (a live service's commands or shapes) that neither
    the instruction nor the workspace states."""
    # --- validation: the verifier against its controls ---------------------------------------
    PROVEN = "proven"
    """Accepted: the verifier passed every control (the detail says which)."""
    ORACLE_FLAKY = "oracle_flaky"
    """The completed workspace passes the check on some runs and not on others."""
    CONTROL_PASSES = "control_passes"
    """A must-fail control (empty, start, pre-fix, stub, a wrong attempt) passes the check."""
    VERDICT_UNKNOWN = "verdict_unknown"
    """A control's run could not be told (timeout, runner error)."""
    WEAK_MUTANT_KILL = "weak_mutant_kill"
    """Too few injected faults on the changed lines are caught (or none could be decided)."""
    WEAKENED_TEST = "weakened_test"
    """A test the agent changed was weakened; it is never used as a verifier."""
    TEACHER_UNSUITABLE = "teacher_unsuitable"
    """The teacher cannot write tests for this task (no oracle, no testable source)."""
    TEACHER_FAILED = "teacher_failed"
    """The teacher's answer was unusable or its tests never proved (after every round)."""
    ANSWER_MISJUDGED = "answer_misjudged"
    """The answer checker rejects a right answer or accepts a wrong one."""
    ANSWER_NOT_REPRODUCED = "answer_not_reproduced"
    """The recorded command that carried the answer no longer prints it."""
    KEY_GUESSABLE = "key_guessable"
    """A guess made without the workspace (yes/no with its most frequent names) passes."""
    SANDBOX_ERROR = "sandbox_error"
    """The sandbox failed; not a verdict on the task."""
    INTERNAL_ERROR = "internal_error"
    """Validation itself raised; not a verdict on the task."""
    UNREADABLE_TASK = "unreadable_task"
    """task.json or the task's files could not be read."""
    TIMEOUT = "timeout"
    """Every oracle run hit the time limit."""


class Record(BaseModel):
    """Base of every record: frozen, no unknown fields, versioned."""

    model_config = FROZEN

    schema_version: int = SCHEMA_VERSION
    """Version of the record schema this instance was written with."""


def canonical_json(data: Any) -> bytes:
    """Sorted, compact JSON bytes, the input of every content hash."""
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS)


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def dump_record(record: BaseModel) -> str:
    """Pretty JSON for files people read (task.json, manifests)."""
    return orjson.dumps(
        record.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2
    ).decode()


R = TypeVar("R", bound=BaseModel)


def load_record(cls: type[R], path: Path) -> R:
    """Load and validate a JSON record; errors name the file and the field."""
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise RecordError(f"{path}: cannot read: {exc.strerror}") from None
    except orjson.JSONDecodeError as exc:
        raise RecordError(f"{path}: not valid JSON: {exc}") from None
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise RecordError(f"{path}: field {field!r}: {first['msg']}") from None
