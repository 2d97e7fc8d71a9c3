"""Reader for opencode sessions (npm ``opencode-ai``, https://github.com/sst/opencode).

Three input shapes hold the same records (session info, messages, parts):

- ``opencode export <id>``: ``{"info": {...}, "messages": [{"info": ..., "parts": [...]}]}``;
  a truncated export keeps every complete message.
- the SQLite database ``opencode.db`` (releases after 1.1): tables ``session`` (columns),
  ``message`` and ``part`` (JSON in ``data``, ids in columns); one database holds many
  sessions. Gzipped databases are read too.
- the legacy ``storage/`` tree: ``session/<project>/<ses>.json``,
  ``message/<ses>/<msg>.json``, ``part/<msg>/<prt>.json``.

Events are built by :mod:`.opencode_events`. Source positions: export → 1-based index of
the part in the file; database → the part's rowid; storage → the part's file, line 1.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import logging
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from trajforge.errors import FormatError
from trajforge.reconstruct.formats.opencode_events import (
    Json,
    RawMessage,
    RawSession,
    build_session,
    created_ms,
)
from trajforge.reconstruct.inputs import file_hash, read_all, read_head
from trajforge.records import ParseWarning, Session, SourcePos, canonical_json, sha256_hex

log = logging.getLogger(__name__)

SQLITE_MAGIC = b"SQLite format 3\x00"
EXPORT_HEAD = re.compile(rb'\A\s*\{\s*"info"\s*:')


class OpencodeFormat:
    """opencode exports, ``opencode.db`` databases and legacy ``storage/`` trees."""

    name = "opencode"

    def sniff(self, path: Path, head: bytes) -> bool:
        """Export JSON, an opencode SQLite database, or a storage tree (empty head)."""
        if not head:
            return path.is_dir() and _is_storage(path)
        if head.startswith(SQLITE_MAGIC):
            try:
                with _sqlite_file(path) as plain:
                    return _has_opencode_tables(plain)
            except (sqlite3.DatabaseError, OSError, EOFError):
                return "opencode" in path.name
        if EXPORT_HEAD.match(head):
            return True
        return head.lstrip().startswith(b"{") and all(
            key in head for key in (b'"info"', b'"messages"', b'"sessionID"')
        )

    def parse(self, path: Path) -> Iterator[Session | ParseWarning]:
        """Every session in ``path``; unreadable records become warnings."""
        if path.is_dir():
            raws: Iterator[RawSession | ParseWarning] = _read_storage(path)
        elif read_head(path, len(SQLITE_MAGIC)) == SQLITE_MAGIC:
            raws = _read_db(path)
        else:
            raws = iter([_read_export(path)])
        for raw in raws:
            yield raw if isinstance(raw, ParseWarning) else build_session(raw)


# --- export JSON ---------------------------------------------------------------------------


def _read_export(path: Path) -> RawSession:
    source = str(path)
    text = read_all(path).decode("utf-8", errors="replace")
    if not text.strip():
        raise FormatError(f"{path}: empty file")
    try:
        data = orjson.loads(text)
        warnings: list[ParseWarning] = []
    except orjson.JSONDecodeError as exc:
        data, warnings = _salvage(text, source, str(exc))
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("info"), dict)
        or not isinstance(data.get("messages"), list)
    ):
        raise FormatError(f"{path}: not an opencode export (no 'info' and 'messages')")
    raw = RawSession(data["info"], source, file_hash(path), warnings=warnings)
    index = 0
    for number, message in enumerate(data["messages"], start=1):
        if not _valid_message(message):
            raw.warnings.append(
                ParseWarning(
                    file=source, line=index + 1, message=f"messages[{number - 1}] is not a message"
                )
            )
            continue
        msg = RawMessage(message["info"])
        for part in message["parts"]:
            index += 1
            if isinstance(part, dict):
                msg.parts.append((SourcePos(file=source, line=index), part))
            else:
                raw.warnings.append(
                    ParseWarning(
                        file=source,
                        line=index,
                        message=(f"messages[{number - 1}]: part {index} is not a JSON object"),
                    )
                )
        raw.messages.append(msg)
    return raw


def _valid_message(message: Any) -> bool:
    return (
        isinstance(message, dict)
        and isinstance(message.get("info"), dict)
        and isinstance(message.get("parts"), list)
    )


def _salvage(text: str, source: str, error: str) -> tuple[Any, list[ParseWarning]]:
    """Recover ``info`` and every complete message of a truncated export."""
    decoder = json.JSONDecoder()
    start = re.match(r'\s*\{\s*"info"\s*:\s*', text)
    if start is None:
        raise FormatError(f"{source}: not an opencode export (not JSON: {error})")
    try:
        info, pos = decoder.raw_decode(text, start.end())
    except json.JSONDecodeError as exc:
        raise FormatError(f"{source}: not an opencode export ('info' unreadable: {exc})") from None
    messages: list[Any] = []
    head = re.compile(r'\s*,\s*"messages"\s*:\s*\[\s*').match(text, pos)
    pos = head.end() if head else pos
    while head:
        try:
            message, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        messages.append(message)
        sep = re.compile(r"\s*([,\]])\s*").match(text, pos)
        if sep is None or sep.group(1) == "]":
            break
        pos = sep.end()
    line = text.count("\n", 0, pos) + 1
    warning = ParseWarning(
        file=source,
        line=line,
        message=(
            f"export is not valid JSON ({error}); kept 'info' and {len(messages)} complete messages"
        ),
    )
    return {"info": info, "messages": messages}, [warning]


# --- SQLite database -----------------------------------------------------------------------


@contextlib.contextmanager
def _sqlite_file(path: Path) -> Iterator[Path]:
    """``path`` itself, or a decompressed temporary copy of a gzipped database."""
    with path.open("rb") as fh:
        gzipped = fh.read(2) == b"\x1f\x8b"
    if not gzipped:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="trajforge-opencode-") as tmp:
        plain = Path(tmp) / "opencode.db"
        with gzip.open(path, "rb") as src, plain.open("wb") as out:
            shutil.copyfileobj(src, out)
        yield plain


def _connect(path: Path) -> sqlite3.Connection:
    """Read-only; without a ``-wal`` file beside it, immutable so nothing is written there."""
    wal = path.with_name(path.name + "-wal").exists()
    mode = "mode=ro" if wal else "mode=ro&immutable=1"
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def _has_opencode_tables(path: Path) -> bool:
    conn = _connect(path)
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    finally:
        conn.close()
    return {"session", "message", "part"} <= names


def _read_db(path: Path) -> Iterator[RawSession | ParseWarning]:
    source = str(path)
    try:
        with _sqlite_file(path) as plain, contextlib.closing(_connect(plain)) as conn:
            try:
                rows = conn.execute("SELECT rowid, * FROM session ORDER BY time_created, id")
                sessions = rows.fetchall()
            except sqlite3.DatabaseError as exc:
                raise FormatError(f"{path}: not a readable opencode database: {exc}") from None
            if not sessions:
                yield ParseWarning(file=source, line=1, message="opencode database has no sessions")
            for row in sessions:
                yield _db_session(conn, row, source)
    except (OSError, EOFError) as exc:
        raise FormatError(f"{path}: cannot read database: {exc}") from None


def _db_session(conn: sqlite3.Connection, row: sqlite3.Row, source: str) -> RawSession:
    keys = row.keys()
    col = {k: row[k] for k in keys}
    model = _json_column(col.get("model"))
    info: Json = {
        "id": col["id"],
        "directory": col.get("directory"),
        "version": col.get("version"),
        "title": col.get("title"),
        "parentID": col.get("parent_id"),
        "model": model,
        "time": {"created": col.get("time_created")},
    }
    raw = RawSession(info, source)
    try:
        _db_messages(conn, raw)
    except sqlite3.DatabaseError as exc:
        raw.warnings.append(
            ParseWarning(
                file=source,
                line=col["rowid"],
                message=(
                    f"session row {col['rowid']} ({col['id']}): "
                    f"database unreadable past here: {exc}"
                ),
            )
        )
    raw.content_hash = sha256_hex(canonical_json(_as_export(raw)))
    return raw


def _db_messages(conn: sqlite3.Connection, raw: RawSession) -> None:
    sid = raw.info["id"]
    by_id: dict[str, RawMessage] = {}
    query = "SELECT rowid, id, data FROM message WHERE session_id = ? ORDER BY time_created, id"
    for row in conn.execute(query, (sid,)):
        data = _row_json(row, "message", raw)
        if data is not None:
            by_id[row["id"]] = RawMessage({**data, "id": row["id"], "sessionID": sid})
            raw.messages.append(by_id[row["id"]])
    query = "SELECT rowid, id, message_id, data FROM part WHERE session_id = ? ORDER BY id"
    for row in conn.execute(query, (sid,)):
        data = _row_json(row, "part", raw)
        message = by_id.get(row["message_id"])
        if data is not None and message is not None:
            part = {**data, "id": row["id"], "messageID": row["message_id"], "sessionID": sid}
            message.parts.append((SourcePos(file=raw.source, line=row["rowid"]), part))


def _row_json(row: sqlite3.Row, table: str, raw: RawSession) -> Json | None:
    try:
        data = orjson.loads(row["data"])
    except (orjson.JSONDecodeError, TypeError) as exc:
        data = exc
    if isinstance(data, dict):
        return data
    raw.warnings.append(
        ParseWarning(
            file=raw.source,
            line=row["rowid"],
            message=(f"{table} row {row['rowid']} ({row['id']}): data is not a JSON object"),
        )
    )
    return None


def _json_column(value: Any) -> Any:
    if not isinstance(value, str | bytes):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return None


def _as_export(raw: RawSession) -> Json:
    return {
        "info": raw.info,
        "messages": [{"info": m.info, "parts": [p for _, p in m.parts]} for m in raw.messages],
    }


# --- legacy storage tree -------------------------------------------------------------------


def _is_storage(path: Path) -> bool:
    return all((path / name).is_dir() for name in ("session", "message", "part"))


def _load_file(path: Path, warnings: list[ParseWarning]) -> Json | None:
    try:
        data = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        warnings.append(ParseWarning(file=str(path), line=1, message=f"unreadable: {exc}"))
        return None
    if not isinstance(data, dict):
        warnings.append(ParseWarning(file=str(path), line=1, message="not a JSON object"))
        return None
    return data


def _read_storage(root: Path) -> Iterator[RawSession | ParseWarning]:
    files = sorted((root / "session").glob("*/*.json"))
    if not files:
        raise FormatError(f"{root}: opencode storage tree without session files")
    for file in files:
        warnings: list[ParseWarning] = []
        info = _load_file(file, warnings)
        if info is None or not isinstance(info.get("id"), str):
            yield from warnings or [ParseWarning(file=str(file), line=1, message="no session id")]
            continue
        raw = RawSession(info, str(root), warnings=warnings)
        for msg_file in sorted((root / "message" / info["id"]).glob("*.json")):
            msg_info = _load_file(msg_file, warnings)
            if msg_info is None:
                continue
            message = RawMessage(msg_info)
            for part_file in sorted((root / "part" / msg_file.stem).glob("*.json")):
                part = _load_file(part_file, warnings)
                if part is not None:
                    message.parts.append((SourcePos(file=str(part_file), line=1), part))
            raw.messages.append(message)
        raw.messages.sort(key=lambda m: (created_ms(m.info), str(m.info.get("id", ""))))
        raw.content_hash = sha256_hex(canonical_json(_as_export(raw)))
        yield raw
