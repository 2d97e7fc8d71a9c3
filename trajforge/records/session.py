"""Sessions as reconstruct reads them: header, normalised events, warnings; triage's drops."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from trajforge.records.base import FROZEN, EventKind, Reason, Record, ToolKind


class SourcePos(BaseModel):
    """Where an event came from in its input."""

    model_config = FROZEN

    file: str
    """Path of the input file (or database / directory) the event was read from."""
    line: int
    """1-based line number, or record index for non-line formats (SQLite rows, JSON arrays)."""


class Edit(BaseModel):
    """One search/replace edit inside an ``edit`` tool call."""

    model_config = FROZEN

    old: str
    """Text to find (exactly, as the harness would)."""
    new: str
    """Replacement text."""
    replace_all: bool = False
    """Replace every occurrence instead of requiring exactly one."""


class Event(BaseModel):
    """One normalised step of a session.

    Tool calls carry normalised arguments for the kinds replay understands:
    ``read``: path (+ offset/limit); ``write``: path + content; ``edit``: path + edits;
    ``patch``: patch text + patch_format; ``shell``: command (+ cwd). ``arguments`` keeps the
    harness's raw arguments for everything else (the guard reads them).
    """

    model_config = FROZEN

    kind: EventKind
    """user / assistant message, tool call, or tool result."""
    source: SourcePos
    """Position in the input."""
    text: str = ""
    """Message text (user, assistant) or tool output (tool_result)."""
    tool: str | None = None
    """Harness tool name as recorded (``bash``, ``edit``, ``apply_patch``, ...)."""
    tool_kind: ToolKind | None = None
    """Canonical kind of the tool call (on tool_call and tool_result events)."""
    call_id: str | None = None
    """Id pairing a tool call with its result (synthesised when the format has none)."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Raw arguments of the tool call as the harness recorded them."""
    path: str | None = None
    """Target file path for read / write / edit calls, as given by the harness."""
    content: str | None = None
    """Full file content for ``write``; for a ``read`` result the recovered file text."""
    edits: tuple[Edit, ...] = ()
    """Search/replace edits for ``edit`` calls, applied in order."""
    patch: str | None = None
    """Patch text for ``patch`` calls."""
    patch_format: Literal["v4a", "unified"] | None = None
    """Dialect of ``patch``: OpenAI V4A (``*** Begin Patch``) or a unified diff."""
    command: str | None = None
    """Shell command for ``shell`` calls."""
    cwd: str | None = None
    """Working directory of a shell command when the harness recorded one."""
    exit_code: int | None = None
    """Exit code of a shell command when known."""
    is_error: bool = False
    """The harness reported the tool call as failed (nothing it would have changed changed)."""
    partial: bool = False
    """For read results: the content is only part of the file (offset/limit or truncation)."""
    offset: int | None = None
    """For read calls: 1-based first line requested, when given."""


class GitInfo(BaseModel):
    """Git state recorded by the harness at session start."""

    model_config = FROZEN

    repository_url: str | None = None
    """Remote URL."""
    branch: str | None = None
    """Branch name."""
    commit: str | None = None
    """Commit hash."""


class SessionHeader(BaseModel):
    """What is known about a session before its events."""

    model_config = FROZEN

    harness: str
    """Short harness name: pi, opencode, hermes, claude-code, codex."""
    session_id: str
    """The harness's session id, or a hash of the source when it has none."""
    source_path: str
    """Input file (or database / directory) the session was read from."""
    content_hash: str
    """sha256 of the bytes the session was parsed from."""
    harness_version: str | None = None
    """Harness version or session format version when recorded."""
    model: str | None = None
    """Model id (provider/model when both are known)."""
    cwd: str | None = None
    """Working directory of the session; absolute paths are made relative to it."""
    git: GitInfo | None = None
    """Git information when the harness recorded it."""
    started_at: str | None = None
    """ISO timestamp of the session start."""


class ParseWarning(BaseModel):
    """A record that could not be used, with its position."""

    model_config = FROZEN

    file: str
    """Input file."""
    line: int
    """1-based line (or record index)."""
    message: str
    """What was wrong."""


class CutOff(BaseModel):
    """A turn the harness recorded as cut off: the person aborted it, or the API failed."""

    model_config = FROZEN

    after: int
    """Index of the session's last event before the cut (-1: before any event)."""
    failure: str
    """The harness's words for it ("Request was aborted", "MessageAbortedError: …")."""


class Session(Record):
    """A parsed session: header and events along the conversation path."""

    header: SessionHeader
    """Session metadata."""
    events: tuple[Event, ...]
    """Events in conversation order (tree / DAG / forks resolved)."""
    warnings: tuple[ParseWarning, ...] = ()
    """Records skipped as unreadable."""
    skipped: dict[str, int] = Field(default_factory=dict)
    """Counts of known-but-unused and unknown record types, by type name."""
    cut_offs: tuple[CutOff, ...] = ()
    """Turns the harness recorded as cut off, where they stopped (kept beside the events, so
    the events' indices, and the ids of tasks made from them, do not move)."""
    steers: tuple[int, ...] = ()
    """Indices of user events the harness delivered while the agent's turn was still running
    (pi's steering messages: sent after a tool result of a message that stopped for tool use;
    the turn went on with them)."""


class TriageDrop(BaseModel):
    """An episode of a session that triage did not make a candidate of, and why."""

    model_config = FROZEN

    harness: str
    """Harness of the session."""
    session: str
    """Session id."""
    file: str
    """Input file."""
    line: int
    """Source line (or record index) of the episode's first event."""
    events: tuple[int, int]
    """First and last event index of the episode."""
    reason: Reason
    """Closed reason."""
    detail: str
    """What exactly triggered it (a pattern matched, a command, a path)."""
    text: str
    """The request, shortened (scrubbed)."""
