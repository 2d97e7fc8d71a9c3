"""pi entries on the conversation path → Events, one entry at a time (the reader's hot loop).

Tool results follow pi's ``core/tools/*.ts``: failed bash output ends with ``Command exited
with code N``; read output is the plain file text plus a notice when it stopped early.
"""

from __future__ import annotations

from typing import Any

from trajforge.reconstruct.formats.pi_records import EVENT_FIELDS, event, given, source_pos
from trajforge.reconstruct.formats.pi_tools import (
    CALL_GIVEN,
    RESULT_GIVEN,
    SHELL_CALL_GIVEN,
    SHELL_RESULT_GIVEN,
    exit_code_of,
    normalise,
    read_content,
    str_or_none,
    texts,
)
from trajforge.records import CutOff, Event, ParseWarning, SourcePos

TOOL_KINDS = {
    "read": "read", "write": "write", "edit": "edit", "bash": "shell",
    "exec": "shell", "apply_patch": "patch",
}  # fmt: skip
"""pi's tools, and OpenClaw's ``exec`` (its shell) and ``apply_patch`` (OpenClaw writes pi
session files)."""
_NO_CALL: tuple[None, None, dict[str, Any]] = (None, None, {})
_MESSAGE_GIVEN = given("text")
CUT_OFF = frozenset({"aborted", "error"})
"""pi's ``stopReason`` of an assistant message that was cut off (``errorMessage`` says how)."""
_new_fields = EVENT_FIELDS.copy


def model_name(record: dict[str, Any], model_key: str = "modelId") -> str | None:
    model, provider = record.get(model_key), record.get("provider")
    if not isinstance(model, str) or not model:
        return None
    return f"{provider}/{model}" if isinstance(provider, str) and provider else model


class EventBuilder:
    """Turns the entries on the conversation path into Events, fed in path order."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.warnings: list[ParseWarning] = []
        self.events: list[Event] = []
        self.cut_offs: list[CutOff] = []
        self.steers: list[int] = []
        self.stopped: object = None
        """The last assistant message's ``stopReason`` until the next user message."""
        self.skipped: dict[str, int] = {}
        self.model: str | None = None
        self.calls: dict[str, tuple[str, str, dict[str, Any]]] = {}
        self.line = 0
        self.pos: SourcePos | None = None
        """The SourcePos of ``self.line``: events of one record share it (it is frozen)."""

    def skip(self, name: str) -> None:
        self.skipped[name] = self.skipped.get(name, 0) + 1

    def warn(self, line: int, message: str) -> None:
        self.warnings.append(ParseWarning(file=self.source, line=line, message=message))

    def emit(self, line: int, fields: dict[str, Any], fields_set: set[str]) -> None:
        """Append an Event at ``line`` built from ``fields`` (a copy of EVENT_FIELDS with the
        names in ``fields_set`` set to values this module type-checked, ``arguments`` a dict
        of its own)."""
        if self.line != line:
            self.line = line
            self.pos = source_pos(self.source, line)
        fields["source"] = self.pos
        self.events.append(event(fields, fields_set))

    def message(self, line: int, kind: str, text: str) -> None:
        """A user or assistant message."""
        fields = _new_fields()
        fields["kind"], fields["text"], fields["arguments"] = kind, text, {}
        self.emit(line, fields, _MESSAGE_GIVEN)

    def entry(self, line: int, entry: dict[str, Any]) -> None:
        kind, message = entry["type"], entry.get("message")
        if kind != "message":
            if kind == "model_change" and self.model is None:
                self.model = model_name(entry)
            self.skip(kind)  # compaction: the path goes on through it
        elif not isinstance(message, dict):
            self.warn(line, "message entry without a message object")
        elif (role := message.get("role")) == "assistant":
            self.stopped = message.get("stopReason")
            self.assistant(line, message)
        elif role == "toolResult":
            self.tool_result(line, message)
        elif role == "user":
            if self.stopped == "toolUse":  # the turn was still running: a steering message
                self.steers.append(len(self.events))
            self.stopped = None
            self.message(line, "user", texts(message.get("content")))
        elif role == "bashExecution":
            self.bash_execution(line, message)
        else:  # custom (extension) messages, branch and compaction summaries
            self.skip(f"message:{role}")

    def assistant(self, line: int, message: dict[str, Any]) -> None:
        """Text blocks (thinking excluded) as assistant events, in order with tool calls."""
        if self.model is None:
            self.model = model_name(message, "model")
        content = message.get("content")
        if not isinstance(content, list):
            self.warn(line, "assistant message without a content list")
            return
        said: list[str] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "toolCall":
                if said:
                    self.message(line, "assistant", "\n".join(said))
                    said.clear()
                self.tool_call(line, block)
            elif btype == "text" and isinstance(text := block.get("text"), str):
                said.append(text)
        if said:
            self.message(line, "assistant", "\n".join(said))
        failure = message.get("errorMessage")
        if message.get("stopReason") in CUT_OFF and isinstance(failure, str) and failure:
            self.cut_offs.append(CutOff(after=len(self.events) - 1, failure=failure))

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
        fields = _new_fields()
        fields["kind"], fields["tool"], fields["tool_kind"] = "tool_call", name, tool_kind
        fields["call_id"], fields["arguments"] = call_id, args
        fields_set = CALL_GIVEN if tool_kind == "other" else normalise(fields, tool_kind, args)
        self.emit(line, fields, fields_set)

    def tool_result(self, line: int, message: dict[str, Any]) -> None:
        call_id = message.get("toolCallId")
        if not isinstance(call_id, str):
            self.warn(line, "toolResult without a toolCallId")
            return
        name, tool_kind, args = self.calls.get(call_id, _NO_CALL)
        if name is None:
            name = str_or_none(message.get("toolName"))
            tool_kind = TOOL_KINDS.get(name or "", "other")
        text = texts(message.get("content"))
        is_error = message.get("isError") is True
        fields = _new_fields()
        fields["kind"], fields["tool"], fields["tool_kind"] = "tool_result", name, tool_kind
        fields["call_id"], fields["text"], fields["is_error"] = call_id, text, is_error
        fields["arguments"] = {}
        fields_set = RESULT_GIVEN
        if tool_kind == "shell":
            fields["exit_code"] = exit_code_of(text, is_error, message.get("details"))
            fields_set = SHELL_RESULT_GIVEN
        elif tool_kind == "read" and not is_error:
            fields_set = read_content(fields, args, message.get("details"))
        self.emit(line, fields, fields_set)

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
        call, result = _new_fields(), _new_fields()
        for fields in (call, result):
            fields["tool"], fields["tool_kind"] = "bash", "shell"
            fields["call_id"] = f"bashExecution:{line}"
        call["kind"], call["command"] = "tool_call", command
        call["arguments"] = {"command": command}
        self.emit(line, call, SHELL_CALL_GIVEN)
        result["kind"], result["is_error"], result["exit_code"] = "tool_result", is_error, exit_code
        result["text"], result["arguments"] = str_or_none(output) or "", {}
        self.emit(line, result, SHELL_RESULT_GIVEN)
