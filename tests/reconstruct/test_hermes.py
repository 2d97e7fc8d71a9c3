"""hermes reader: the real hermes-agent fixtures, then bad input derived from them in tmp_path."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.scenarios import CALC_BUGGY, INVENTORY, SALES, STATS, STATS_TEST
from trajforge.errors import FormatError
from trajforge.reconstruct.families import candidates
from trajforge.reconstruct.formats.hermes import HermesFormat
from trajforge.reconstruct.formats.hermes_tools import STEER_CLOSE, STEER_OPEN, split_steer
from trajforge.reconstruct.inputs import read_head
from trajforge.reconstruct.replay import replay
from trajforge.records import Event, ParseWarning, Session

HERMES = Path(__file__).parents[1] / "fixtures" / "sessions" / "hermes"
OTHERS = Path(__file__).parents[1] / "fixtures" / "sessions"
FMT = HermesFormat()


def parse(path: Path) -> tuple[list[Session], list[ParseWarning]]:
    items = list(FMT.parse(path))
    sessions = [i for i in items if isinstance(i, Session)]
    warnings = [i for i in items if isinstance(i, ParseWarning)]
    assert len(sessions) + len(warnings) == len(items)
    return sessions, warnings


def only(path: Path) -> Session:
    sessions, warnings = parse(path)
    assert warnings == []
    assert len(sessions) == 1
    return sessions[0]


def kinds(session: Session) -> list[str]:
    return [f"{e.kind}:{e.tool_kind}" if e.tool_kind else e.kind for e in session.events]


def results(session: Session, tool_kind: str) -> list[Event]:
    return [e for e in session.events if e.kind == "tool_result" and e.tool_kind == tool_kind]


def line_of(name: str) -> bytes:
    return (HERMES / name).read_bytes().rstrip(b"\n")


def assert_paired(session: Session) -> None:
    calls = [e for e in session.events if e.kind == "tool_call"]
    done = [e for e in session.events if e.kind == "tool_result"]
    assert len({c.call_id for c in calls}) == len(calls)
    assert sorted(str(c.call_id) for c in calls) == sorted(str(r.call_id) for r in done)
    by_id = {c.call_id: c for c in calls}
    for result in done:
        assert result.tool_kind == by_id[result.call_id].tool_kind


# ── real fixtures ───────────────────────────────────────────────────────────────────────────


def test_sniff_claims_every_hermes_fixture() -> None:
    paths = sorted(HERMES.iterdir())
    assert len(paths) == 10  # 8 trajectories/snapshots + a gateway transcript + an export
    for path in paths:
        assert FMT.sniff(path, read_head(path)), path


@pytest.mark.parametrize("folder", ["pi", "claude-code", "codex", "opencode"])
def test_sniff_leaves_other_harnesses_alone(folder: str) -> None:
    paths = [p for p in sorted((OTHERS / folder).iterdir()) if p.is_file()]
    assert paths, f"no {folder} fixtures"
    for path in paths:
        assert not FMT.sniff(path, read_head(path)), path


def test_repair_trajectory() -> None:
    session = only(HERMES / "repair.jsonl")
    assert kinds(session) == [
        "user",
        "tool_call:shell",
        "tool_result:shell",
        "tool_call:read",
        "tool_result:read",
        "tool_call:read",
        "tool_result:read",
        "tool_call:edit",
        "tool_result:edit",
        "tool_call:shell",
        "tool_result:shell",
        "assistant",
    ]
    shells = results(session, "shell")
    assert [r.exit_code for r in shells] == [1, 0]
    assert [r.is_error for r in shells] == [True, False]
    assert "1 failed, 2 passed" in shells[0].text and "3 passed" in shells[1].text
    read = results(session, "read")[1]
    assert read.content == CALC_BUGGY and not read.partial and read.text.startswith("1|def")
    edit = session.events[7]
    assert edit.tool == "patch" and edit.path == "calc.py"
    assert edit.edits[0].old.endswith("return high") and edit.edits[0].new.endswith("return low")
    assert session.events[-1].text.startswith("Fixed clamp")
    header = session.header
    raw = line_of("repair.jsonl")
    assert header.harness == "hermes" and header.model == "scripted"
    assert header.content_hash == hashlib.sha256(raw).hexdigest()
    assert header.session_id == header.content_hash[:16]
    assert header.cwd is not None and header.cwd.endswith("/repair/ws")
    assert {e.source.line for e in session.events} == {1}
    assert session.skipped == {"system": 1}
    assert_paired(session)


def test_build_trajectory_writes_the_files() -> None:
    session = only(HERMES / "build.jsonl")
    writes = [e for e in session.events if e.kind == "tool_call" and e.tool_kind == "write"]
    assert [(w.path, w.content) for w in writes] == [
        ("stats.py", STATS),
        ("test_stats.py", STATS_TEST),
    ]
    assert [r.exit_code for r in results(session, "shell")] == [0]
    assert not any(r.is_error for r in results(session, "write"))
    assert_paired(session)


def test_extend_replace_and_v4a_modes() -> None:
    replace = only(HERMES / "extend.jsonl")
    v4a = only(HERMES / "extend_v4a.jsonl")
    assert kinds(replace)[3:7] == [
        "tool_call:edit",
        "tool_result:edit",
        "tool_call:write",
        "tool_result:write",
    ]
    assert kinds(v4a)[3:5] == ["tool_call:patch", "tool_result:patch"]
    patch = v4a.events[3]
    assert patch.patch_format == "v4a" and patch.path is None
    assert patch.patch is not None and patch.patch.startswith("*** Begin Patch\n*** Update File: ")
    assert results(replace, "read")[0].content == INVENTORY
    for session in (replace, v4a):
        assert [r.exit_code for r in results(session, "shell")] == [0]
        assert_paired(session)


def test_qa_ends_with_the_answer() -> None:
    session = only(HERMES / "qa.jsonl")
    assert kinds(session) == [
        "user",
        "tool_call:read",
        "tool_result:read",
        "tool_call:shell",
        "tool_result:shell",
        "assistant",
    ]
    assert results(session, "read")[0].content == SALES
    assert results(session, "shell")[0].text == "136.5"
    assert session.events[-1].text == "The total of the amount column is 136.50."
    assert session.header.cwd is None  # no file-tool result names a resolved path


def test_failed_trajectory_keeps_the_cut_off_run() -> None:
    session = only(HERMES / "build_failed.jsonl")
    assert kinds(session) == [
        "user",
        "tool_call:write",
        "tool_result:write",
        "tool_call:write",
        "tool_result:write",
        "assistant",
    ]
    # hermes's own iteration-limit notice is not a request from the person: no second episode
    assert session.skipped["harness_notice"] == 1
    assert all("maximum number of tool-calling" not in e.text for e in session.events)
    state = replay(session.events, session.header.cwd)
    assert [c.family for c in candidates(session.events, state).candidates] == ["build"]


def test_session_snapshot_matches_trajectory() -> None:
    snapshot = only(HERMES / "repair.session.json")
    trajectory = only(HERMES / "repair.jsonl")
    assert kinds(snapshot) == kinds(trajectory)
    assert [e.call_id for e in snapshot.events] == [e.call_id for e in trajectory.events]
    assert results(snapshot, "read")[1].content == CALC_BUGGY
    assert [r.exit_code for r in results(snapshot, "shell")] == [1, 0]
    header = snapshot.header
    assert header.session_id.count("_") == 2 and header.started_at is not None
    assert header.cwd is not None and header.cwd.endswith("/repair/ws")
    lines = [e.source.line for e in snapshot.events]
    assert lines == sorted(lines) and lines[0] == 1 and lines[-1] == 12  # message indices


def test_multi_member_gzip() -> None:
    gz = (HERMES / "all.jsonl.gz").read_bytes()
    assert gz.count(b"\x1f\x8b\x08") >= 4  # one gzip member per trajectory
    sessions, warnings = parse(HERMES / "all.jsonl.gz")
    assert warnings == []
    hashes = [
        hashlib.sha256(line_of(f"{n}.jsonl")).hexdigest()
        for n in ("build", "repair", "extend", "qa")
    ]
    assert [s.header.content_hash for s in sessions] == hashes
    assert [s.events[0].source.line for s in sessions] == [1, 2, 3, 4]


# ── bad input ───────────────────────────────────────────────────────────────────────────────


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_truncated_last_line(tmp_path: Path) -> None:
    qa = line_of("qa.jsonl")
    path = write_lines(tmp_path / "t.jsonl", [line_of("repair.jsonl"), qa[: len(qa) // 2]])
    sessions, warnings = parse(path)
    assert len(sessions) == 1
    assert [(w.file, w.line) for w in warnings] == [(str(path), 2)]
    assert "not JSON" in warnings[0].message


def test_garbage_binary_and_foreign_lines_are_warnings(tmp_path: Path) -> None:
    lines = [
        b"garbage {",
        line_of("build.jsonl"),
        b"\x00\xff\xfe binary",
        b'{"foo": 1}',
        b"[1, 2]",
        line_of("qa.jsonl"),
    ]
    path = write_lines(tmp_path / "t.jsonl", lines)
    sessions, warnings = parse(path)
    assert [s.events[0].source.line for s in sessions] == [2, 6]
    assert [w.line for w in warnings] == [1, 3, 4, 5]
    assert "not a hermes trajectory" in warnings[2].message
    assert all(w.file == str(path) for w in warnings)


def test_truncated_gzip_member(tmp_path: Path) -> None:
    gz = (HERMES / "all.jsonl.gz").read_bytes()
    path = tmp_path / "cut.jsonl.gz"
    path.write_bytes(gz[:-100])
    sessions, warnings = parse(path)
    assert len(sessions) == 3
    assert len(warnings) == 1 and warnings[0].line == 4
    assert "unreadable compressed data" in warnings[0].message


def test_corrupt_gzip_data(tmp_path: Path) -> None:
    first = gzip.compress(line_of("qa.jsonl") + b"\n")
    second = bytearray(gzip.compress(line_of("build.jsonl") + b"\n"))
    second[len(second) // 2] ^= 0xFF
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(first + bytes(second))
    sessions, warnings = parse(path)
    assert len(sessions) == 1 and sessions[0].events[0].source.line == 1
    assert warnings and all(w.line >= 2 for w in warnings)  # flipped bytes may decode first
    assert "unreadable compressed data" in warnings[-1].message


def test_empty_file_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "trajectory_samples.jsonl"
    path.write_bytes(b"\n\n")
    sessions, warnings = parse(path)
    assert sessions == [] and len(warnings) == 1 and "empty file" in warnings[0].message


@pytest.mark.parametrize(
    "content",
    [
        b'{"type":"session","version":3,"id":"x"}\n{"type":"message"}\n',
        b"\x00\x01garbage\nmore garbage\n",
    ],
)
def test_nothing_hermes_raises(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "other.jsonl"
    path.write_bytes(content)
    assert not FMT.sniff(path, content)
    with pytest.raises(FormatError, match=re.escape(str(path))):
        parse(path)


def test_truncated_session_snapshot(tmp_path: Path) -> None:
    raw = (HERMES / "repair.session.json").read_bytes()
    path = tmp_path / "session_x.json"
    path.write_bytes(raw[: len(raw) // 2])
    sessions, warnings = parse(path)
    assert sessions == [] and len(warnings) == 1 and warnings[0].line > 1
    other = tmp_path / "other.json"
    other.write_text('{"hello": "world"}')
    with pytest.raises(FormatError, match=re.escape("other.json")):
        parse(other)


# ── dialect details (records built from hermes's own schema) ────────────────────────────────


def tool_call(name: str, args: dict[str, Any], quote: str = "json") -> str:
    body = json.dumps({"name": name, "arguments": args})
    if quote == "python":
        body = repr({"name": name, "arguments": args})
    return f"<tool_call>\n{body}\n</tool_call>"


def tool_response(name: str, content: Any) -> str:
    return f"<tool_response>\n{json.dumps({'name': name, 'content': content})}\n</tool_response>"


def record_path(tmp_path: Path, turns: list[dict[str, str]], **extra: Any) -> Path:
    record = {"conversations": turns, "model": "m", "completed": True, **extra}
    return write_lines(tmp_path / "r.jsonl", [json.dumps(record).encode()])


def test_positional_pairing_without_ids(tmp_path: Path) -> None:
    gpt = (
        "<think>\nplan it\n</think>\nLet me look."
        + tool_call("read_file", {"path": "a.py", "offset": 3})
        + tool_call("terminal", {"command": "rm -rf /"}, "python")
        + "<tool_call>{broken</tool_call>"
        + tool_call("terminal", {"command": "ls"})
    )
    tool = "\n".join(
        [
            tool_response(
                "read_file", {"content": "     3|x = 1\n     4|y = 2", "truncated": True}
            ),
            tool_response(
                "terminal",
                {"output": "", "exit_code": -1, "error": "Command denied", "status": "blocked"},
            ),
            tool_response("terminal", {"output": "lost", "exit_code": 0}),
            tool_response("terminal", {"output": "a.py", "exit_code": 0, "error": None}),
            tool_response("terminal", {"output": "extra"}),
        ]
    )
    turns = [
        {"from": "system", "value": "s"},
        {"from": "human", "value": "go"},
        {"from": "gpt", "value": gpt},
        {"from": "tool", "value": tool},
        {"from": "observer", "value": "?"},
        {"from": "gpt", "value": "<think>\n</think>\nok"},
    ]
    session = only_with_session_warnings(record_path(tmp_path, turns, extra_field=1))
    assert kinds(session) == [
        "user",
        "assistant",
        "tool_call:read",
        "tool_call:shell",
        "tool_call:shell",
        "tool_result:read",
        "tool_result:shell",
        "tool_result:shell",
        "assistant",
    ]
    assert session.events[1].text == "Let me look."
    read = session.events[5]
    assert read.content == "x = 1\ny = 2" and read.partial and read.offset == 3
    blocked = session.events[6]
    assert blocked.is_error and blocked.exit_code is None and blocked.text == "Command denied"
    ids = [e.call_id for e in session.events if e.call_id]
    assert ids[:3] == ids[3:] and len(set(ids)) == 3
    assert session.events[7].text == "a.py" and session.events[7].call_id == ids[2]
    assert session.skipped == {
        "system": 1,
        "observer": 1,
        "unreadable_tool_call": 1,
        "orphan_tool_response": 1,
        "field:extra_field": 1,
    }
    messages = [w.message for w in session.warnings]
    assert any("unreadable <tool_call>" in m for m in messages)
    assert any("more tool responses" in m for m in messages)


def only_with_session_warnings(path: Path) -> Session:
    sessions, warnings = parse(path)
    assert warnings == [] and len(sessions) == 1
    assert sessions[0].warnings
    return sessions[0]


def test_tool_errors_and_bad_arguments(tmp_path: Path) -> None:
    gpt = (
        tool_call(
            "patch",
            {
                "mode": "replace",
                "path": "a.py",
                "old_string": "x",
                "new_string": "y",
                "replace_all": True,
            },
        )
        + tool_call("write_file", {"path": "b.py"})
        + tool_call("nope", {})
    )
    tool = "\n".join(
        [
            tool_response("patch", {"success": False, "error": "not found"}),
            tool_response("write_file", {"error": "missing content"}),
            tool_response("nope", "Tool 'nope' does not exist. Available tools: x"),
        ]
    )
    turns = [
        {"from": "human", "value": "go"},
        {"from": "gpt", "value": gpt},
        {"from": "tool", "value": tool},
    ]
    session = only_with_session_warnings(record_path(tmp_path, turns))
    edit, write, unknown = session.events[1:4]
    assert edit.tool_kind == "edit" and edit.edits[0].replace_all
    assert write.tool_kind == "other" and unknown.tool_kind == "other"
    assert [r.is_error for r in session.events[4:]] == [True, True, True]
    assert session.events[4].text == "not found"
    assert [w.message for w in session.warnings] == [
        "write_file call hermes-1-1-1 lacks the arguments hermes requires"
    ]


def test_reused_call_ids_stay_unique(tmp_path: Path) -> None:
    def response(output: str) -> str:
        body = {
            "tool_call_id": "call_0",
            "name": "terminal",
            "content": {"output": output, "exit_code": 0, "error": None},
        }
        return f"<tool_response>\n{json.dumps(body)}\n</tool_response>"

    turns = [
        {"from": "human", "value": "go"},
        {"from": "gpt", "value": tool_call("terminal", {"command": "ls"})},
        {"from": "tool", "value": response("first")},
        {"from": "gpt", "value": tool_call("terminal", {"command": "pwd"})},
        {"from": "tool", "value": response("second")},
    ]
    session = parse(record_path(tmp_path, turns))[0][0]
    assert_paired(session)
    call, result = session.events[3], session.events[4]
    assert call.command == "pwd" and result.text == "second" and call.call_id == result.call_id
    assert session.events[1].call_id == "call_0" and call.call_id != "call_0"


STEERED = "also keep the docstring's range notation as it is"


def test_a_steer_appended_to_a_tool_result_is_the_persons_message(tmp_path: Path) -> None:
    """hermes delivers ``/steer`` text typed while the agent works by appending it to the
    turn's last tool result between its out-of-band markers (``format_steer_marker``). The
    result keeps its own content — the read of calc.py still decodes, so the file is known —
    and the message is a user event right after it, one of the steers."""
    data = json.loads((HERMES / "repair.session.json").read_text())
    read = data["messages"][6]
    assert read["role"] == "tool" and read["content"].startswith('{"content": "1|def clamp')
    marker = f"\n\n{STEER_OPEN}\n{STEERED}\n{STEER_CLOSE}"
    read["content"] += marker
    path = tmp_path / "session_steered.json"
    path.write_text(json.dumps(data))
    steered, plain = only(path), only(HERMES / "repair.session.json")
    assert results(steered, "read")[1].content == CALC_BUGGY  # as without the steer
    users = [i for i, e in enumerate(steered.events) if e.kind == "user"]
    assert [steered.events[i].text for i in users[1:]] == [STEERED]
    assert steered.steers == (users[1],) and plain.steers == ()
    assert steered.events[users[1] - 1].kind == "tool_result"
    assert kinds(steered) == [*kinds(plain)[: users[1]], "user", *kinds(plain)[users[1] :]]
    blocks = [{"type": "text", "text": "ran"}, {"type": "text", "text": marker.lstrip()}]
    assert split_steer(blocks) == ([{"type": "text", "text": "ran"}], STEERED)
    assert split_steer("no marker here") == ("no marker here", None)
