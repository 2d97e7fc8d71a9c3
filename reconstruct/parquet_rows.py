"""What one parquet row of a session dump is: the JSON value it came from (less the nulls the
conversion filled in) and where it stands to session boundaries (:func:`marker`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson
import pyarrow as pa

from trajforge.reconstruct.formats.claude_code import BOOKKEEPING
from trajforge.reconstruct.formats.codex import ENVELOPE_TYPES, ITEM_TYPES
from trajforge.reconstruct.formats.pi import ENTRY_TYPES

Convert = Callable[[Any], Any]
KNOWN_TYPES = (
    ENTRY_TYPES | BOOKKEEPING | ENVELOPE_TYPES | ITEM_TYPES | {"session", "user", "assistant"}
)
CLAUDE_LOOSE = frozenset({"summary", "file-history-snapshot"})
"""Claude Code lines without a ``sessionId``: they go with the session the next line names."""
BARE_META_KEYS = frozenset({"id", "timestamp", "instructions", "git"})
LISTS = (pa.ListType, pa.LargeListType, pa.FixedSizeListType)


def is_json(pa_field: pa.Field) -> bool:
    """A field ``datasets`` stored as JSON text: by its type, or by the extension name that a
    pyarrow without the type keeps in the field's metadata."""
    name = getattr(pa_field.type, "extension_name", None)
    meta = pa_field.metadata or {}
    return name == "arrow.json" or meta.get(b"ARROW:extension:name") == b"arrow.json"


def converter(pa_field: pa.Field) -> Convert | None:
    """The column's Python value → the JSON value it came from (None: as it is)."""
    type_ = pa_field.type
    if is_json(pa_field):
        return lambda value: orjson.loads(value) if isinstance(value, str | bytes) else value
    if pa.types.is_struct(type_):
        fields = [(f.name, converter(f)) for f in type_]
        return lambda value: struct(value, fields)
    if isinstance(type_, LISTS) and (inner := converter(type_.value_field)) is not None:
        return lambda value: [None if v is None else inner(v) for v in value]
    return None


def struct(value: dict[str, Any], fields: list[tuple[str, Convert | None]]) -> dict[str, Any]:
    """The object less the nulls the conversion filled in for the fields it lacked."""
    obj: dict[str, Any] = {}
    for name, convert in fields:
        if (item := value.get(name)) is not None:
            obj[name] = convert(item) if convert is not None else item
    return obj


def is_record(row: dict[str, Any] | None) -> bool:
    """A line of a session format trajforge reads (not a table row holding one)."""
    if row is None:
        return False
    known = isinstance(kind := row.get("type"), str) and kind in KNOWN_TYPES
    return known or "record_type" in row or "role" in row or marker(row)[0] != "plain"


def marker(row: dict[str, Any]) -> tuple[str, str | None]:
    """(what the row is to session boundaries, its session id): ``whole`` a whole session by
    itself, ``start`` a session header (``codex`` a Codex one), ``claude`` a Claude Code line
    (id: its ``sessionId``), ``loose`` a Claude Code line without one, ``plain`` any other."""
    kind, payload, messages = row.get("type"), row.get("payload"), row.get("messages")
    if isinstance(row.get("conversations"), list):
        return "whole", None
    if isinstance(messages, list) and messages and all(nonempty(get(m, "role")) for m in messages):
        return "whole", None
    if kind == "session" or row.get("role") == "session_meta":  # pi / STS; hermes gateway
        return "start", nonempty(row.get("id"))
    if kind == "session_meta" and isinstance(payload, dict):
        return "codex", nonempty(payload.get("id"))
    if (
        kind is None
        and nonempty(row.get("id"))
        and "timestamp" in row
        and set(row) <= BARE_META_KEYS
    ):
        return "codex", nonempty(row.get("id"))
    if isinstance(session := row.get("sessionId"), str):
        return "claude", session
    return ("loose" if kind in CLAUDE_LOOSE else "plain"), None


def get(value: Any, key: str) -> Any:
    return value.get(key) if isinstance(value, dict) else None


def nonempty(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
