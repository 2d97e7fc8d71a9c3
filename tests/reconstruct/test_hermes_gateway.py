"""hermes gateway transcripts and `hermes sessions export` output.

Both fixtures come from the real hermes-agent 0.19.0 (tests/fixtures/generate_hermes.py
``--gateway``): ``extend.gateway.jsonl`` is the extend run written as the messaging gateway wrote
``~/.hermes/sessions/<id>.jsonl`` (session_meta line, then ``{**message, "timestamp"}``), and
``repair.export.jsonl`` is what ``hermes sessions export`` wrote for the repair run's state.db.
Damaged and multi-session variants are derived from them in tmp_path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fixtures.scenarios import CALC_BUGGY, INVENTORY
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.formats.hermes import HermesFormat
from trajforge.reconstruct.inputs import read_head
from trajforge.records import ParseWarning, Session

HERMES = Path(__file__).parents[1] / "fixtures" / "sessions" / "hermes"
GATEWAY = HERMES / "extend.gateway.jsonl"
EXPORT = HERMES / "repair.export.jsonl"
FMT = HermesFormat()


def _parse(path: Path) -> tuple[list[Session], list[ParseWarning]]:
    items = list(FMT.parse(path))
    return (
        [i for i in items if isinstance(i, Session)],
        [i for i in items if isinstance(i, ParseWarning)],
    )


def _shape(session: Session) -> list[tuple[str, str | None, str | None]]:
    return [(e.kind, e.tool_kind, e.path or e.command) for e in session.events]


def _families(path: Path, out: Path) -> dict[str, int]:
    summary = pipeline.run([path], out)
    assert summary.exit_code() == 0 and summary.failed_candidates == []
    return summary.candidates["hermes"]


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_gateway_transcript_reads_like_the_same_run_as_a_trajectory(tmp_path: Path) -> None:
    assert FMT.sniff(GATEWAY, read_head(GATEWAY))
    (session,), warnings = _parse(GATEWAY)
    assert warnings == [] and session.warnings == ()
    header = session.header
    assert header.harness == "hermes" and header.session_id == "extend.gateway"
    assert header.model == "scripted" and header.started_at
    assert header.cwd is not None and header.cwd.endswith("/gateway_extend/ws")  # resolved_path
    assert session.skipped == {"session_meta": 1}
    (trajectory,), _ = _parse(HERMES / "extend.jsonl")  # the same scenario, ShareGPT form
    assert _shape(session) == _shape(trajectory)
    assert session.events[0].kind == "user" and "remove_item" in session.events[0].text
    read = next(e for e in session.events if e.kind == "tool_result" and e.tool_kind == "read")
    assert read.content == INVENTORY and not read.partial
    assert [e.source.line for e in session.events[:3]] == [2, 3, 4]  # one message per line
    same_run = _families(HERMES / "extend.jsonl", tmp_path / "trajectory")
    assert _families(GATEWAY, tmp_path / "gateway") == same_run and same_run


def test_export_rows_are_sessions_with_their_header(tmp_path: Path) -> None:
    assert FMT.sniff(EXPORT, read_head(EXPORT))
    (session,), warnings = _parse(EXPORT)
    assert warnings == [] and session.warnings == ()
    (row,) = _rows(EXPORT)
    header = session.header
    assert header.session_id == row["id"] and header.model == "scripted"
    assert header.cwd is not None and header.cwd.endswith("/export_repair/ws")  # system prompt
    assert header.started_at is not None and header.started_at.startswith("20")
    (snapshot,), _ = _parse(HERMES / "repair.session.json")  # the same scenario, snapshot form
    assert _shape(session) == _shape(snapshot)
    shell = [e for e in session.events if e.kind == "tool_result" and e.tool_kind == "shell"]
    assert [e.exit_code for e in shell] == [1, 0]
    start = next(e for e in session.events if e.tool_kind == "read" and e.path == "calc.py")
    assert start is not None
    same_run = _families(HERMES / "repair.session.json", tmp_path / "snapshot")
    assert _families(EXPORT, tmp_path / "export") == same_run and "repair" in same_run
    assert CALC_BUGGY.splitlines()[0] in row["messages"][6]["content"]


def test_export_with_several_sessions_and_a_broken_line(tmp_path: Path) -> None:
    (row,) = _rows(EXPORT)
    other = {**row, "id": "20260102_090000_beef01", "messages": row["messages"][:3]}
    path = tmp_path / "export.jsonl"
    path.write_text(json.dumps(row) + "\n{not json\n" + json.dumps(other) + "\n")
    sessions, warnings = _parse(path)
    assert [s.header.session_id for s in sessions] == [row["id"], other["id"]]
    assert [(w.line, w.message[:8]) for w in warnings] == [(2, "not JSON")]
    assert len(sessions[1].events) == 3
    assert {e.source.line for e in sessions[1].events} == {3}  # positions are file lines


def test_rewritten_transcript_without_session_meta_and_damaged_lines(tmp_path: Path) -> None:
    """/retry, /undo and /compress rewrote the transcript without its session_meta line."""
    rows = _rows(GATEWAY)[1:]
    lines = [json.dumps(r) for r in rows]
    lines.insert(3, '{"role": "assistant", "content": "cut off')
    lines.insert(5, json.dumps(["not", "a", "message"]))
    path = tmp_path / "20260101_120000_abcd1234.jsonl"
    path.write_text("\n".join(lines) + "\n")
    assert FMT.sniff(path, read_head(path))
    (session,), _ = _parse(path)
    assert session.header.session_id == "20260101_120000_abcd1234"
    assert session.header.model is None and session.header.started_at == rows[0]["timestamp"]
    assert [(w.line, w.message[:12]) for w in session.warnings] == [
        (4, "not JSON (un"),
        (6, "line 6: not "),
    ]
    (full,), _ = _parse(GATEWAY)
    assert _shape(session) == _shape(full)


def test_first_line_alone_decides(tmp_path: Path) -> None:
    """A JSONL of chat messages without the gateway's timestamp is not taken for a transcript,
    and neither is a session_meta mention further in."""
    plain = _write(tmp_path / "chat.jsonl", [{"role": "user", "content": "hi"}])
    assert not FMT.sniff(plain, read_head(plain))
    later = _write(tmp_path / "notes.jsonl", [{"note": 1}, {"role": "session_meta"}])
    assert not FMT.sniff(later, read_head(later))


def test_the_gateways_session_index_beside_its_transcripts_is_not_an_error(tmp_path: Path) -> None:
    """~/.hermes/sessions holds sessions.json (session key → entry) next to <id>.jsonl."""
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    (sessions / GATEWAY.name).write_bytes(GATEWAY.read_bytes())
    index = {
        "agent:main:telegram:dm": {
            "session_key": "agent:main:telegram:dm",
            "session_id": GATEWAY.stem,
            "created_at": "2026-05-01T10:00:00",
            "updated_at": "2026-05-01T10:05:00",
            "platform": "telegram",
            "chat_type": "dm",
        }
    }
    (sessions / "sessions.json").write_text(json.dumps(index))
    summary = pipeline.run([sessions], tmp_path / "out")
    assert summary.exit_code() == 0, summary.inputs
    rows = {Path(i.path).name: i for i in summary.inputs}
    assert rows["sessions.json"].error is None and rows["sessions.json"].sessions == 0
    assert rows[GATEWAY.name].sessions == 1
