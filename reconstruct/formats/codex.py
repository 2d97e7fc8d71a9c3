"""Reader for OpenAI Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Two eras (``codex-rs/protocol`` ``RolloutLine`` / ``RolloutItem``):

* envelope era: every line is ``{"timestamp", "type", "payload"}`` with ``type`` one of
  ``session_meta`` (id, cwd, cli_version, git{commit_hash, branch, repository_url},
  forked_from_id), ``turn_context`` (cwd, model), ``response_item`` (a Responses API item),
  ``event_msg`` (UI events) and ``compacted``;
* bare era: the first line is the meta object itself (``{"id", "timestamp", "instructions",
  "git"}``), then bare response items, with ``{"record_type": "state"}`` lines in between.

Response items: ``message`` (user / assistant / developer), ``reasoning`` (skipped),
``function_call`` + ``function_call_output`` (paired by ``call_id``), ``custom_tool_call`` +
``custom_tool_call_output`` (freeform ``apply_patch``) and ``local_shell_call``. Shell tools
(``shell`` with an argv, ``shell_command`` / ``exec_command`` with a string) become ``shell``
events, ``bash -lc "<script>"`` unwrapped; ``apply_patch`` in any of its spellings (its own
tool, ``["apply_patch", patch]`` or an ``apply_patch <<EOF`` heredoc) becomes a V4A ``patch``.

Tool output comes in three forms: a JSON string ``{"output", "metadata": {"exit_code"}}``,
text headed ``Exit code: N / Wall time: ... / Output:`` (or the unified-exec ``Process exited
with code N`` header), or plain text whose exit code is taken from the ``exec_command_end``
event when one was recorded and is otherwise unknown.

Codex reads files through the shell: a successful ``cat FILE`` or ``sed -n '1,Np' FILE`` is
followed by a read-like ``tool_result`` (call id ``<id>:read``) carrying the file text, partial
when the range or Codex's output truncation may have cut it, so replay learns the file.

Forks: ``codex fork`` writes a new rollout whose ``session_meta`` names ``forked_from_id``
and which starts with the copied parent history, so each file reads on its own; extra
``session_meta`` lines are counted as skipped. Backtracking inside a file is recorded as
``event_msg`` ``thread_rolled_back{num_turns}``: the last N user turns are dropped, exactly as
Codex rebuilds its history on resume, and what follows belongs to the continued path.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from trajforge.errors import FormatError
from trajforge.reconstruct.formats.codex_tools import (
    argv_fields,
    call_fields,
    int_or_none,
    message_text,
    parse_output,
    shell_read,
    str_or_none,
)
from trajforge.reconstruct.inputs import file_hash, iter_json_lines, json_line
from trajforge.records import Event, GitInfo, ParseWarning, Session, SessionHeader, SourcePos

log = logging.getLogger(__name__)

HARNESS = "codex"
ENVELOPE_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
ITEM_TYPES = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "reasoning",
        "local_shell_call",
        "custom_tool_call",
        "custom_tool_call_output",
        "web_search_call",
        "compaction",
    }
)
CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<permissions instructions>",
    "<user_shell_command>",
)
CWD_RE = re.compile(r"<cwd>([^<]+)</cwd>")
SESSION_ID_RE = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\Z")

Row = tuple[int, str, dict[str, Any]]


NEVER_RAN = "execution error:"
"""How codex reports a call its sandbox could not start ("execution error: Io(Custom { …
windows sandbox: runner error: CreateProcessAsUserW failed: 1312 })"): a failed call."""


class CodexFormat:
    """Codex CLI rollout files, envelope and bare eras."""

    name = "codex"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when one of the first complete lines is a rollout line of either era."""
        for raw in head.split(b"\n")[:20]:
            record, _ = json_line(raw)
            if isinstance(record, dict) and _sniffable(record):
                return True
        return False

    def parse(self, path: Path) -> Iterator[Session | ParseWarning]:
        """The rollout as one Session; unusable lines become warnings."""
        source = str(path)
        rows: list[Row] = []
        warnings: list[ParseWarning] = []
        for line, value, error in iter_json_lines(path):
            kind = _classify(value, first=not rows) if isinstance(value, dict) else None
            if error is not None:  # damaged, or read with raw control characters
                warnings.append(ParseWarning(file=source, line=line, message=error))
                if value is None:
                    continue
            if kind is None:
                message = "JSON record is not a Codex rollout line"
                warnings.append(ParseWarning(file=source, line=line, message=message))
            elif isinstance(value, dict):
                rows.append((line, kind, _payload(value, kind)))
        if not rows and not warnings:
            yield ParseWarning(file=source, line=1, message="empty file: no Codex rollout lines")
            return
        if not rows:
            first = warnings[0]
            raise FormatError(f"{path}: not a Codex rollout (line {first.line}: {first.message})")
        yield _build_session(path, rows, warnings)


def _classify(record: dict[str, Any], first: bool) -> str | None:
    """Row kind of a line: an envelope type, ``bare_meta``, ``state`` or ``response_item``."""
    kind = record.get("type")
    if isinstance(record.get("payload"), dict) and isinstance(kind, str):
        return kind if kind in ENVELOPE_TYPES or "timestamp" in record else None
    if "record_type" in record:
        return "state"
    if (
        kind is None
        and isinstance(record.get("id"), str)
        and "timestamp" in record
        and ("instructions" in record or "git" in record or first)
    ):
        return "bare_meta"
    if kind in ITEM_TYPES and (
        "role" in record or "call_id" in record or "summary" in record or "action" in record
    ):
        return "response_item"
    return None


def _sniffable(record: dict[str, Any]) -> bool:
    """A line only Codex writes: a known envelope, a bare meta line or a bare response item."""
    kind = _classify(record, first=False)
    if kind == "state":
        return record.get("record_type") == "state"
    return kind in ENVELOPE_TYPES or kind in ("bare_meta", "response_item")


def _payload(record: dict[str, Any], kind: str) -> dict[str, Any]:
    envelope = isinstance(record.get("payload"), dict) and kind not in ("bare_meta", "state")
    payload: dict[str, Any] = record["payload"] if envelope else record
    return payload


def _count(counts: dict[str, int], key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def _exec_ends(rows: list[Row]) -> dict[str, tuple[int | None, bool | None]]:
    """call_id → (exit code, success) from ``exec_command_end`` / ``patch_apply_end`` events."""
    ends: dict[str, tuple[int | None, bool | None]] = {}
    for _, kind, payload in rows:
        call_id = str_or_none(payload.get("call_id"))
        if kind != "event_msg" or call_id is None:
            continue
        if payload.get("type") == "exec_command_end":
            ends[call_id] = (int_or_none(payload.get("exit_code")), None)
        elif payload.get("type") == "patch_apply_end":
            ends[call_id] = (None, bool(payload.get("success")))
    return ends


def _build_session(path: Path, rows: list[Row], warnings: list[ParseWarning]) -> Session:
    builder = _EventBuilder(str(path), warnings, _exec_ends(rows))
    for line, kind, payload in rows:
        builder.row(line, kind, payload)
    meta = builder.meta
    digest = file_hash(path)
    git = meta.get("git")
    match = SESSION_ID_RE.search(path.name.removesuffix(".gz").removesuffix(".jsonl"))
    header = SessionHeader(
        harness=HARNESS,
        session_id=str_or_none(meta.get("id")) or (match.group(1) if match else digest[:16]),
        source_path=str(path),
        content_hash=digest,
        harness_version=str_or_none(meta.get("cli_version")),
        model=builder.model,
        cwd=str_or_none(meta.get("cwd")) or builder.cwd,
        git=GitInfo(
            repository_url=str_or_none(git.get("repository_url")),
            branch=str_or_none(git.get("branch")),
            commit=str_or_none(git.get("commit_hash")),
        )
        if isinstance(git, dict)
        else None,
        started_at=str_or_none(meta.get("timestamp")) or builder.first_timestamp,
    )
    return Session.model_construct(
        header=header,
        events=tuple(builder.events),
        warnings=tuple(warnings),
        skipped=builder.skipped,
    )


class _EventBuilder:
    """Turns rollout rows into Events along the surviving history."""

    def __init__(
        self,
        source: str,
        warnings: list[ParseWarning],
        ends: dict[str, tuple[int | None, bool | None]],
    ) -> None:
        self.source = source
        self.warnings = warnings
        self.ends = ends
        self.events: list[Event] = []
        self.skipped: dict[str, int] = {}
        self.meta: dict[str, Any] = {}
        self.model: str | None = None
        self.cwd: str | None = None
        self.first_timestamp: str | None = None
        self.calls: dict[str, Event] = {}

    def emit(self, line: int, **fields: Any) -> None:
        self.events.append(Event(source=SourcePos(file=self.source, line=line), **fields))

    def row(self, line: int, kind: str, payload: dict[str, Any]) -> None:
        if self.first_timestamp is None:
            self.first_timestamp = str_or_none(payload.get("timestamp"))
        if kind in ("session_meta", "bare_meta"):
            if self.meta:
                _count(self.skipped, "session_meta:extra")  # a fork's copied parent meta
            else:
                self.meta = payload.get("meta", payload) if kind == "session_meta" else payload
        elif kind == "turn_context":
            self.model = self.model or str_or_none(payload.get("model"))
            self.cwd = self.cwd or str_or_none(payload.get("cwd"))
            _count(self.skipped, kind)
        elif kind == "response_item":
            self.item(line, payload)
        elif kind == "event_msg" and payload.get("type") == "thread_rolled_back":
            self.roll_back(line, int_or_none(payload.get("num_turns")) or 0)
        elif kind == "event_msg":
            _count(self.skipped, f"event_msg:{payload.get('type')}")
        else:
            _count(self.skipped, kind)

    def item(self, line: int, item: dict[str, Any]) -> None:
        kind = item.get("type")
        if kind == "message":
            self.message(line, item)
        elif kind == "function_call":
            self.function_call(line, item)
        elif kind == "custom_tool_call":
            name = str_or_none(item.get("name")) or "unknown"
            args = {"input": item.get("input")}
            self.call(line, name, str_or_none(item.get("call_id")), args, call_fields(name, args))
        elif kind == "local_shell_call":
            self.local_shell_call(line, item)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            self.output(line, item)
        else:
            _count(self.skipped, f"response_item:{kind}")

    def message(self, line: int, item: dict[str, Any]) -> None:
        role = item.get("role")
        text = message_text(item.get("content"))
        if role == "user" and text.lstrip().startswith(CONTEXT_PREFIXES):
            match = CWD_RE.search(text)
            self.cwd = self.cwd or (match.group(1).strip() if match else None)
            _count(self.skipped, "message:context")
        elif role in ("user", "assistant") and text.strip():
            self.emit(line, kind=role, text=text)
        else:
            _count(self.skipped, f"message:{role}")

    def function_call(self, line: int, item: dict[str, Any]) -> None:
        name = str_or_none(item.get("name")) or "unknown"
        raw = item.get("arguments")
        args: Any = raw
        if isinstance(raw, str):
            try:
                args = orjson.loads(raw) if raw.strip() else {}
            except orjson.JSONDecodeError:
                self.warn(line, f"arguments of {name!r} call are not JSON; kept raw")
                args = {"raw": raw}
        if not isinstance(args, dict):
            args = {"raw": raw}
        self.call(line, name, str_or_none(item.get("call_id")), args, call_fields(name, args))

    def local_shell_call(self, line: int, item: dict[str, Any]) -> None:
        raw = item.get("action")
        action: dict[str, Any] = raw if isinstance(raw, dict) else {}
        argv = action.get("command")
        fields: dict[str, Any] = {"tool_kind": "other"}
        if isinstance(argv, list) and all(isinstance(a, str) for a in argv):
            fields = argv_fields(argv, str_or_none(action.get("working_directory")))
        call_id = str_or_none(item.get("call_id")) or str_or_none(item.get("id"))
        self.call(line, "local_shell", call_id, action, fields)

    def call(
        self,
        line: int,
        name: str,
        call_id: str | None,
        args: dict[str, Any],
        fields: dict[str, Any],
    ) -> None:
        call_id = call_id or f"line{line}"
        self.emit(line, kind="tool_call", tool=name, call_id=call_id, arguments=args, **fields)
        self.calls[call_id] = self.events[-1]

    def output(self, line: int, item: dict[str, Any]) -> None:
        call_id = str_or_none(item.get("call_id"))
        if call_id is None or call_id not in self.calls:
            self.warn(line, f"tool output for unknown call_id {call_id!r}")
        call = self.calls.get(call_id or "")
        name, tool_kind = (call.tool, call.tool_kind) if call else (None, "other")
        text, exit_code, success = parse_output(item.get("output"))
        end_exit, end_success = self.ends.get(call_id or "", (None, None))
        exit_code = exit_code if exit_code is not None else end_exit
        success = success if success is not None else end_success
        failed = (exit_code is not None and exit_code != 0) or success is False
        if tool_kind == "patch" and text.startswith("apply_patch verification failed"):
            failed = True
        if text.startswith(NEVER_RAN):  # the sandbox could not start it: nothing ran
            failed = True
        self.emit(
            line,
            kind="tool_result",
            tool=name,
            tool_kind=tool_kind,
            call_id=call_id,
            text=text,
            exit_code=exit_code,
            is_error=failed,
        )
        read = shell_read(call.command, call.cwd, text) if call and exit_code == 0 else None
        if read is not None and not failed:
            self.emit(
                line,
                kind="tool_result",
                tool=name,
                tool_kind="read",
                call_id=f"{call_id}:read",
                **read,
            )

    def roll_back(self, line: int, turns: int) -> None:
        """Drop the last ``turns`` user turns, as Codex does when it rebuilds history."""
        users = [i for i, e in enumerate(self.events) if e.kind == "user"]
        if turns <= 0:
            return
        cut = users[-turns] if len(users) >= turns else (users[0] if users else len(self.events))
        dropped = len(self.events) - cut
        if dropped:
            self.skipped["rolled_back"] = self.skipped.get("rolled_back", 0) + dropped
            log.debug(
                "%s:%d: rollback of %d turns drops %d events", self.source, line, turns, dropped
            )
        del self.events[cut:]

    def warn(self, line: int, message: str) -> None:
        self.warnings.append(ParseWarning(file=self.source, line=line, message=message))
