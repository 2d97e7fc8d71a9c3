"""hermes ShareGPT trajectories → Sessions (tool calls paired by position with their responses)."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from typing import Any

from trajforge.reconstruct.formats.hermes_tools import (
    as_object,
    call_fields,
    loads_loose,
    reports_error,
    result_fields,
    split_steer,
)
from trajforge.records import Event, ParseWarning, Session, SessionHeader, SourcePos, sha256_hex

RECORD_FIELDS = frozenset(
    {
        "conversations",
        "timestamp",
        "model",
        "completed",
        "query",
        "session_id",
        "prompt_index",
        "metadata",
        "partial",
        "api_calls",
        "toolsets_used",
        "tool_stats",
        "tool_error_counts",
    }
)
_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.S)
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)
_TOOL_RESPONSE = re.compile(r"<tool_response>(.*?)(?:</tool_response>|\Z)", re.S)


class Builder:
    """Collects the events, warnings and skip counts of one session."""

    def __init__(self, file: str, line: int) -> None:
        self.file = file
        self.line = line
        self.events: list[Event] = []
        self.warnings: list[ParseWarning] = []
        self.skipped: Counter[str] = Counter()
        self.cwd: str | None = None
        self._calls: dict[str, Event] = {}
        self._alias: dict[str, str] = {}
        self.steers: list[int] = []

    def warn(self, message: str, line: int | None = None) -> None:
        self.warnings.append(ParseWarning(file=self.file, line=line or self.line, message=message))

    def add(self, line: int, **fields: Any) -> Event:
        event = Event(source=SourcePos(file=self.file, line=line), **fields)
        self.events.append(event)
        return event

    def message(self, kind: str, text: str, line: int) -> None:
        text = _THINK.sub("", text).strip()
        if text:
            self.add(line, kind=kind, text=text)

    def call(self, name: str, arguments: dict[str, Any], call_id: str, line: int) -> None:
        if call_id in self._calls:  # some servers reuse ids ("call_0"): keep ours unique
            self._alias[call_id] = f"{call_id}#{len(self.events)}"
        else:
            self._alias.pop(call_id, None)
        call_id = self._alias.get(call_id, call_id)
        fields = call_fields(name, arguments)
        if fields.pop("problem", None):
            self.warn(f"{name} call {call_id} lacks the arguments hermes requires", line)
        event = self.add(
            line, kind="tool_call", tool=name, call_id=call_id, arguments=arguments, **fields
        )
        self._calls[call_id] = event

    def result(self, call_id: str, name: str | None, content: Any, line: int) -> None:
        call_id = self._alias.get(call_id, call_id)
        call = self._calls.get(call_id)
        if call is None:
            self.skipped["orphan_tool_response"] += 1
            self.warn(f"tool response {call_id} has no matching call", line)
            return
        content, steer = split_steer(content)
        error = reports_error(content)
        fields = {"is_error": error, **result_fields(call, content, error)}
        self.add(
            line,
            kind="tool_result",
            tool=name or call.tool,
            tool_kind=call.tool_kind,
            call_id=call_id,
            **fields,
        )
        self._learn_cwd(call, content)
        if steer is not None:  # the person's message, delivered into the running turn
            self.steers.append(len(self.events))
            self.add(line, kind="user", text=steer)

    def _learn_cwd(self, call: Event, content: Any) -> None:
        """A relative path's ``resolved_path`` in a file-tool result reveals the session cwd."""
        if self.cwd or not call.path or call.path.startswith(("/", "~")):
            return
        resolved = content.get("resolved_path") if isinstance(content, dict) else None
        rel = posixpath.normpath(call.path)
        if isinstance(resolved, str) and resolved.endswith("/" + rel):
            self.cwd = resolved[: -len(rel) - 1] or "/"

    def session(self, header: SessionHeader) -> Session:
        return Session(
            header=header,
            events=tuple(self.events),
            warnings=tuple(self.warnings),
            skipped=dict(self.skipped),
            steers=tuple(self.steers),
        )


def _parse_calls(text: str, build: Builder) -> list[tuple[str, dict[str, Any]] | None]:
    calls: list[tuple[str, dict[str, Any]] | None] = []
    for block in _TOOL_CALL.findall(text):
        data = loads_loose(block.strip())
        name = data.get("name") if isinstance(data, dict) else None
        args = as_object(data.get("arguments", {})) if isinstance(data, dict) else None
        if not isinstance(name, str) or not isinstance(args, dict):
            build.warn(f"unreadable <tool_call> block: {block.strip()[:80]!r}")
            build.skipped["unreadable_tool_call"] += 1
            calls.append(None)
        else:
            calls.append((name, args))
    return calls


def _parse_responses(text: str) -> list[tuple[str | None, str | None, Any]]:
    """``(tool_call_id, name, content)`` per ``<tool_response>`` block."""
    found: list[tuple[str | None, str | None, Any]] = []
    for block in _TOOL_RESPONSE.findall(text):
        data = loads_loose(block.strip())
        if isinstance(data, dict) and "content" in data:
            call_id = data.get("tool_call_id")
            name = data.get("name")
            found.append(
                (
                    call_id if isinstance(call_id, str) and call_id else None,
                    name if isinstance(name, str) else None,
                    as_object(data["content"]),
                )
            )
        else:
            found.append((None, None, block.strip()))
    return found


def _tool_round(build: Builder, gpt: str, tool: str | None, turn: int) -> None:
    """One gpt turn's text and tool calls, paired by position with the next tool turn."""
    build.message("assistant", _TOOL_CALL.sub("", gpt), build.line)
    calls = _parse_calls(gpt, build)
    responses = _parse_responses(tool) if tool is not None else []
    ids: list[str] = []
    for k, call in enumerate(calls):
        given = responses[k][0] if k < len(responses) else None
        ids.append(given or f"hermes-{build.line}-{turn}-{k}")
        if call is not None:
            build.call(call[0], call[1], ids[k], build.line)
    for k, (_, name, content) in enumerate(responses):
        if k >= len(calls):
            build.skipped["orphan_tool_response"] += 1
            build.warn(f"turn {turn + 1}: more tool responses than tool calls")
        elif calls[k] is not None:
            build.result(ids[k], name, content, build.line)


HARNESS_NOTICES = ("You've reached the maximum number of tool-calling iterations allowed",)
"""Turns hermes injects as the user when it stops a run: not a request from the person."""


def is_harness_notice(text: str) -> bool:
    """True for a user turn that hermes itself wrote (iteration-limit notice)."""
    return text.lstrip().startswith(HARNESS_NOTICES)


def _conversation(build: Builder, turns: list[Any]) -> None:
    i = 0
    while i < len(turns):
        turn = turns[i]
        role = turn.get("from") if isinstance(turn, dict) else None
        value = turn.get("value") if isinstance(turn, dict) else None
        if not isinstance(role, str) or not isinstance(value, str):
            build.skipped["malformed_turn"] += 1
            build.warn(f"turn {i + 1}: not a {{from, value}} turn")
        elif role == "human" and is_harness_notice(value):
            build.skipped["harness_notice"] += 1
        elif role == "human":
            build.message("user", value, build.line)
        elif role == "gpt":
            nxt = turns[i + 1] if i + 1 < len(turns) else None
            tool = nxt.get("value") if isinstance(nxt, dict) and nxt.get("from") == "tool" else None
            _tool_round(build, value, tool if isinstance(tool, str) else None, i)
            i += 1 if tool is not None else 0
        elif role == "tool":
            build.skipped["orphan_tool_response"] += 1
            build.warn(f"turn {i + 1}: tool turn without a preceding gpt turn")
        else:
            build.skipped[role] += 1
        i += 1


def trajectory_session(record: Any, file: str, line: int, raw: bytes) -> Session | ParseWarning:
    turns = record.get("conversations") if isinstance(record, dict) else None
    if not isinstance(turns, list):
        return ParseWarning(
            file=file, line=line, message="not a hermes trajectory (no 'conversations' list)"
        )
    assert isinstance(record, dict)
    build = Builder(file, line)
    _conversation(build, turns)
    for key in record:
        if key not in RECORD_FIELDS:
            build.skipped[f"field:{key}"] += 1
    digest = sha256_hex(raw)
    sid = record.get("session_id")
    metadata = record.get("metadata")
    model = record.get("model") or (metadata.get("model") if isinstance(metadata, dict) else None)
    header = SessionHeader(
        harness="hermes",
        session_id=sid if isinstance(sid, str) and sid else digest[:16],
        source_path=file,
        content_hash=digest,
        model=model if isinstance(model, str) else None,
        cwd=build.cwd,
    )
    return build.session(header)
