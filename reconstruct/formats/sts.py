"""The Hugging Face Hub's Session Trace Simple Format (STS-Format), as the Hub's session-trace
viewer renders it (https://huggingface.co/docs/hub/session-traces-format).

A JSONL file: a header line ``{"type": "session", "harness", "id", "name"?}`` (``harness``
and ``id`` required; any other metadata allowed), then one ``{"type": "message", "message":
{...}}`` envelope a line. A message has a ``role`` (user | assistant | system | tool), text
``content`` and optionally ``reasoningContent``, ``toolCalls`` [{id, function {name,
arguments (a JSON string)}}] on an assistant message, ``toolCallId`` on a tool result,
``timestamp`` (epoch ms) and ``model``.

pi's own session files also start with ``{"type": "session", ...}`` and hold ``{"type":
"message", "message": {...}}`` lines: an STS header is told by its ``harness`` string, which
pi's never has (registry.FORMATS tries ``sts`` before ``pi``). A file whose header lacks
``harness`` or ``id``, or is missing, is claimed only when its lines are STS envelopes (no
``cwd`` in the header, no top-level ``timestamp`` on the entries, as pi always writes), and
reading it is a FormatError naming file, line and field.

The session's harness is the header's ``harness``; its model the messages' ``model``; its
start the first message's ``timestamp``. Tool calls are told from their arguments
(``sts_tools``, ATIF's classification). ``trajforge export sts`` (splits/sts.py) keeps the
fields trajforge had normalised under a ``trajforge`` key of the header and of each message
(extra metadata the spec allows), so that its output reads back to the same events. A header
line later in the file starts the next session (concatenated files).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from trajforge.errors import FormatError
from trajforge.reconstruct.formats.atif_tools import EventLog, cut_offs_of, steers_of
from trajforge.reconstruct.formats.hermes_tools import message_text  # same content parts
from trajforge.reconstruct.formats.sts_tools import (
    HEADER_CUT,
    Json,
    arguments,
    epoch_iso,
    is_broken_sts,
    is_header,
    result_fields,
    text_or_none,
)
from trajforge.reconstruct.inputs import json_line, read_all
from trajforge.records import (
    GitInfo,
    ParseWarning,
    Session,
    SessionHeader,
    sha256_hex,
)

LEAD = b"\xef\xbb\xbf \t\r\n"
HEADER_SHAPE = '{"type": "session", "harness": ..., "id": ...}'


class Line(NamedTuple):
    number: int
    raw: bytes
    value: object | None
    problem: str | None


def _dict(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


class _Reading(EventLog):
    """One session: its header line, then message lines → events."""

    def __init__(self, file: str, header: Line) -> None:
        super().__init__(file)
        self.header = header
        self.record = _dict(header.value)
        self.harness: str = self.record["harness"]
        self.raw: list[bytes] = [header.raw]
        self.model: str | None = None
        self.started: str | None = None

    def line(self, line: Line) -> None:
        self.raw.append(line.raw)
        if line.problem is not None:  # damaged, or read with raw control characters
            self.warn(line.number, line.problem)
        value = line.value
        if value is None:
            return
        if not isinstance(value, dict):
            self.warn(line.number, "not a JSON object")
        elif value.get("type") == "message":
            self.message(line.number, value.get("message"))
        elif value.get("type") == "session":
            why = "a session header lacking 'harness' or 'id': read as a line of this session"
            self.warn(line.number, why)
        else:
            self.skipped[f"{value.get('type')}_line"] += 1

    def message(self, line: int, msg: Any) -> None:
        role = msg.get("role") if isinstance(msg, dict) else None
        if not isinstance(msg, dict) or role not in ("user", "assistant", "system", "tool"):
            self.warn(line, "no message with a role (user|assistant|system|tool)")
            return
        content = msg.get("content")
        if not isinstance(content, str | list | None):
            self.warn(line, "message content is not text; read as empty")
        self.model = self.model or text_or_none(msg.get("model"))
        self.started = self.started or epoch_iso(msg.get("timestamp"))
        if text_or_none(msg.get("reasoningContent")):
            self.skipped["reasoning_content"] += 1
        text, known = message_text(content), _dict(msg.get("trajforge"))
        if role == "user":
            self.add_known(line, known.get("event"), {}, kind="user", text=text)
        elif role == "system":
            self.skipped["system_message"] += 1
        elif role == "tool":
            self._result(line, msg, text, known)
        else:
            self._assistant(line, msg, text, known)

    def _assistant(self, line: int, msg: Json, text: str, known: Json) -> None:
        if text.strip():
            self.add_known(line, known.get("event"), {}, kind="assistant", text=text)
        calls = msg.get("toolCalls")
        if calls is not None and not isinstance(calls, list):
            self.warn(line, "toolCalls is not a list")
        for call in calls if isinstance(calls, list) else ():
            self._call(line, call, _dict(known.get("calls")))

    def _call(self, line: int, call: Any, known: Json) -> None:
        call = _dict(call)
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        name, call_id = function.get("name"), call.get("id")
        args = arguments(function.get("arguments"))
        if not isinstance(name, str) or not isinstance(call_id, str) or args is None:
            self.skipped["unreadable_tool_call"] += 1
            self.warn(line, "unreadable tool call (id, function name, arguments)")
            return
        self.add_call(line, name, call_id, args, known.get(call_id))

    def _result(self, line: int, msg: Json, text: str, known: Json) -> None:
        call_id = msg.get("toolCallId")
        call = self.calls.get(call_id) if isinstance(call_id, str) else None
        mine = known.get("event")
        if call is None and not isinstance(mine, dict):
            self.skipped["tool_result_without_call"] += 1
            return
        inferred = result_fields(call, text, msg, self.harness) if call is not None else {}
        self.add_known(line, mine, inferred, kind="tool_result", text=text)

    def session(self) -> Session:
        marks = _dict(self.record.get("trajforge"))
        return Session(
            header=_header(self),
            events=tuple(self.events),
            warnings=tuple(self.warnings),
            skipped=dict(self.skipped),
            cut_offs=cut_offs_of(marks, len(self.events)),
            steers=steers_of(marks, len(self.events)),
        )


def _header(reading: _Reading) -> SessionHeader:
    """The header line, what trajforge's export kept under ``trajforge``, and the messages."""
    record = reading.record
    mine = _dict(record.get("trajforge"))
    digest = sha256_hex(b"\n".join(reading.raw))
    git = None
    if isinstance(mine.get("git"), dict):
        try:
            git = GitInfo.model_validate(mine["git"])
        except ValidationError:
            reading.warn(reading.header.number, "header: unusable trajforge git info")
    version = mine.get("harness_version") or record.get("harness_version")
    return SessionHeader(
        harness=reading.harness,
        session_id=record["id"],
        source_path=reading.file,
        content_hash=digest,
        harness_version=text_or_none(version),
        model=text_or_none(mine.get("model")) or text_or_none(record.get("model")) or reading.model,
        cwd=text_or_none(mine.get("cwd")) or text_or_none(record.get("cwd")),
        git=git,
        started_at=(
            text_or_none(mine.get("started_at"))
            or epoch_iso(record.get("timestamp"))
            or reading.started
        ),
    )


def _lines(raw: bytes) -> Iterator[Line]:
    for number, chunk in enumerate(raw.split(b"\n"), start=1):
        if chunk.strip():
            value, problem = json_line(chunk)
            yield Line(number, chunk, value, problem)


def _first_header(first: Line | None, file: str) -> Line:
    """The header line, or a FormatError naming file, line and what is missing."""
    if first is None:
        raise FormatError(f"{file}: empty: no STS session header {HEADER_SHAPE}")
    where, record = f"{file}: line {first.number}", first.value
    if not isinstance(record, dict) or record.get("type") != "session":
        why = f" ({first.problem})" if record is None and first.problem else ""
        raise FormatError(f"{where}: no STS session header{why}: the first line is {HEADER_SHAPE}")
    for field in ("harness", "id"):
        if text_or_none(record.get(field)) is None:
            raise FormatError(
                f"{where}: STS session header has no '{field}' (a non-empty string is required)"
            )
    return first


class StsFormat:
    """Session-trace JSONL files in the Hub's Session Trace Simple Format."""

    name = "sts"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when the first line is an STS header (a ``harness`` string), or the file is
        made of STS message envelopes under a header that lacks it (read to a clear error)."""
        lines = head.lstrip(LEAD).split(b"\n", 2)
        first, _ = json_line(lines[0])
        if first is None:  # damaged, or a header line cut off by the end of ``head``
            return len(lines) == 1 and bool(HEADER_CUT.match(lines[0]))
        if is_header(first):
            return True
        second = json_line(lines[1])[0] if len(lines) > 1 else None
        return is_broken_sts(first, second)

    def parse(self, path: Path) -> Iterator[Session | ParseWarning]:
        """One Session per header line; damaged lines become its warnings (file, line)."""
        file = str(path)
        lines = _lines(read_all(path))
        reading = _Reading(file, _first_header(next(lines, None), file))
        for line in lines:
            if is_header(line.value) and text_or_none(_dict(line.value).get("id")):
                yield reading.session()
                reading = _Reading(file, line)
            else:
                reading.line(line)
        yield reading.session()
