"""hermes-agent (Nous Research) sessions: ShareGPT trajectories, ~/.hermes session snapshots,
gateway transcripts and ``hermes sessions export`` output (the last three: hermes_messages.py).

Trajectories (``trajectory_samples.jsonl``, ``failed_trajectories.jsonl``, batch_runner output,
also gzipped) hold one conversation per line: ``{"conversations": [{"from", "value"}], "model",
"timestamp", "completed"}``. ``gpt`` turns carry ``<tool_call>{"name", "arguments"}</tool_call>``
blocks after an optional ``<think>`` block; the following ``tool`` turn carries one
``<tool_response>{"tool_call_id", "name", "content"}</tool_response>`` block per call, in call
order (older dumps have no ``tool_call_id``, so calls and responses pair by position and ids are
synthesised). Session snapshots (``~/.hermes/sessions/session_<id>.json``, written when
``sessions.write_json_snapshots`` is on) hold OpenAI-style ``messages``; their events are
positioned by 1-based message index.
"""

from __future__ import annotations

import logging
import re
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from trajforge.errors import FormatError
from trajforge.reconstruct.formats.hermes_conversation import trajectory_session
from trajforge.reconstruct.formats.hermes_messages import (
    EXPORT_START,
    gateway_session,
    is_export,
    is_gateway,
    snapshot_session,
)
from trajforge.reconstruct.formats.shapes import Shape
from trajforge.reconstruct.inputs import (
    is_sessions_index,
    json_line,
    open_bytes,
    read_all,
    read_head,
)
from trajforge.records import ParseWarning, Session

log = logging.getLogger(__name__)

_TRAJECTORY_START = re.compile(
    rb'^\s*\{\s*(?:"prompt_index"\s*:\s*\d+\s*,\s*)?"conversations"\s*:\s*\[\s*\{\s*"(?:from|value)"'
)
_SNAPSHOT_START = re.compile(rb'^\s*\{\s*"session_id"\s*:\s*"([^"]*)"\s*,')


# ── ShareGPT trajectories ───────────────────────────────────────────────────────────────────


# ── session snapshots (~/.hermes/sessions/session_<id>.json) ────────────────────────────────


# ── input plumbing ──────────────────────────────────────────────────────────────────────────


def _raw_lines(path: Path) -> Iterator[tuple[int, bytes | None, str | None]]:
    """``(lineno, raw, error)`` per line; a broken gzip stream ends with one error item."""
    try:
        fh = open_bytes(path)
    except OSError as exc:
        raise FormatError(f"{path}: cannot read: {exc.strerror}") from None
    with fh:
        lineno = 0
        try:
            for lineno, raw in enumerate(fh, start=1):
                yield lineno, raw, None
        except (OSError, EOFError, zlib.error) as exc:
            yield lineno + 1, None, f"unreadable compressed data: {exc}"


def _line_items(path: Path, seen: Counter[str]) -> Iterator[Session | ParseWarning]:
    file = str(path)
    for lineno, raw, error in _raw_lines(path):
        if raw is None:
            yield ParseWarning(file=file, line=lineno, message=error or "unreadable")
            continue
        if not raw.strip():
            continue
        seen["records"] += 1
        if _TRAJECTORY_START.match(raw) or _SNAPSHOT_START.match(raw) or EXPORT_START.match(raw):
            seen["hermes"] += 1
        record, problem = json_line(raw)
        if problem is not None:  # damaged, or read with raw control characters
            yield ParseWarning(file=file, line=lineno, message=problem)
        if record is not None or problem is None:
            yield _record(record, file, lineno, raw.rstrip(b"\r\n"))


def _record(record: Any, file: str, line: int, raw: bytes) -> Session | ParseWarning:
    """A trajectory, a session snapshot written on one line, or an exported session row."""
    if isinstance(record, dict) and isinstance(record.get("messages"), list):
        exported = "session_id" not in record and "id" in record
        return snapshot_session(record, file, raw, line if exported else None)
    return trajectory_session(record, file, line, raw)


def _document_items(path: Path, data: Any, raw: bytes) -> Iterator[Session | ParseWarning]:
    file = str(path)
    if isinstance(data, dict) and ("messages" in data or "conversations" in data):
        yield _record(data, file, 1, raw)
    elif isinstance(data, list):
        for index, item in enumerate(data, start=1):
            yield trajectory_session(item, file, index, orjson.dumps(item))
    else:
        raise FormatError(
            f"{path}: JSON document is neither a hermes trajectory nor a "
            "hermes session snapshot (no 'conversations' or 'messages')"
        )


class HermesFormat:
    """hermes-agent trajectories (JSONL, gzip), session snapshots (JSON), gateway transcripts
    and session exports (JSONL)."""

    name = "hermes"

    def sniff(self, path: Path, head: bytes) -> bool:
        if _TRAJECTORY_START.match(head) or is_gateway(head) or is_export(head):
            return True
        if is_session_index(path, head):
            return True
        if _SNAPSHOT_START.match(head):
            return b'"session_start"' in head and b'"system_prompt"' in head
        return False

    def twin_key(self, path: Path) -> str | None:
        """The session id in the name of a snapshot ``session_<id>.json`` or of a gateway
        transcript ``<id>.jsonl``: the gateway writes both for one session."""
        name = path.name.removesuffix(".gz")
        if name.startswith("session_") and name.endswith(".json"):
            return name.removeprefix("session_").removesuffix(".json") or None
        if name.endswith(".jsonl"):
            return name.removesuffix(".jsonl") or None
        return None

    def shape(self, path: Path, head: bytes) -> Shape | None:
        """The snapshot (its system prompt holds the working directory, its header the session
        start; hermes never rewrites it with fewer messages) is the richer shape; the gateway
        transcript has no session id or working directory inside."""
        snapshot = _SNAPSHOT_START.match(head)
        if snapshot is not None and self.sniff(path, head):
            return Shape(
                session_id=snapshot.group(1).decode(errors="replace"),
                name="session snapshot",
                rank=2,
            )
        if is_gateway(head):
            sid = path.name.removesuffix(".gz").removesuffix(".jsonl")
            return Shape(session_id=sid, name="gateway transcript", rank=1)
        return None

    def parse(self, path: Path) -> Iterator[Session | ParseWarning]:
        name = path.name.removesuffix(".gz")
        if is_session_index(path, _head(path)):
            return  # the gateway's index of the transcripts beside it: nothing to read
        if is_gateway(_head(path)):
            yield gateway_session(path)
        elif name.endswith(".json") and not _first_line_is_json(path):
            yield from _parse_document(path)
        else:
            yield from _parse_lines(path)


def is_session_index(path: Path, head: bytes) -> bool:
    """``~/.hermes/sessions/sessions.json``: the gateway's map of session keys to entries
    (``session_key``, ``session_id``, …) kept beside the ``<id>.jsonl`` transcripts."""
    return is_sessions_index(path, head, b'"session_id"', b'"session_key"')


def _head(path: Path) -> bytes:
    """The first bytes, or none when even they are unreadable (the line reader reports it)."""
    try:
        return read_head(path)
    except FormatError:
        return b""


def _parse_document(path: Path) -> Iterator[Session | ParseWarning]:
    """A whole-file JSON: a session snapshot, a ``save_sample`` trajectory or a list of them."""
    raw = read_all(path)
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if not HermesFormat().sniff(path, raw[:65536]):
            raise FormatError(f"{path}: not valid JSON ({exc})") from None
        yield ParseWarning(
            file=str(path),
            line=exc.lineno,
            message=f"truncated or broken hermes JSON ({exc.msg}); nothing usable",
        )
        return
    yield from _document_items(path, data, raw)


def _first_line_is_json(path: Path) -> bool:
    """A ``.json`` file whose first line is a whole JSON object is really JSON lines."""
    first = read_head(path).split(b"\n", 1)[0]
    return isinstance(json_line(first)[0], dict) and len(first.strip()) > 2


def _parse_lines(path: Path) -> Iterator[Session | ParseWarning]:
    """Sessions and warnings in file order; FormatError when no line is a hermes trajectory."""
    seen: Counter[str] = Counter()
    pending: list[ParseWarning] = []
    sessions = 0
    for item in _line_items(path, seen):
        if isinstance(item, Session):
            sessions += 1
            yield from pending
            pending.clear()
            yield item
        elif sessions:
            yield item
        else:
            pending.append(item)
    log.debug("%s: %d hermes sessions, %d warnings", path, sessions, len(pending))
    if sessions:
        return
    if seen["hermes"] or (not seen["records"] and not pending):
        yield from pending or [
            ParseWarning(file=str(path), line=1, message="empty file: no hermes trajectories")
        ]
        return
    first = pending[0] if pending else None
    where = f" (line {first.line}: {first.message})" if first else ""
    raise FormatError(f"{path}: no hermes trajectory found{where}")
