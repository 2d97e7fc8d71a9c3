"""The opencode reader on real opencode sessions (export JSON, SQLite database, storage tree).

The fixtures come from the real CLI (``tests/fixtures/generate_opencode.py``); bad-input and
rare-tool variants are derived from them in ``tmp_path``.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.generate_opencode import check, run_scenario
from tests.fixtures.scenarios import CALC_BUGGY, SALES, SCENARIOS, STATS, SUM_CMD, Scenario
from trajforge.errors import FormatError
from trajforge.protocols import Format
from trajforge.reconstruct.formats.opencode import OpencodeFormat
from trajforge.reconstruct.formats.opencode_events import read_content
from trajforge.reconstruct.inputs import expand_paths, read_head
from trajforge.reconstruct.pipeline import all_formats, detect
from trajforge.records import Event, ParseWarning, Session

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sessions" / "opencode"
DB_GZ = FIXTURES / "opencode.db.gz"
LEGACY = FIXTURES / "legacy-storage"
BY_NAME = {s.name: s for s in SCENARIOS}
FMT = OpencodeFormat()


def parse(path: Path) -> tuple[list[Session], list[ParseWarning]]:
    items = list(FMT.parse(path))
    return (
        [i for i in items if isinstance(i, Session)],
        [i for i in items if isinstance(i, ParseWarning)],
    )


def one(path: Path) -> Session:
    sessions, warnings = parse(path)
    assert len(sessions) == 1 and not warnings
    return sessions[0]


def expected_kinds(scenario: Scenario) -> list[str]:
    kinds = ["user"]
    for action in scenario.actions:
        kinds += ["assistant"] if action[0] == "say" else ["tool_call", "tool_result"]
    return kinds


def shape(session: Session) -> list[tuple[Any, ...]]:
    """Events without their source positions, to compare one session across input shapes."""
    return [
        (e.kind, e.tool, e.text, e.exit_code, e.content, e.edits, e.command) for e in session.events
    ]


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text())
    return data


def dump(tmp_path: Path, data: Any, name: str = "s.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2))
    return path


def plain_db(tmp_path: Path) -> Path:
    path = tmp_path / "opencode.db"
    path.write_bytes(gzip.decompress(DB_GZ.read_bytes()))
    return path


# --- the real fixtures ---------------------------------------------------------------------


def test_satisfies_format_protocol() -> None:
    assert isinstance(FMT, Format)
    assert FMT.name == "opencode"


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_export_fixture(name: str) -> None:
    path = FIXTURES / f"{name}.json"
    assert FMT.sniff(path, read_head(path))
    session = one(path)
    header = session.header
    assert header.harness == "opencode"
    assert header.session_id == load(name)["info"]["id"].strip() and header.session_id[:4] == "ses_"
    assert header.harness_version == "1.18.33"
    assert header.model == "scripted/scripted"
    assert header.cwd and header.cwd.endswith(f"/{name}")
    assert header.started_at and header.started_at.startswith("20")
    assert header.content_hash == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [e.kind for e in session.events] == expected_kinds(BY_NAME[name])
    assert session.events[0].text == BY_NAME[name].request
    assert session.events[-1].text == BY_NAME[name].actions[-1][1]
    assert {"step-start", "step-finish"} <= set(session.skipped)
    lines = [e.source.line for e in session.events]
    assert lines == sorted(lines) and all(e.source.file == str(path) for e in session.events)
    for call, result in zip(session.events[1:-1:2], session.events[2:-1:2], strict=True):
        assert call.call_id == result.call_id and call.tool == result.tool
        assert not result.is_error


def _read_result(session: Session, name: str) -> Event:
    call = next(
        e
        for e in session.events
        if e.kind == "tool_call" and e.tool == "read" and (e.path or "").endswith("/" + name)
    )
    return next(e for e in session.events if e.kind == "tool_result" and e.call_id == call.call_id)


def test_repair_records_failed_then_passing_pytest() -> None:
    session = one(FIXTURES / "repair.json")
    shells = [e for e in session.events if e.tool_kind == "shell"]
    pytest_cmd = BY_NAME["repair"].actions[0][1]
    assert [e.command for e in shells if e.kind == "tool_call"] == [pytest_cmd] * 2
    results = [e for e in shells if e.kind == "tool_result"]
    assert [e.exit_code for e in results] == [1, 0]
    assert "1 failed" in results[0].text and "3 passed" in results[1].text
    assert not results[0].is_error  # a failing command is still a completed tool call
    read = _read_result(session, "calc.py")
    assert read.content == CALC_BUGGY and not read.partial
    edit = next(e for e in session.events if e.kind == "tool_call" and e.tool == "edit")
    _, _, old, new = next(a for a in BY_NAME["repair"].actions if a[0] == "edit")
    assert edit.tool_kind == "edit" and [(x.old, x.new) for x in edit.edits] == [(old, new)]
    assert edit.path == f"{session.header.cwd}/calc.py"
    assert edit.arguments["filePath"] == edit.path


def test_build_writes_full_content() -> None:
    session = one(FIXTURES / "build.json")
    writes = [e for e in session.events if e.kind == "tool_call" and e.tool_kind == "write"]
    assert [Path(w.path or "").name for w in writes] == ["stats.py", "test_stats.py"]
    assert writes[0].content == STATS


def test_qa_ends_with_the_answer() -> None:
    session = one(FIXTURES / "qa.json")
    read = next(e for e in session.events if e.kind == "tool_result" and e.tool == "read")
    assert read.content == SALES
    shell = [e for e in session.events if e.tool_kind == "shell"]
    assert shell[0].command == SUM_CMD and shell[1].exit_code == 0 and "136.5" in shell[1].text
    assert session.events[-1].kind == "assistant" and "136.50" in session.events[-1].text


def test_database_holds_every_scenario() -> None:
    assert FMT.sniff(DB_GZ, read_head(DB_GZ))
    sessions, warnings = parse(DB_GZ)
    assert not warnings
    by_id = {s.header.session_id: s for s in sessions}
    assert len(sessions) == len(by_id) == 4
    assert len({s.header.content_hash for s in sessions}) == 4
    for name in BY_NAME:
        exported = one(FIXTURES / f"{name}.json")
        from_db = by_id[exported.header.session_id]
        assert shape(from_db) == shape(exported)
        assert from_db.header.model == exported.header.model
        assert from_db.header.cwd == exported.header.cwd
        assert from_db.header.started_at == exported.header.started_at
        assert all(e.source.file == str(DB_GZ) and e.source.line > 0 for e in from_db.events)


def test_plain_database_is_read_without_writing_beside_it(tmp_path: Path) -> None:
    path = plain_db(tmp_path)
    sessions, warnings = parse(path)
    assert len(sessions) == 4 and not warnings
    assert [p.name for p in tmp_path.iterdir()] == ["opencode.db"]
    again, _ = parse(path)
    assert [s.header.content_hash for s in again] == [s.header.content_hash for s in sessions]


def test_legacy_storage_tree() -> None:
    assert FMT.sniff(LEGACY, b"")
    session = one(LEGACY)
    assert session.header.harness_version == "1.1.65"
    assert session.header.source_path == str(LEGACY)
    assert [e.kind for e in session.events] == expected_kinds(BY_NAME["repair"])
    assert [
        e.exit_code for e in session.events if e.kind == "tool_result" and e.tool == "bash"
    ] == [1, 0]
    read = _read_result(session, "calc.py")
    assert read.content == CALC_BUGGY  # 1.1 read output: no newline after <content>
    assert all(Path(e.source.file).parent.parent.name == "part" for e in session.events)
    assert session.events[0].text.strip() == BY_NAME["repair"].request


def test_every_fixture_is_detected_as_opencode() -> None:
    inputs, errors = expand_paths([FIXTURES])
    assert not errors and LEGACY in inputs and DB_GZ in inputs
    for path in inputs:
        assert detect(path, all_formats()).name == "opencode", path


def test_does_not_claim_other_harnesses(tmp_path: Path) -> None:
    others = [
        p
        for p in FIXTURES.parent.rglob("*")
        if p.is_file() and "opencode" not in p.parts and p.suffix in (".jsonl", ".json", ".gz")
    ]
    assert others, "no other harness fixtures to check against"
    for path in others:
        assert not FMT.sniff(path, read_head(path)), path
    other_db = tmp_path / "state.db"
    with sqlite3.connect(other_db) as conn:
        conn.execute("CREATE TABLE sessions (id TEXT, data TEXT)")
    assert not FMT.sniff(other_db, read_head(other_db))


# --- tools the scenarios do not use, on derived sessions -----------------------------------


def tool_part(
    tool: str, args: dict[str, Any], status: str = "completed", output: str = "ok", **state: Any
) -> dict[str, Any]:
    body = {"status": status, "input": args, **state}
    if status == "completed":
        body.setdefault("output", output)
    return {"type": "tool", "tool": tool, "callID": f"c-{tool}-{status}", "state": body}


def with_parts(tmp_path: Path, parts: list[dict[str, Any]]) -> Session:
    data = load("repair")
    message = {"info": dict(data["messages"][-1]["info"]), "parts": parts}
    data["messages"].append(message)
    sessions, warnings = parse(dump(tmp_path, data))
    assert not warnings
    return sessions[0]


def test_rare_tools_are_normalised(tmp_path: Path) -> None:
    v4a = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch"
    parts = [
        tool_part(
            "multiedit",
            {
                "filePath": "/w/a.py",
                "edits": [
                    {"filePath": "/w/a.py", "oldString": "a", "newString": "b"},
                    {"filePath": "/w/a.py", "oldString": "c", "newString": "d", "replaceAll": True},
                ],
            },
        ),
        tool_part("apply_patch", {"patchText": v4a}),
        tool_part("patch", {"patchText": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"}),
        tool_part("bash", {"command": "ls", "workdir": "/w/sub"}, metadata={"exit": 2}),
        tool_part(
            "read",
            {"filePath": "/w/big.py", "offset": 5, "limit": 2},
            output=(
                "<path>/w/big.py</path>\n<type>file</type>\n<content>\n5: x\n6: y\n\n"
                "(Showing lines 5-6 of 9. Use offset=7 to continue.)\n</content>"
            ),
        ),
        tool_part(
            "edit",
            {"filePath": "/w/a.py", "oldString": "q", "newString": "r"},
            status="error",
            error="Could not find oldString in the file",
        ),
        tool_part("grep", {"pattern": "x"}, status="running"),
        {"type": "reasoning", "text": "thinking..."},
        {"type": "a-future-part"},
    ]
    events = with_parts(tmp_path, parts).events[len(expected_kinds(BY_NAME["repair"])) :]
    calls = {e.tool: e for e in events if e.kind == "tool_call"}
    results = {e.tool: e for e in events if e.kind == "tool_result"}
    multi = calls["multiedit"]
    assert multi.tool_kind == "edit" and multi.path == "/w/a.py"
    assert [(x.old, x.new, x.replace_all) for x in multi.edits] == [
        ("a", "b", False),
        ("c", "d", True),
    ]
    assert (calls["apply_patch"].tool_kind, calls["apply_patch"].patch_format) == ("patch", "v4a")
    assert calls["apply_patch"].patch == v4a
    assert calls["patch"].patch_format == "unified"
    assert (calls["bash"].cwd, results["bash"].exit_code) == ("/w/sub", 2)
    assert calls["read"].offset == 5
    assert results["read"].content == "x\ny\n" and results["read"].partial
    assert results["edit"].is_error and "Could not find" in results["edit"].text
    assert calls["grep"].tool_kind == "other" and "grep" not in results
    assert not any(e.kind == "assistant" and "thinking" in e.text for e in events)


def test_unknown_parts_and_synthetic_text_are_counted(tmp_path: Path) -> None:
    session = with_parts(
        tmp_path,
        [{"type": "reasoning", "text": "hm"}, {"type": "a-future-part"}, {"type": "compaction"}],
    )
    assert session.skipped["a-future-part"] == 1 and session.skipped["reasoning"] == 1
    data = load("qa")
    data["messages"][0]["parts"].append({"type": "text", "text": "file dump", "synthetic": True})
    session = one(dump(tmp_path, data, "synthetic.json"))
    assert session.skipped["synthetic-text"] == 1
    assert session.events[0].text == BY_NAME["qa"].request


@pytest.mark.parametrize(
    ("output", "content", "partial"),
    [
        ("<file>\n00001| a\n00002| \n\n(End of file - total 2 lines)\n</file>", "a\n", False),
        (
            "<content>\n1: a\n\n(Output capped at 50 KB. Showing lines 1-1. "
            "Use offset=2 to continue.)"
            "\n</content>",
            "a\n",
            True,
        ),
        (
            "<content>\n1: " + "x" * 5 + "... (line truncated to 2000 chars)\n\n"
            "(End of file - total 1 lines)\n</content>",
            "xxxxx... (line truncated to 2000 chars)\n",
            True,
        ),
        (
            "<path>/d</path>\n<type>directory</type>\n<entries>\na\n\n(1 entries)\n</entries>",
            None,
            False,
        ),
        ("File not found: /w/x.py", None, False),
    ],
)
def test_read_output_forms(output: str, content: str | None, partial: bool) -> None:
    assert read_content(output) == (content, partial)


# --- bad input -----------------------------------------------------------------------------


def test_truncated_export_keeps_complete_messages(tmp_path: Path) -> None:
    text = (FIXTURES / "repair.json").read_text()
    path = tmp_path / "cut.json"
    path.write_text(text[: len(text) * 2 // 3])
    sessions, warnings = parse(path)
    [session] = sessions
    assert not warnings and len(session.warnings) == 1
    warning = session.warnings[0]
    assert warning.file == str(path) and warning.line > 1 and "not valid JSON" in warning.message
    full = shape(one(FIXTURES / "repair.json"))
    kept = shape(session)
    assert 1 < len(kept) < len(full) and kept == full[: len(kept)]


def test_bad_messages_and_parts_become_warnings(tmp_path: Path) -> None:
    data = load("repair")
    data["messages"].insert(2, 42)
    data["messages"][1]["parts"].append("not a part")
    session = parse(dump(tmp_path, data))[0][0]
    assert len(session.warnings) == 2
    assert all(w.file == str(tmp_path / "s.json") for w in session.warnings)
    assert [e.kind for e in session.events] == expected_kinds(BY_NAME["repair"])


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"", "empty file"),
        (b"\x00\x01garbage \xff\xfe not json at all", "not an opencode export"),
        (b'{"foo": 1, "bar": [1, 2]}', "not an opencode export"),
        (b"[1, 2, 3]", "not an opencode export"),
        (b'{"info": {"id": "ses_x"', "not an opencode export"),
    ],
)
def test_not_opencode_raises_format_error(tmp_path: Path, content: bytes, match: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(FormatError, match=match) as info:
        list(FMT.parse(path))
    assert str(path) in str(info.value)


def test_corrupt_database_raises_format_error(tmp_path: Path) -> None:
    path = tmp_path / "opencode.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\xde\xad" * 4000)
    assert FMT.sniff(path, read_head(path))  # claimed by name, so the user gets our error
    with pytest.raises(FormatError, match=r"opencode\.db"):
        list(FMT.parse(path))


def test_bad_database_rows_become_warnings(tmp_path: Path) -> None:
    path = plain_db(tmp_path)
    with sqlite3.connect(path) as conn:
        rowid, part_id = conn.execute(
            'SELECT rowid, id FROM part WHERE data LIKE \'%"tool":"read"%\' LIMIT 1'
        ).fetchone()
        conn.execute("UPDATE part SET data = '{broken' WHERE rowid = ?", (rowid,))
    conn.close()
    sessions, warnings = parse(path)
    assert len(sessions) == 4 and not warnings
    bad = [w for s in sessions for w in s.warnings]
    assert len(bad) == 1 and bad[0].line == rowid and part_id in bad[0].message
    assert sum(len(s.events) for s in sessions) == sum(len(s.events) for s in parse(DB_GZ)[0]) - 2


def test_empty_database_warns(tmp_path: Path) -> None:
    path = plain_db(tmp_path)
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM session")
    conn.close()
    sessions, warnings = parse(path)
    assert not sessions and len(warnings) == 1 and "no sessions" in warnings[0].message


def test_damaged_storage_tree_keeps_valid_files(tmp_path: Path) -> None:
    tree = tmp_path / "storage"
    shutil.copytree(LEGACY, tree)
    part = next(p for p in sorted((tree / "part").rglob("*.json")) if '"bash"' in p.read_text())
    part.write_text('{"id": "prt_x", "type": "tool", ')
    (tree / "session" / "global" / "ses_zzz.json").write_text("garbage")
    sessions, warnings = parse(tree)
    assert [w.file for w in warnings] == [str(tree / "session" / "global" / "ses_zzz.json")]
    [session] = sessions
    assert [w.file for w in session.warnings] == [str(part)]
    assert len(session.events) == len(expected_kinds(BY_NAME["repair"])) - 2


def test_storage_tree_without_sessions_raises(tmp_path: Path) -> None:
    for name in ("session", "message", "part"):
        (tmp_path / name).mkdir()
    with pytest.raises(FormatError, match="without session files"):
        list(FMT.parse(tmp_path))


# --- the generator against the real CLI ----------------------------------------------------


@pytest.mark.slow
def test_generator_runs_real_opencode(tmp_path: Path) -> None:
    """Plays the qa scenario through the installed opencode CLI (needs npm for the provider)."""
    if shutil.which("opencode") is None:
        pytest.skip(
            "opencode CLI not installed (npm install -g opencode-ai@1.18.33); "
            "the committed fixtures are still tested above"
        )
    (tmp_path / "work").mkdir()
    (tmp_path / "home").mkdir()
    export = run_scenario(BY_NAME["qa"], tmp_path / "work", tmp_path / "home")
    check(BY_NAME["qa"], export)
    session = one(dump(tmp_path, export, "qa.json"))
    assert [e.kind for e in session.events] == expected_kinds(BY_NAME["qa"])


def test_a_message_created_while_the_agent_worked_is_a_steer(tmp_path: Path) -> None:
    """opencode queues a message sent while the agent works, and its loop goes on with it: the
    message's ``time.created`` is before the running assistant message's ``time.completed``
    (dark-factory's "@gitter Once done until all changes are commited …"). One sent after the
    reply finished is not."""
    data = load("extend")
    messages = data["messages"]
    running = messages[2]["info"]["time"]
    first_user = messages[0]
    queued = json.loads(json.dumps(first_user))
    queued["info"]["id"] = "msg_queued"
    queued["info"]["time"] = {"created": running["completed"] - 100}
    for part in queued["parts"]:
        part["id"] = f"{part['id']}_q"
        part["messageID"] = "msg_queued"
        if part.get("type") == "text":
            part["text"] = "once done, run the tests"
    later = json.loads(json.dumps(queued))
    later["info"]["id"] = "msg_later"
    later["info"]["time"] = {"created": messages[-1]["info"]["time"]["completed"] + 100}
    data["messages"] = [*messages[:3], queued, *messages[3:], later]
    session = one(dump(tmp_path, data))
    users = [i for i, e in enumerate(session.events) if e.kind == "user"]
    assert len(users) == 3
    assert session.steers == (users[1],)
    assert one(FIXTURES / "extend.json").steers == ()
