"""JSON lines whose strings hold raw control characters (issue 30).

Every harness escapes control characters when it writes a line, but transcripts come back from
tools that write them raw (terminal colour codes, U+0001 bytes in pasted output): strict JSON
rejects such a line, so a whole transcript could be "not a recognised trajectory". They are read
as their producer wrote them, with a warning naming file and line; a line that is broken in any
other way stays a reported damaged line. The variants are derived in tmp_path from the fixture
sessions of each harness (tests/fixtures/sessions/).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from trajforge.reconstruct import pipeline
from trajforge.reconstruct.formats.claude_code import ClaudeCodeFormat
from trajforge.reconstruct.inputs import json_line
from trajforge.records import ParseWarning, Session

SESSIONS = Path(__file__).parents[1] / "fixtures" / "sessions"
QA = "What is the total"
CODEX_QA = "rollout-2025-07-04T09-00-00-0199a004-0000-7000-8000-000000000004.jsonl"
ESC = "\x1b[1m"


def _raw_line(value: Any) -> bytes:
    """``value`` as one JSON line whose strings hold ESC and U+0001 raw, not escaped."""
    text = json.dumps(value).replace("\\u001b", "\x1b").replace("\\u0001", "\x01")
    return text.encode() + b"\n"


def _read(path: Path) -> tuple[list[Session], list[ParseWarning]]:
    fmt = pipeline.detect(path, pipeline.all_formats())
    items = list(fmt.parse(path))
    sessions = [i for i in items if isinstance(i, Session)]
    loose = [i for i in items if isinstance(i, ParseWarning)]
    return sessions, loose + [w for s in sessions for w in s.warnings]


def _claude_exchange(tmp_path: Path) -> tuple[Path, list[bytes]]:
    """A two-line Claude Code transcript (from qa.jsonl's shapes) in which both lines hold a
    raw control character: no line of it is strict JSON."""
    rows = [json.loads(x) for x in (SESSIONS / "claude-code" / "qa.jsonl").read_text().splitlines()]
    user, assistant = rows[0], rows[3]
    user["message"]["content"] = "Why does `ls --color` end each line with \x1b[0m?"
    assistant["parentUuid"] = user["uuid"]
    text = "\x1b[0m is the SGR reset: it ends the colour.\x01"
    assistant["message"]["content"] = [{"type": "text", "text": text}]
    lines = [_raw_line(user), _raw_line(assistant)]
    for line in lines:
        with pytest.raises(orjson.JSONDecodeError, match="control character"):
            orjson.loads(line)  # what made the file "not a recognised trajectory"
    path = tmp_path / "5e550004-0000-4000-8000-000000000004.jsonl"
    path.write_bytes(b"".join(lines))
    return path, lines


def test_claude_code_transcript_with_raw_control_characters_is_read(tmp_path: Path) -> None:
    path, _ = _claude_exchange(tmp_path)
    assert ClaudeCodeFormat().sniff(path, path.read_bytes())
    (session,), warnings = _read(path)
    assert [(e.kind, e.text) for e in session.events] == [
        ("user", "Why does `ls --color` end each line with \x1b[0m?"),
        ("assistant", "\x1b[0m is the SGR reset: it ends the colour.\x01"),
    ]
    assert [(w.file, w.line) for w in warnings] == [(str(path), 1), (str(path), 2)]
    assert all("raw control character" in w.message for w in warnings)
    assert "U+001B" in warnings[0].message
    summary = pipeline.run([path], tmp_path / "out")
    (row,) = summary.inputs
    assert (row.format, row.sessions, row.warnings, row.error) == ("claude-code", 1, 2, None)
    assert summary.warnings[0].startswith(f"{path}:1: raw control character")


def test_truly_broken_lines_are_still_reported(tmp_path: Path) -> None:
    path, lines = _claude_exchange(tmp_path)
    cut = lines[1][: lines[1].index(b"\x1b") + 4]  # a control character, then the end
    path.write_bytes(lines[0] + b'{"type": "user", "message": {"content": "x\x01"}, NaN}\n' + cut)
    (session,), warnings = _read(path)
    assert [e.kind for e in session.events] == ["user"]
    column = len(lines[0][: lines[0].index(b"\x1b")].decode()) + 1
    assert [(w.line, w.message) for w in warnings] == [
        (1, f"raw control character in a JSON string (U+001B at column {column}): read as written"),
        (2, "not JSON (unexpected control character in string)"),
        (3, "not JSON (unexpected control character in string)"),
    ]


@pytest.mark.parametrize(
    "raw",
    [
        b'{"a": "\x01", "b": NaN}',  # json.loads would take NaN, orjson never does
        b'{"a": "\x01\\ud800"}',  # a lone surrogate
        b'{"a": "\x01", "n": 123456789012345678901234567890}',  # over 64 bits
        b'{"a": "\x01"',  # cut off
    ],
)
def test_a_lenient_read_takes_nothing_but_control_characters(raw: bytes) -> None:
    value, problem = json_line(raw)
    assert value is None and problem == "not JSON (unexpected control character in string)"


def _inject(source: Path, target: Path, needle: str = QA) -> int:
    """Copy ``source`` to ``target`` with a raw ESC sequence before the first ``needle``;
    the number of the line it went into."""
    lines = source.read_bytes().split(b"\n")
    index = next(i for i, line in enumerate(lines) if needle.encode() in line)
    lines[index] = lines[index].replace(needle.encode(), (ESC + needle).encode(), 1)
    data = b"\n".join(lines)
    target.write_bytes(gzip.compress(data) if target.name.endswith(".gz") else data)
    return index + 1


@pytest.mark.parametrize(
    ("harness", "fixture", "name", "needle"),
    [
        ("claude-code", "claude-code/qa.jsonl", "qa.jsonl", QA),
        ("codex", f"codex/{CODEX_QA}", "rollout.jsonl", QA),
        ("pi", "pi/qa.jsonl", "qa.jsonl", QA),
        ("pi", "pi/qa.jsonl", "qa.jsonl.gz", QA),  # streamed through iter_json_lines
        ("hermes", "hermes/qa.jsonl", "qa.jsonl", QA),  # a ShareGPT trajectory line
        ("hermes", "hermes/extend.gateway.jsonl", "extend.gateway.jsonl", "Add a remove_item"),
    ],
)
def test_every_json_lines_reader_reads_them_with_a_warning(
    tmp_path: Path, harness: str, fixture: str, name: str, needle: str
) -> None:
    target = tmp_path / name
    line = _inject(SESSIONS / fixture, target, needle)
    (session,), warnings = _read(target)
    assert session.header.harness == harness
    (intact,), clean = _read(SESSIONS / fixture)
    assert clean == []
    assert [(w.file, w.line, w.message[:21]) for w in warnings] == [
        (str(target), line, "raw control character")
    ]
    asked = [e.text for e in session.events if e.kind == "user" and ESC in (e.text or "")]
    assert len(asked) == 1 and asked[0].replace(ESC, "").startswith(needle)
    assert [(e.kind, e.call_id, (e.text or "").replace(ESC, "")) for e in session.events] == [
        (e.kind, e.call_id, e.text or "") for e in intact.events
    ]
