"""Reader for pi coding-agent sessions (``@mariozechner/pi-coding-agent``).

A pi session is JSONL: a header ``{"type": "session", "id", "cwd", "version"}`` and entries
(``message`` holding an AgentMessage, ``model_change``, ``compaction``, ...). Per pi's
``core/session-manager.ts``: v1 has no entry ids and is linear (read as pi migrates it: each
entry the child of the one before); v2 added ``id``/``parentId``, so the conversation is the
path from the last entry back to the root; v3 renamed the ``hookMessage`` role to ``custom``.
The entries on the path become Events in ``pi_events``.

pi makes each entry the child of the one before unless the user goes back to an earlier entry
and goes on from there, so most files are one chain: those are read in one pass, each line's
JSON turned into Events and let go at once (:func:`_read_chain`). A file that is not (a branch,
a repeated or missing id, lines before the header, gzip) is read whole and its tree followed
(:func:`_read_whole`); the two give the same Sessions (``tests/reconstruct/test_pi_chain.py``).
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
from trajforge.reconstruct.inputs import (
    damaged_line,
    gc_paused,
    is_sessions_index,
    iter_json_lines,
    json_line,
    read_head,
    sha256_soon,
)
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
NOT_FOUND = "not found: the path stops here"
"""What a parentId naming no entry of the file gets: the conversation path starts there."""
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
        whose header line is missing); or the store of session keys OpenClaw keeps beside its
        pi session files (read as nothing)."""
        if is_session_store(path, head):
            return True
        first = head.lstrip().split(b"\n", 1)[0]
        record, _ = json_line(first)
        if record is None:  # a line cut off by the end of ``head``
            return first.startswith(b'{"type":"session","') or bool(ENTRY_START.match(first))
        return _is_header(record) or _is_entry(record)

    def parse(self, path: Path) -> Iterator[Session | ParseWarning]:
        """One Session per header; bad lines in it become ``Session.warnings``, lines before
        the first header are yielded as ParseWarnings (pi entries there make a headless one)."""
        if path.name == "sessions.json" and is_session_store(path, read_head(path)):
            return  # OpenClaw's index of the session files beside it: nothing to read
        with gc_paused():  # the file's JSON is freed inside: the collector never walks it
            items = _read(path)
        yield from items


def is_session_store(path: Path, head: bytes) -> bool:
    """OpenClaw's ``sessions.json``: its map of session keys (``agent:main:main``) to entries
    (``sessionId``, ``updatedAt``, …) kept beside the ``<sessionId>.jsonl`` files."""
    return is_sessions_index(path, head, b'"sessionId"', b'"updatedAt"')


def _read(path: Path) -> list[Session | ParseWarning]:
    """What :meth:`PiFormat.parse` yields, in order."""
    data, digest = _load(path)
    if data is not None and (sessions := _read_chain(data, str(path), digest)) is not None:
        return list(sessions)
    return _read_whole(path, data, digest)


def _read_whole(
    path: Path, data: bytes | None, digest: Callable[[], str]
) -> list[Session | ParseWarning]:
    """Any file: every record held until the whole file is read, each session's conversation
    path then followed through its entry tree (``data`` None: stream the gzip file)."""
    source = str(path)
    lines = iter_json_lines(path) if data is None else _split_lines(data)
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


def _read_chain(data: bytes, source: str, digest: Callable[[], str]) -> list[Session] | None:
    """The Sessions of a file read in one pass, each entry turned into Events as its line is
    parsed and its JSON let go at once: for a file that starts with a session header and whose
    v2+ entries each follow the one before (no branch), pi's usual file, the conversation path
    is every entry in file order. None for any other file, which :func:`_read` reads whole."""
    sessions: list[Session] = []
    chain: _Chain | None = None
    for line, value, error in _split_lines(data):
        if type(value) is dict and type(kind := value.get("type")) is str:
            if error is not None:  # read with raw control characters: _read_whole says so
                return None
            if kind == "session" and _is_header(value):
                if chain is not None and not chain.close(sessions, digest):
                    return None
                chain = _Chain(value, source)
            elif chain is None or not chain.add(line, value):
                return None
        elif chain is None:
            return None
        else:
            message = NOT_PI if value is not None or error is None else error
            chain.warnings.append(ParseWarning(file=source, line=line, message=message))
    return sessions if chain is not None and chain.close(sessions, digest) else None


class _Chain:
    """One session of :func:`_read_chain`: its entries go to the EventBuilder as they come,
    while a v2+ session checks they stay one chain (ids unique, each parentId the id before)."""

    def __init__(self, head: dict[str, Any], source: str) -> None:
        self.head, self.version = head, _version(head, 1)
        self.tree = self.version >= 2
        self.builder = EventBuilder(source)
        self.warnings: list[ParseWarning] = []
        self.ids: set[str] = set()
        self.last: str | None = None
        """Id of the entry before (v2+); None before the first."""
        self.root: tuple[int, object] = (0, None)
        """Line and parentId of the first entry (v2+)."""

    def add(self, line: int, entry: dict[str, Any]) -> bool:
        """Build the Events of ``entry``; False when it breaks the chain."""
        if self.tree:
            entry_id, parent = entry.get("id"), entry.get("parentId")
            if not isinstance(entry_id, str) or entry_id in self.ids:
                return False
            if self.last is None:
                self.root = (line, parent)
            elif parent != self.last:
                return False
            self.ids.add(entry_id)
            self.last = entry_id
        self.builder.entry(line, entry)
        return True

    def close(self, sessions: list[Session], digest: Callable[[], str]) -> bool:
        """Append the Session; False when the first entry's parent is an entry of the file
        (the path would go on through it)."""
        line, parent = self.root
        if isinstance(parent, str):
            if parent in self.ids:
                return False
            message = f"parentId {parent!r} {NOT_FOUND}"
            self.warnings.append(ParseWarning(file=self.builder.source, line=line, message=message))
        sessions.append(_session(self.head, self.version, self.builder, self.warnings, digest))
        return True


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


def _load(path: Path) -> tuple[bytes | None, Callable[[], str]]:
    """The bytes of ``path`` (None for gzip, which is streamed so that a cut-off member keeps
    what came before it) and their sha256, computed on a thread while the lines are read for a
    large file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FormatError(f"{path}: cannot read: {exc.strerror}") from None
    return (None if data[:2] == b"\x1f\x8b" else data), sha256_soon(data)


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
                yield lineno, *damaged_line(exc)
        start = end + 1


def _group_records(lines: Lines, source: str) -> tuple[list[_Group], _Group]:
    """Split the file at each session header; records before the first header are ``loose``."""
    groups: list[_Group] = []
    current = loose = _Group(None)
    for line, value, error in lines:
        if type(value) is dict and type(kind := value.get("type")) is str:
            if kind == "session" and _is_header(value):
                current = _Group(value)
                groups.append(current)
            else:
                current.records.append((line, value))
            if error is None:
                continue  # else: read with raw control characters, which the warning says
        elif value is not None or error is None:
            error = NOT_PI
        current.warnings.append(ParseWarning(file=source, line=line, message=error or NOT_PI))
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
            problem = problem or NOT_FOUND
            group.warnings.append(
                ParseWarning(
                    file=source, line=path[-1][0], message=f"parentId {parent!r} {problem}"
                )
            )
    path.reverse()
    return path, len(by_id) - len(path)


def _build_session(group: _Group, source: str, digest_of: Callable[[], str]) -> Session:
    head = group.header or {}
    version = _version(head, 1 if group.header or not _has_ids(group) else 2)
    path, off_path = _conversation_path(group, version, source)
    builder = EventBuilder(source)
    for line, entry in path:
        builder.entry(line, entry)
    if off_path:
        builder.skipped["off_path"] = off_path
    return _session(head, version, builder, group.warnings, digest_of)


def _version(head: dict[str, Any], default: int) -> int:
    version = head.get("version", default)
    return version if isinstance(version, int) and not isinstance(version, bool) else 1


def _session(
    head: dict[str, Any],
    version: int,
    builder: EventBuilder,
    warnings: list[ParseWarning],
    digest_of: Callable[[], str],
) -> Session:
    """The Session of ``head`` and the Events built, after the warnings of its lines."""
    digest = digest_of()  # the sha256 thread ran while the events were built
    header = SessionHeader(
        harness="pi",
        session_id=head.get("id") or digest[:16],
        source_path=builder.source,
        content_hash=digest,
        harness_version=f"session-v{version}",
        model=model_name(head) or builder.model,
        cwd=str_or_none(head.get("cwd")),
        started_at=str_or_none(head.get("timestamp")),
    )
    log.debug("%s: %d events, skipped %s", builder.source, len(builder.events), builder.skipped)
    return Session.model_construct(
        header=header,
        events=tuple(builder.events),
        warnings=(*warnings, *builder.warnings),
        skipped=builder.skipped,
        cut_offs=tuple(builder.cut_offs),
        steers=tuple(builder.steers),
    )


def _has_ids(group: _Group) -> bool:
    """Headless entries with ``id``/``parentId`` are v2+ (a tree); without them, v1 (linear)."""
    return any(isinstance(r.get("id"), str) and "parentId" in r for _, r in group.records)
