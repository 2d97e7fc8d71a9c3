"""STS (the Hub's Session Trace Simple Format) lines, tool calls and results → event fields.

The kind of a tool call is told from its arguments by ATIF's classification
(:func:`trajforge.reconstruct.formats.atif_tools.call_fields`), which knows how every harness
we read spells a write, an edit, a patch, a read or a shell command (``write_file``, ``bash``,
``str_replace_based_edit_tool``, ``apply_patch``, ...). Here: what is particular to STS — the
header and message envelope shapes, arguments as a JSON string, epoch-millisecond timestamps,
and a result told from its text and the optional flags a producer may add to the message.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import orjson

from trajforge.reconstruct.formats.atif_tools import outcome_fields
from trajforge.records import Event

Json = dict[str, Any]
ROLES = frozenset({"user", "assistant", "system", "tool"})
# A header line cut off by the end of the sniffed bytes: its type and its harness seen so far.
HEADER_CUT = re.compile(rb'^\{\s*"type"\s*:\s*"session"\s*,.*"harness"\s*:\s*"[^"]')


def text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def is_header(record: object) -> bool:
    """An STS session header: ``type`` "session" and a ``harness`` (pi's header has none)."""
    return (
        isinstance(record, dict)
        and record.get("type") == "session"
        and text_or_none(record.get("harness")) is not None
    )


def is_envelope(record: object) -> bool:
    """An STS message line: ``{"type": "message", "message": {role, ...}}`` and nothing else
    at its top level (a pi entry has its own ``id`` and ``timestamp`` there)."""
    if not isinstance(record, dict) or record.get("type") != "message":
        return False
    message = record.get("message")
    return (
        set(record) <= {"type", "message"}
        and isinstance(message, dict)
        and message.get("role") in ROLES
        and isinstance(message.get("content", ""), str | None)
    )


def is_broken_sts(first: object, second: object) -> bool:
    """An STS file whose header lacks ``harness`` (or is missing): claimed so that reading it
    names what is missing. pi's header always has ``cwd``, its entries their ``timestamp``."""
    if isinstance(first, dict) and first.get("type") == "session":
        return "cwd" not in first and "version" not in first and is_envelope(second)
    return is_envelope(first)


def arguments(value: Any) -> Json | None:
    """A tool call's arguments: a JSON string (the spec), or an object as some producers write."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            return None
    return value if isinstance(value, dict) else None


def epoch_iso(value: Any) -> str | None:
    """Epoch milliseconds (or an ISO string as written) → an ISO timestamp."""
    if isinstance(value, str):
        return text_or_none(value)
    millis = as_int(value)
    if millis is None:
        return None
    try:
        moment = datetime.fromtimestamp(millis / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def result_fields(call: Event, text: str, message: Json, harness: str) -> Json:
    """A tool result told from its text, and the ``isError`` / ``exitCode`` a producer may add
    to the message (extra metadata the spec allows)."""
    error = message.get("isError") is True or message.get("is_error") is True
    code = as_int(message.get("exitCode", message.get("exit_code")))
    fields: Json = {"tool": call.tool, "call_id": call.call_id}
    return fields | outcome_fields(call, text, harness, error, code)
