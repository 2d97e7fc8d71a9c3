"""Reader for pi coding-agent sessions (``@mariozechner/pi-coding-agent``).

A pi session is JSONL: a header ``{"type": "session", "id", "cwd", "version"}`` and entries
(``message`` holding an AgentMessage, ``model_change``, ``compaction``, ...). Per pi's
``core/session-manager.ts``: v1 has no entry ids and is linear (read as pi migrates it: each
entry the child of the one before); v2 added ``id``/``parentId``, so the conversation is the
path from the last entry back to the root; v3 renamed the ``hookMessage`` role to ``custom``.
The entries on the path become Events in ``pi_events``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard

import orjson

from trajforge.errors import FormatError
from trajforge.reconstruct.formats.pi_events import EventBuilder, model_name
from trajforge.reconstruct.formats.pi_tools import str_or_none
from trajforge.reconstruct.inputs import gc_paused, iter_json_lines, sha256_soon
from trajforge.records import ParseWarning, Session, SessionHeader

log = logging.getLogger(__name__)

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

BLANK = frozenset(b" \t\n\r\x0b\x0c")
"""The bytes ``bytes.isspace`` counts as blank: a line starting with none of them is not blank."""

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


def _json_lines(path: Path) -> tuple[Lines, Callable[[], str]]:
    """JSON lines of ``path`` and the sha256 of its bytes (computed on a thread while the lines
    are read, for a large file); a plain file is read only once."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FormatError(f"{path}: cannot read: {exc.strerror}") from None
    digest = sha256_soon(data)
    if data[:2] == b"\x1f\x8b":
        return iter_json_lines(path), digest  # gzip: stream it, tolerating a cut-off member
    return _split_lines(data), digest


def _split_lines(data: bytes) -> Lines:
    """``(lineno, value, error)`` like inputs.iter_json_lines, over bytes already in memory,
    numbered as ``data.split(b"\n")`` would; orjson reads each line through a memoryview, so
    no line is copied out of ``data`` first."""
    view, find, size = memoryview(data), data.find, len(data)
    start = lineno = 0
    while start <= size:
        end = find(b"\n", start)
        if end < 0:
            end = size
        lineno += 1
        if end > start and (data[start] not in BLANK or not data[start:end].isspace()):
            try:
                yield lineno, orjson.loads(view[start:end]), None
            except orjson.JSONDecodeError as exc:
                yield lineno, None, f"not JSON ({exc.msg})"
        start = end + 1


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


def _build_session(group: _Group, source: str, digest_of: Callable[[], str]) -> Session:
    head = group.header or {}
    version = head.get("version", 1 if group.header or not _has_ids(group) else 2)
    if not isinstance(version, int) or isinstance(version, bool):
        version = 1
    path, off_path = _conversation_path(group, version, source)
    builder = EventBuilder(source)
    for line, entry in path:
        builder.entry(line, entry)
    if off_path:
        builder.skipped["off_path"] = off_path
    digest = digest_of()  # the sha256 thread ran while the events were built
    header = SessionHeader(
        harness="pi",
        session_id=head.get("id") or digest[:16],
        source_path=source,
        content_hash=digest,
        harness_version=f"session-v{version}",
        model=model_name(head) or builder.model,
        cwd=str_or_none(head.get("cwd")),
        started_at=str_or_none(head.get("timestamp")),
    )
    log.debug("%s: %d events, skipped %s", source, len(builder.events), builder.skipped)
    return Session.model_construct(
        header=header,
        events=tuple(builder.events),
        warnings=(*group.warnings, *builder.warnings),
        skipped=builder.skipped,
    )


def _has_ids(group: _Group) -> bool:
    """Headless entries with ``id``/``parentId`` are v2+ (a tree); without them, v1 (linear)."""
    return any(isinstance(r.get("id"), str) and "parentId" in r for _, r in group.records)
