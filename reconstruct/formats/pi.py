"""Reader for pi coding-agent sessions (``@mariozechner/pi-coding-agent``).

A pi session is JSONL: a header ``{"type": "session", "id", "cwd", "version"}`` and entries
(``message`` holding an AgentMessage, ``model_change``, ``compaction``, ...). Per pi's
``core/session-manager.ts``: v1 has no entry ids and is linear (read as pi migrates it: each
entry the child of the one before); v2 added ``id``/``parentId``, so the conversation is the
path from the last entry back to the root; v3 renamed the ``hookMessage`` role to ``custom``.
Tool results follow pi's ``core/tools/*.ts``: failed bash output ends with ``Command exited
with code N``; read output is the plain file text plus a notice when it stopped early.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import orjson

from trajforge.errors import FormatError
from trajforge.reconstruct.formats.pi_tools import (
    construct,
    exit_code_of,
    normalise,
    read_content,
    source_pos,
    str_or_none,
    texts,
)
from trajforge.reconstruct.inputs import gc_paused, iter_json_lines
from trajforge.records import Event, ParseWarning, Session, SessionHeader, SourcePos

log = logging.getLogger(__name__)

TOOL_KINDS = {"read": "read", "write": "write", "edit": "edit", "bash": "shell"}
ENTRY_TYPES = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
# read.ts: "[Showing lines A-B of N. Use offset=K to continue.]", "[R more lines in file. Use
# offset=K to continue.]"; until late 2025 "... (Some lines were truncated to N characters for
# display. R more lines not shown. Use offset=K to continue reading)", either part optional.
NOT_PI = "JSON record is not a pi session entry"
HEADLESS = "no session header line: pi entries only (session id and cwd unknown)"
# How pi's JSON.stringify starts an entry (type, then id/parentId in v2+, then timestamp);
# "message" entries carry an AgentMessage object with a role. Claude Code lines are typed
# user/assistant and Codex's old "message" items have no message object, so neither matches.
ENTRY_START = re.compile(
    rb'^\{"type":"(?:message|model_change|thinking_level_change|compaction|branch_summary|'
    rb'custom_message|session_info)",(?:"id":"[^"]*","parentId":(?:null|"[^"]*"),)?'
    rb'"timestamp":"[^"]*",(?:"message":\{"role":"|(?!"message"))'
)

Record = tuple[int, dict[str, Any]]
Lines = Iterator[tuple[int, object | None, str | None]]


class PiFormat:
    """pi session JSONL files (session format v1, v2 and v3)."""

    name = "pi"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when the first non-blank line is a pi session header, or a pi entry (a file
        whose header line is missing)."""
        first = head.lstrip().split(b"\n", 1)[0]
        try:
            record = orjson.loads(first)
        except orjson.JSONDecodeError:  # a line cut off by the end of ``head``
            return first.startswith(b'{"type":"session","') or bool(ENTRY_START.match(first))
        return _is_header(record) or _is_entry(record)

    def parse(self, path: Path) -> Iterator[Session | ParseWarning]:
        """One Session per header; bad lines in it become ``Session.warnings``, lines before
        the first header are yielded as ParseWarnings (pi entries there make a headless one)."""
        with gc_paused():  # the file's JSON is freed inside: the collector never walks it
            items = _read(path)
        yield from items


def _read(path: Path) -> list[Session | ParseWarning]:
    """What :meth:`PiFormat.parse` yields, in order."""
    source = str(path)
    lines, digest = _json_lines(path)
    groups, loose = _group_records(lines, source)
    if not groups and not loose.warnings and not loose.records:
        return [ParseWarning(file=source, line=1, message="empty file: no pi session in it")]
    headless = any(r.get("type") in ENTRY_TYPES for _, r in loose.records)
    if not groups and not headless:
        raise FormatError(f"{path}: not a pi session (no session header, no pi entries)")
    items: list[Session | ParseWarning] = list(loose.warnings)
    if headless:
        items.append(ParseWarning(file=source, line=loose.records[0][0], message=HEADLESS))
        groups.insert(0, loose)
    else:
        items.extend(ParseWarning(file=source, line=n, message=NOT_PI) for n, _ in loose.records)
    items.extend(_build_session(group, source, digest) for group in groups)
    return items


@dataclass
class _Group:
    """One header and the records that follow it, before the next header."""

    header: dict[str, Any] | None
    records: list[Record] = field(default_factory=list)
    warnings: list[ParseWarning] = field(default_factory=list)


def _is_entry(record: object) -> bool:
    """A pi session entry as the first line of a file whose header is missing."""
    if not isinstance(record, dict) or not isinstance(record.get("timestamp"), str):
        return False
    kind = record.get("type")
    if kind == "message":
        message = record.get("message")
        return isinstance(message, dict) and isinstance(message.get("role"), str)
    return kind in ENTRY_TYPES and kind not in ("custom", "label")


def _is_header(record: object) -> TypeGuard[dict[str, Any]]:
    return (
        isinstance(record, dict)
        and record.get("type") == "session"
        and isinstance(record.get("id"), str)
    )


def _json_lines(path: Path) -> tuple[Lines, str]:
    """JSON lines of ``path`` and the sha256 of its bytes; a plain file is read only once."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FormatError(f"{path}: cannot read: {exc.strerror}") from None
    digest = hashlib.sha256(data).hexdigest()
    if data[:2] == b"\x1f\x8b":
        return iter_json_lines(path), digest  # gzip: stream it, tolerating a cut-off member
    return _split_lines(data), digest


def _split_lines(data: bytes) -> Lines:
    """``(lineno, value, error)`` like inputs.iter_json_lines, over bytes already in memory."""
    for lineno, raw in enumerate(data.split(b"\n"), start=1):
        if raw and not raw.isspace():
            try:
                yield lineno, orjson.loads(raw), None
            except orjson.JSONDecodeError as exc:
                yield lineno, None, f"not JSON ({exc.msg})"


def _group_records(lines: Lines, source: str) -> tuple[list[_Group], _Group]:
    """Split the file at each session header; records before the first header are ``loose``."""
    groups: list[_Group] = []
    current = loose = _Group(None)
    for line, value, error in lines:
        if error is not None:
            current.warnings.append(ParseWarning(file=source, line=line, message=error))
        elif type(value) is dict and type(kind := value.get("type")) is str:
            if kind == "session" and _is_header(value):
                current = _Group(value)
                groups.append(current)
            else:
                current.records.append((line, value))
        else:
            current.warnings.append(ParseWarning(file=source, line=line, message=NOT_PI))
    return groups, loose


def _conversation_path(group: _Group, version: int, source: str) -> tuple[list[Record], int]:
    """Records along the conversation path, and how many entries with an id lie off it."""
    if version < 2:
        return group.records, 0
    by_id: dict[str, Record] = {}
    for rec in group.records:
        if isinstance(rec[1].get("id"), str):
            by_id[rec[1]["id"]] = rec
        else:
            group.warnings.append(
                ParseWarning(file=source, line=rec[0], message="v2+ entry without an id")
            )
    leaf = next((r for r in reversed(group.records) if isinstance(r[1].get("id"), str)), None)
    path: list[Record] = []
    seen: set[str] = set()
    while leaf is not None:
        path.append(leaf)
        seen.add(leaf[1]["id"])
        parent = leaf[1].get("parentId")
        if not isinstance(parent, str):
            break
        problem = "makes a cycle" if parent in seen else None
        leaf = None if problem else by_id.get(parent)
        if leaf is None:
            problem = problem or "not found: the path stops here"
            group.warnings.append(
                ParseWarning(
                    file=source, line=path[-1][0], message=f"parentId {parent!r} {problem}"
                )
            )
    path.reverse()
    return path, len(by_id) - len(path)


def _build_session(group: _Group, source: str, digest: str) -> Session:
    head = group.header or {}
    version = head.get("version", 1 if group.header or not _has_ids(group) else 2)
    if not isinstance(version, int) or isinstance(version, bool):
        version = 1
    path, off_path = _conversation_path(group, version, source)
    builder = _EventBuilder(source, group.warnings)
    for line, entry in path:
        builder.entry(line, entry)
    if off_path:
        builder.skipped["off_path"] = off_path
    header = SessionHeader(
        harness="pi",
        session_id=head.get("id") or digest[:16],
        source_path=source,
        content_hash=digest,
        harness_version=f"session-v{version}",
        model=_model_name(head) or builder.model,
        cwd=str_or_none(head.get("cwd")),
        started_at=str_or_none(head.get("timestamp")),
    )
    log.debug("%s: %d events, skipped %s", source, len(builder.events), builder.skipped)
    return Session.model_construct(
        header=header,
        events=tuple(builder.events),
        warnings=tuple(group.warnings),
        skipped=builder.skipped,
    )


def _has_ids(group: _Group) -> bool:
    """Headless entries with ``id``/``parentId`` are v2+ (a tree); without them, v1 (linear)."""
    return any(isinstance(r.get("id"), str) and "parentId" in r for _, r in group.records)


def _model_name(record: dict[str, Any], model_key: str = "modelId") -> str | None:
    model, provider = record.get(model_key), record.get("provider")
    if not isinstance(model, str) or not model:
        return None
    return f"{provider}/{model}" if isinstance(provider, str) and provider else model


class _EventBuilder:
    """Turns the entries on the conversation path into Events."""

    def __init__(self, source: str, warnings: list[ParseWarning]) -> None:
        self.source = source
        self.warnings = warnings
        self.events: list[Event] = []
        self.skipped: dict[str, int] = {}
        self.model: str | None = None
        self.calls: dict[str, tuple[str, str, dict[str, Any]]] = {}
        self.pos = SourcePos(file=source, line=0)
        self.line = 0
        """``self.pos.line``, read without going through the model."""

    def skip(self, name: str) -> None:
        self.skipped[name] = self.skipped.get(name, 0) + 1

    def warn(self, line: int, message: str) -> None:
        self.warnings.append(ParseWarning(file=self.source, line=line, message=message))

    def emit(self, line: int, fields: dict[str, Any]) -> None:
        """Append an Event at ``line`` built from ``fields``, which this module type-checked."""
        if self.line != line:  # events of one record share their (frozen) SourcePos
            self.line = line
            self.pos = source_pos(self.source, line)
        fields["source"] = self.pos
        if "arguments" not in fields:
            fields["arguments"] = {}  # never share the template's mutable default
        self.events.append(construct(Event, fields))

    def entry(self, line: int, entry: dict[str, Any]) -> None:
        kind, message = entry["type"], entry.get("message")
        if kind != "message":
            if kind == "model_change" and self.model is None:
                self.model = _model_name(entry)
            self.skip(kind)  # compaction: the path goes on through it
        elif not isinstance(message, dict):
            self.warn(line, "message entry without a message object")
        elif (role := message.get("role")) == "assistant":
            self.assistant(line, message)
        elif role == "toolResult":
            self.tool_result(line, message)
        elif role == "user":
            self.emit(line, {"kind": "user", "text": texts(message.get("content"))})
        elif role == "bashExecution":
            self.bash_execution(line, message)
        else:  # custom (extension) messages, branch and compaction summaries
            self.skip(f"message:{role}")

    def assistant(self, line: int, message: dict[str, Any]) -> None:
        """Text blocks (thinking excluded) as assistant events, in order with tool calls."""
        if self.model is None:
            self.model = _model_name(message, "model")
        content = message.get("content")
        if not isinstance(content, list):
            self.warn(line, "assistant message without a content list")
            return
        texts: list[str] = []
        for block in content:
            btype = block.get("type") if isinstance(block, dict) else None
            if btype == "text" and isinstance(block.get("text"), str):
                texts.append(block["text"])
            elif btype == "toolCall":
                self.flush_text(line, texts)
                self.tool_call(line, block)
        self.flush_text(line, texts)

    def flush_text(self, line: int, texts: list[str]) -> None:
        if texts:
            self.emit(line, {"kind": "assistant", "text": "\n".join(texts)})
            texts.clear()

    def tool_call(self, line: int, block: dict[str, Any]) -> None:
        name, call_id, args = block.get("name"), block.get("id"), block.get("arguments")
        if not isinstance(name, str) or not isinstance(call_id, str):
            self.warn(line, "toolCall block without a name or id")
            return
        if not isinstance(args, dict):
            self.warn(line, f"toolCall {call_id}: arguments are not an object")
            args = {}
        tool_kind = TOOL_KINDS.get(name, "other")
        self.calls[call_id] = (name, tool_kind, args)
        fields: dict[str, Any] = {
            "kind": "tool_call",
            "tool": name,
            "tool_kind": tool_kind,
            "call_id": call_id,
            "arguments": args,
        }
        if tool_kind != "other":
            normalise(fields, tool_kind, args)
        self.emit(line, fields)

    def tool_result(self, line: int, message: dict[str, Any]) -> None:
        call_id = message.get("toolCallId")
        if not isinstance(call_id, str):
            self.warn(line, "toolResult without a toolCallId")
            return
        name, tool_kind, args = self.calls.get(call_id, (None, None, {}))
        if name is None:
            name = str_or_none(message.get("toolName"))
            tool_kind = TOOL_KINDS.get(name or "", "other")
        text = texts(message.get("content"))
        is_error = message.get("isError") is True
        fields: dict[str, Any] = {
            "kind": "tool_result",
            "tool": name,
            "tool_kind": tool_kind,
            "call_id": call_id,
            "text": text,
            "is_error": is_error,
        }
        if tool_kind == "shell":
            fields["exit_code"] = exit_code_of(text, is_error)
        elif tool_kind == "read" and not is_error:
            read_content(fields, args, message.get("details"))
        self.emit(line, fields)

    def bash_execution(self, line: int, message: dict[str, Any]) -> None:
        """A user ``!command``: a shell call and its result, paired by a synthetic id."""
        command, output = message.get("command"), message.get("output")
        if not isinstance(command, str):
            self.warn(line, "bashExecution without a command")
            return
        exit_code = message.get("exitCode")
        if not isinstance(exit_code, int) or isinstance(exit_code, bool):
            exit_code = None
        is_error = message.get("cancelled") is True or exit_code not in (0, None)
        shell = {"tool": "bash", "tool_kind": "shell", "call_id": f"bashExecution:{line}"}
        self.emit(
            line,
            {**shell, "kind": "tool_call", "arguments": {"command": command}, "command": command},
        )
        self.emit(
            line,
            {
                **shell,
                "kind": "tool_result",
                "is_error": is_error,
                "text": str_or_none(output) or "",
                "exit_code": exit_code,
            },
        )
