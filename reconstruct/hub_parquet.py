"""Sessions read back from the parquet the Hugging Face Hub serves for a dataset.

The Hub's ``datasets`` json builder (revision ``refs/convert/parquet``, ``<config>/<split>/
0000.parquet``, …) writes **records**, a row per JSON line (columns: the lines' keys, null where
a line or nested object lacks one; mixed-type fields as ``arrow.json`` text, their own nulls
kept), turned back into objects less the added nulls and split at session boundaries
(``parquet_rows.marker``); or **agent traces** (``datasets`` 5 with ``teich``), a row per
file, text in ``trace``, path in ``file_path``, written back byte for byte. Uploaded tables
add **text**: a string column holding a session file (written as is) or a JSON line (split like
records) per row.
Lost in the conversion: a line's own nulls, its key order, parsed timestamps' spelling (warned),
and, in a mixed-type field, a string that is JSON by itself (kept as is, so read back as JSON).
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict

from trajforge.reconstruct import parquet_rows as prow

BATCH_ROWS = 256
TEXT_SAMPLE = 64  # first rows whose string columns tell the text shape
TRACE_COLUMNS = frozenset({"harness", "trace", "file_path"})
FIRST_KEYS = ("prompt_index", "conversations")
"""How hermes trajectory lines start (its reader sniffs them and hashes the line for an id)."""
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
SHARD = re.compile(r"(?P<prefix>.*?)(?P<index>\d+)(?P<rest>-of-\d+)?\.parquet")
PARSED_TIMES = re.compile(r"\b(?:timestamp|date32|date64|time32|time64)\[")  # also nested


Row = tuple[str, int]  # parquet file, row index


class RowRange(BaseModel):
    """Rows ``start`` to ``stop`` (exclusive, 0-based) of one parquet file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    parquet: str
    start: int
    stop: int


class WrittenSession(BaseModel):
    """One session file written and the rows it came from (several ranges: across shards)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    rows: tuple[RowRange, ...]


class ParquetSessions(BaseModel):
    """What :func:`sessions_from_parquet` wrote."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    files: tuple[WrittenSession, ...] = ()
    warnings: tuple[str, ...] = ()
    """Rows not read, and what the conversion lost (``parquet: message``)."""
    errors: tuple[str, ...] = ()
    """Files that could not be read (at all, or past some row), and why."""


class Unusable(Exception):
    """A parquet file that cannot be read as sessions; the message says why."""


def sessions_from_parquet(
    files: Sequence[Path], out: Path, batch_rows: int = BATCH_ROWS
) -> ParquetSessions:
    """Write the sessions in ``files`` (in order) to ``out``, one file each, ``batch_rows`` rows
    held at a time. Consecutive shards of a split (``0000.parquet``, ``0001.parquet`` in one
    folder) are one stream. Unusable files are reported in ``errors``, never raised."""
    out.mkdir(parents=True, exist_ok=True)
    sink = _Sink(out)
    previous: Path | None = None
    for path in files:
        if previous is None or not _next_shard(previous, path):
            sink.end()
        try:
            _read_file(path, sink, batch_rows)
            previous = path
        except Unusable as exc:
            sink.errors.append(f"{path}: {exc}")
            previous = None
    sink.end()
    return ParquetSessions(
        files=tuple(sink.files), warnings=tuple(sink.warnings), errors=tuple(sink.errors)
    )


def _next_shard(previous: Path, path: Path) -> bool:
    a, b = SHARD.fullmatch(previous.name), SHARD.fullmatch(path.name)
    if a is None or b is None or previous.parent != path.parent:
        return False
    same = (a["prefix"], a["rest"]) == (b["prefix"], b["rest"])
    return same and int(b["index"]) == int(a["index"]) + 1


def _read_file(path: Path, sink: _Sink, batch_rows: int) -> None:
    try:
        parquet = pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise Unusable(f"not a parquet file ({exc})") from None
    if parquet.metadata.num_rows == 0:
        raise Unusable("no rows")
    sink.source, offset = str(path), 0
    try:
        batches = parquet.iter_batches(batch_size=batch_rows)
        first = next(batches)
        read = _reader(parquet.schema_arrow, first, sink)
        for batch in itertools.chain([first], batches):
            read(batch, offset)
            offset += batch.num_rows
    except (OSError, pa.ArrowException, UnicodeDecodeError) as exc:
        raise Unusable(f"unreadable from row {offset} ({exc})") from None


def _reader(
    schema: pa.Schema, first: pa.RecordBatch, sink: _Sink
) -> Callable[[pa.RecordBatch, int], None]:
    """How this file's rows become session lines, told by its schema and first rows."""
    if set(schema.names) >= TRACE_COLUMNS:
        return lambda batch, offset: _read_texts(batch, offset, sink, "trace", True)
    fields = [(f.name, prow.converter(f)) for f in schema]
    convert: prow.Convert = lambda row: prow.struct(row, fields)  # noqa: E731
    if not any(prow.is_record(_decoded(convert, row)) for row in first.to_pylist()):
        column, whole = _text_column(first)
        if column is not None:
            return lambda batch, offset: _read_texts(batch, offset, sink, column, whole)
        sink.warnings.append(
            f"{sink.source}: no row is a session line of a known harness and no column holds "
            "session text: its rows are written as they are, as one file"
        )
    sink.warnings.extend(
        f"{sink.source}: column {f.name!r} ({f.type}) holds ISO 8601 text the conversion "
        "parsed: written back as ISO 8601, its original spelling is not in the parquet"
        for f in schema
        if PARSED_TIMES.search(str(f.type))
    )
    return lambda batch, offset: _read_records(batch, offset, sink, convert)


def _read_records(batch: pa.RecordBatch, offset: int, sink: _Sink, convert: prow.Convert) -> None:
    for index, row in enumerate(batch.to_pylist(), start=offset):
        if (record := _decoded(convert, row)) is None:
            sink.warn(index, "a JSON column's text does not decode")
        else:
            sink.row(index, record, None)


def _decoded(convert: prow.Convert, row: dict[str, Any]) -> dict[str, Any] | None:
    try:
        record: dict[str, Any] = convert(row)
        return record
    except orjson.JSONDecodeError:
        return None


def _read_texts(batch: pa.RecordBatch, offset: int, sink: _Sink, column: str, whole: bool) -> None:
    """Whole session files (``whole``; named by ``file_path`` where there is one), each written
    as it is, or JSON lines, split at session boundaries, each written as it is. A JSON column
    (agent traces' ``trace``) holds a JSON string, or the text itself where that is JSON by
    itself: ``datasets`` keeps such a string as it is."""
    as_json = prow.is_json(batch.schema.field(column))
    has_names = "file_path" in batch.schema.names
    names = batch["file_path"].to_pylist() if has_names else itertools.repeat(None)
    for index, value, name in zip(itertools.count(offset), batch[column].to_pylist(), names):
        decoded = _loads(value) if as_json and isinstance(value, str) else None
        text = decoded if isinstance(decoded, str) else value
        kind = _text_kind(text) if isinstance(text, str) else "other"
        if kind == "other" or (not whole and kind != "line"):
            sink.warn(index, "not JSON lines nor a JSON document" if whole else "not a JSON line")
        elif whole:
            sink.whole_file(
                index, text, _file_name(name, ".json" if kind == "document" else ".jsonl")
            )
        else:
            sink.row(index, orjson.loads(text), text.strip().encode())


def _file_name(file_path: Any, suffix: str) -> tuple[str | None, str]:
    """(stem, suffix) of the path a trace was uploaded as, or none and ``suffix``."""
    if not isinstance(file_path, str):
        return None, suffix
    name = PurePosixPath(file_path.replace("\\", "/")).name.removesuffix(".gz")
    suffix = ".json" if name.endswith(".json") else ".jsonl"
    return name.removesuffix(suffix), suffix


def _loads(text: str) -> Any:
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return None


def _text_kind(text: str) -> str:
    """``line`` (one JSON object), ``lines`` (JSONL, told by its first and last lines),
    ``document`` (one JSON value over several lines) or ``other``."""
    stripped = text.strip()
    first, _, rest = stripped.partition("\n")
    if not rest:
        return "line" if isinstance(_loads(first), dict) else "other"
    if isinstance(_loads(first), dict) and isinstance(_loads(rest.rsplit("\n", 1)[-1]), dict):
        return "lines"
    return "document" if isinstance(_loads(stripped), dict | list) else "other"


def _text_column(first: pa.RecordBatch) -> tuple[str | None, bool]:
    """The string column holding session files (True) or JSON lines (False), told by the first
    rows; two candidates of one kind are ambiguous: Unusable."""
    files: list[str] = []
    lines: list[str] = []
    sample = first.slice(0, TEXT_SAMPLE)
    for f in first.schema:
        if pa.types.is_string(f.type) or pa.types.is_large_string(f.type):
            kinds = {_text_kind(v) for v in sample[f.name].to_pylist() if v is not None}
            if kinds and "other" not in kinds:
                (files if kinds != {"line"} else lines).append(f.name)
    found = files or lines
    if len(found) > 1:
        named = ", ".join(repr(n) for n in found)
        raise Unusable(f"columns {named} all hold JSON text: which holds the sessions is ambiguous")
    return (found[0] if found else None), bool(files)


@dataclass
class _Open:
    path: Path
    handle: IO[bytes]
    marker: str
    session: str | None
    ids: set[str] = field(default_factory=set)  # Codex: its id, those it was forked from
    rows: list[list[Any]] = field(default_factory=list)


class _Sink:
    """Writes rows into session files, a new one at each boundary (:func:`.parquet_rows.marker`)."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.source = ""  # the parquet file being read
        self.files: list[WrittenSession] = []
        self.warnings: list[str] = []
        self.errors: list[str] = []
        self.open: _Open | None = None
        self.loose: list[tuple[Row, dict[str, Any], bytes | None]] = []
        self.names: set[str] = set()
        self.counts: Counter[str] = Counter()

    def warn(self, index: int, message: str, source: str | None = None) -> None:
        self.warnings.append(f"{source or self.source}: row {index}: {message}")

    def row(self, index: int, record: dict[str, Any], line: bytes | None) -> None:
        """One JSON line (``line``: as written, None: to write from ``record``)."""
        marker, session = prow.marker(record)
        where, now = (self.source, index), self.open
        if marker == "whole":
            data = line if line is not None else self._dump(where, record, python=True)
            if data is not None:
                self.whole_file(index, data.decode() + "\n", (None, ".jsonl"))
        elif marker == "loose":
            self.loose.append((where, record, line))
        else:
            if marker == "claude" and (
                now is None or (now.marker, now.session) != (marker, session)
            ):
                self._close()  # the loose lines held are the new session's
                self._start(where, marker, session)
            elif marker in ("start", "codex") and not (now and session and session in now.ids):
                self.end()
                self._start(where, marker, session)
            elif now is None:
                self._start(where, marker, None)
            if marker == "codex" and self.open is not None:  # a fork's copied metas continue it
                meta = prow.get(record, "payload") or record
                self.open.ids |= {
                    i for k in ("id", "forked_from_id") if (i := prow.nonempty(meta.get(k)))
                }
            self.end(close=False)
            self._write(where, record, line)

    def whole_file(self, index: int, text: str, name: tuple[str | None, str]) -> None:
        self.end()
        path = self._name((self.source, index), name)
        path.write_bytes(text.encode())
        rows = (RowRange(parquet=self.source, start=index, stop=index + 1),)
        self.files.append(WrittenSession(path=str(path), rows=rows))

    def end(self, close: bool = True) -> None:
        """Write the loose lines held into the open session; close it (``close``)."""
        if self.loose and self.open is None:
            self._start(self.loose[0][0], "loose", None)
        held, self.loose = self.loose, []
        for where, record, line in held:
            self._write(where, record, line)
        if close:
            self._close()

    def _start(self, where: Row, marker: str, session: str | None) -> None:
        path = self._name(where, (session, ".jsonl"))
        self.open = _Open(path, path.open("wb"), marker, session)

    def _close(self) -> None:
        now, self.open = self.open, None
        if now is not None:
            now.handle.close()
            rows = tuple(RowRange(parquet=p, start=a, stop=b) for p, a, b in now.rows)
            self.files.append(WrittenSession(path=str(now.path), rows=rows))

    def _write(self, where: Row, record: dict[str, Any], line: bytes | None) -> None:
        assert self.open is not None
        rows = self.open.rows
        data = line if line is not None else self._dump(where, record, python=False)
        if data is None:
            return
        self.open.handle.write(data + b"\n")
        if rows and rows[-1][0] == where[0] and rows[-1][2] == where[1]:
            rows[-1][2] += 1
        else:
            rows.append([where[0], where[1], where[1] + 1])

    def _name(self, where: Row, name: tuple[str | None, str]) -> Path:
        """``<session id>`` or ``<parquet stem>-<n>`` (its nth session), unique in this run."""
        self.counts[where[0]] += 1
        wanted, suffix = name
        stem = wanted if wanted and SAFE_NAME.fullmatch(wanted) else None
        stem = stem or f"{Path(where[0]).stem}-{self.counts[where[0]]}"
        candidate, n = stem + suffix, 2
        while candidate in self.names:
            candidate, n = f"{stem}-{n}{suffix}", n + 1
        self.names.add(candidate)
        return self.out / candidate

    def _dump(self, where: Row, record: dict[str, Any], python: bool) -> bytes | None:
        """The row as a JSON line: as Python's ``json.dumps`` writes whole-session rows (hermes
        does), compact for the rest (pi, Claude Code, Codex)."""
        try:
            if python:
                first = {k: record[k] for k in FIRST_KEYS if k in record}
                plain = orjson.loads(orjson.dumps({**first, **record}))  # dates as ISO 8601
                return json.dumps(plain, ensure_ascii=False).encode()
            return orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS)
        except (TypeError, ValueError) as exc:
            self.warn(where[1], f"cannot be written as JSON ({exc})", where[0])
            return None
