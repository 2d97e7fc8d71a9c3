"""pi session files whose header line is missing (entries only): read with a warning.

The inputs are the real pi-mono corpus session (v1: no entry ids) and the pi fixture written by
the real pi CLI (v3: ids and parentIds), each copied with its first line, the header, dropped.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trajforge.reconstruct import pipeline
from trajforge.reconstruct.formats.pi import HEADLESS, PiFormat
from trajforge.reconstruct.inputs import read_head
from trajforge.records import ParseWarning, Session
from trajforge.registry import FORMATS, create

LARGE = Path("/work/shared/corpus/pi-mono/large-session.jsonl")
FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "pi" / "repair.jsonl"

needs_corpus = pytest.mark.skipif(not LARGE.exists(), reason=f"pi-mono corpus missing at {LARGE}")


def _without_header(source: Path, dest: Path) -> Path:
    lines = source.read_bytes().split(b"\n")
    assert lines[0].startswith(b'{"type":"session"')
    dest.write_bytes(b"\n".join(lines[1:]))
    return dest


def _events(session: Session) -> list[dict[str, object]]:
    return [e.model_dump(exclude={"source"}) for e in session.events]


def _parse(path: Path) -> tuple[Session, list[ParseWarning]]:
    items = list(PiFormat().parse(path))
    sessions = [i for i in items if isinstance(i, Session)]
    assert len(sessions) == 1
    return sessions[0], [i for i in items if isinstance(i, ParseWarning)]


@needs_corpus
def test_corpus_session_without_its_header_keeps_every_event(tmp_path: Path) -> None:
    headless = _without_header(LARGE, tmp_path / "session.jsonl")
    head = read_head(headless)
    claims = [name for name in FORMATS if create(FORMATS, name, "format").sniff(headless, head)]
    assert claims == ["pi"]
    assert PiFormat().sniff(headless, read_head(headless)[:120])  # a first line cut by head
    session, warnings = _parse(headless)
    assert [(w.file, w.line, w.message) for w in warnings] == [(str(headless), 1, HEADLESS)]
    full, _ = _parse(LARGE)
    assert len(session.events) == len(full.events) > 500
    assert _events(session) == _events(full)
    assert session.header.cwd is None and session.header.harness_version == "session-v1"
    assert session.header.session_id == session.header.content_hash[:16]


def test_v3_fixture_without_its_header_follows_the_entry_tree(tmp_path: Path) -> None:
    headless = _without_header(FIXTURE, tmp_path / "repair.jsonl")
    session, warnings = _parse(headless)
    assert [(w.line, w.message) for w in warnings] == [(1, HEADLESS)]
    full, _ = _parse(FIXTURE)
    assert session.header.harness_version == "session-v2"  # ids seen: read as a tree
    assert _events(session) == _events(full)


def test_headless_file_goes_through_reconstruct_with_one_warning(tmp_path: Path) -> None:
    headless = _without_header(FIXTURE, tmp_path / "repair.jsonl")
    summary = pipeline.run([headless], tmp_path / "out")
    (row,) = summary.inputs
    assert (row.format, row.sessions, row.warnings, row.error) == ("pi", 1, 1, None)
    assert summary.warnings == [f"{headless}:1: {HEADLESS}"]
    assert summary.candidates["pi"].get("repair", 0) >= 1
    assert summary.exit_code() == 1  # a warning is reported, the tasks are written
    assert summary.written >= 1
