"""The Claude Code reader on the hand-authored transcripts in tests/fixtures/sessions/claude-code
(one per scenario family, written by generate.py from the documented schema) and on damaged or
special variants derived from them in tmp_path.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.fixtures.scenarios import (
    CALC_BUGGY,
    CALC_TEST,
    INVENTORY,
    INVENTORY_TEST,
    REMOVE_ITEM,
    REMOVE_TEST,
    SALES,
    SCENARIOS,
    STATS,
    STATS_TEST,
    SUM_CMD,
)
from trajforge.errors import FormatError
from trajforge.protocols import Format
from trajforge.reconstruct.formats.claude_code import ClaudeCodeFormat
from trajforge.reconstruct.formats.claude_code_tools import strip_line_numbers
from trajforge.reconstruct.inputs import read_head
from trajforge.reconstruct.replay import replay
from trajforge.records import Edit, Event, ParseWarning, Session
from trajforge.registry import FORMATS, create

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude-code"
OTHER_FIXTURES = Path(__file__).parents[1] / "fixtures" / "sessions"


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cc_generate", FIXTURES / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def step(scenario: int, kind: str) -> tuple[str, ...]:
    """The first action of ``kind`` in a shared scenario."""
    return next(a for a in SCENARIOS[scenario].actions if a[0] == kind)


def parse(path: Path) -> Session:
    out = list(ClaudeCodeFormat().parse(path))
    assert len(out) == 1 and isinstance(out[0], Session), out
    return out[0]


def kinds(session: Session) -> Counter[str]:
    return Counter(e.kind for e in session.events)


def by_call(session: Session, call_id: str) -> list[Event]:
    return [e for e in session.events if e.call_id == call_id]


def lines_of(name: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (FIXTURES / name).read_text().splitlines()]


def write_lines(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_committed_fixtures_match_their_generator() -> None:
    rendered = load_generator().render()
    assert sorted(rendered) == sorted(p.name for p in FIXTURES.glob("*.jsonl"))
    for name, text in rendered.items():
        assert (FIXTURES / name).read_text() == text, f"{name}: rerun generate.py"


def test_registered_and_conforms() -> None:
    fmt = create(FORMATS, "claude-code", "format")
    assert isinstance(fmt, ClaudeCodeFormat) and isinstance(fmt, Format)
    assert fmt.name == "claude-code"


def test_sniff_accepts_transcripts_and_rejects_other_formats(tmp_path: Path) -> None:
    fmt = ClaudeCodeFormat()
    for path in FIXTURES.glob("*.jsonl"):
        assert fmt.sniff(path, read_head(path)), path
    others = [p for p in OTHER_FIXTURES.rglob("*.jsonl") if p.parent.name != "claude-code"]
    for path in others:
        assert not fmt.sniff(path, read_head(path)), path
    pi_like = write_lines(tmp_path / "pi.jsonl", [{"type": "session", "id": "x", "cwd": "/"}])
    hermes_like = write_lines(tmp_path / "h.jsonl", [{"conversations": [], "id": 1}])
    for path in (pi_like, hermes_like):
        assert not fmt.sniff(path, read_head(path))
    assert not fmt.sniff(tmp_path, b"")


def test_build_merges_streamed_lines_and_ignores_the_sidechain() -> None:
    session = parse(FIXTURES / "build.jsonl")
    header = session.header
    assert header.harness == "claude-code" and header.harness_version == "1.0.83"
    assert header.session_id == "5e550001-0000-4000-8000-000000000001"
    assert header.model == "claude-sonnet-4-20250514" and header.cwd == "/home/dev/stats"
    assert header.git is not None and header.git.branch == "main"
    assert header.started_at == "2025-08-21T10:00:01.000Z" and len(header.content_hash) == 64
    assert kinds(session) == Counter({"user": 1, "assistant": 3, "tool_call": 4, "tool_result": 4})
    # message b1 is three lines (thinking, text, Task): one text event, thinking dropped
    assert session.events[1].text == "Let me look at the project first."
    assert not any("Check the layout" in e.text for e in session.events)
    assert session.skipped == {"summary": 1, "sidechain": 4, "block:thinking": 1}
    assert not any(e.call_id == "toolu_side1" for e in session.events)
    writes = [e for e in session.events if e.kind == "tool_call" and e.tool_kind == "write"]
    assert [(w.path, w.content) for w in writes] == [
        ("/home/dev/stats/stats.py", STATS),
        ("/home/dev/stats/test_stats.py", STATS_TEST),
    ]
    test_run = by_call(session, "toolu_b4")
    assert test_run[0].command == step(0, "shell")[1]
    assert test_run[0].cwd == "/home/dev/stats"
    assert (test_run[1].exit_code, test_run[1].is_error) == (0, False)
    assert session.events[-1].text == step(0, "say")[1]
    assert all(e.source.file == str(FIXTURES / "build.jsonl") for e in session.events)
    assert [e.source.line for e in session.events][:3] == [2, 4, 5]


def test_repair_refusal_failure_read_and_original_file() -> None:
    session = parse(FIXTURES / "repair.jsonl")
    refused = by_call(session, "toolu_r1")[1]
    assert refused.is_error and refused.exit_code is None
    assert refused.text.startswith("The user doesn't want to proceed")
    failed = by_call(session, "toolu_r2")[1]
    assert (failed.exit_code, failed.is_error) == (1, True)
    assert "1 failed, 2 passed" in failed.text
    read = by_call(session, "toolu_r3")[1]
    assert read.content == CALC_BUGGY and not read.partial  # stripped of "     N→"
    assert read.path == "/home/dev/calc/calc.py"
    original, call, result = by_call(session, "toolu_r4:original") + by_call(session, "toolu_r4")
    assert session.events.index(original) + 1 == session.events.index(call)
    assert (original.kind, original.tool_kind, original.content) == (
        "tool_result",
        "read",
        CALC_BUGGY,
    )
    assert original.path == call.path == "/home/dev/calc/calc.py"
    edit = step(1, "edit")
    assert call.edits == (Edit(old=edit[2], new=edit[3]),) and result.kind == "tool_result"
    test_read = by_call(session, "toolu_r2b")[1]
    assert (test_read.content, test_read.partial) == (CALC_TEST, False)
    assert by_call(session, "toolu_r5")[1].exit_code == 0
    users = [e.text for e in session.events if e.kind == "user"]
    assert users == [SCENARIOS[1].request, "pytest is already installed; just run the tests."]
    assert session.skipped == {"file-history-snapshot": 1}
    # the interruption is the harness's record of a cut-off turn, not the person's words
    (cut,) = session.cut_offs
    assert cut.failure == "Request interrupted by user for tool use"
    assert session.events[cut.after] == refused  # the tool call the person refused


def test_extend_follows_the_edited_prompt_not_the_abandoned_branch() -> None:
    session = parse(FIXTURES / "extend.jsonl")
    assert session.events[0].kind == "user" and session.events[0].text == SCENARIOS[2].request
    assert [e.text for e in session.events if e.kind == "user"] == [SCENARIOS[2].request]
    assert not by_call(session, "toolu_x0")
    assert session.skipped["off_path"] == 4
    assert session.header.started_at == "2025-08-23T10:00:01.000Z"  # the file's first line
    read = by_call(session, "toolu_e1")[1]
    assert read.content == INVENTORY and not read.partial
    edit = by_call(session, "toolu_e2")[0]
    assert edit.edits == (Edit(old="        return self.items[name]\n", new=REMOVE_ITEM),)
    original, write = by_call(session, "toolu_e3:original")[0], by_call(session, "toolu_e3")[0]
    assert original.content == INVENTORY_TEST and write.content == REMOVE_TEST
    assert session.events.index(original) + 1 == session.events.index(write)


def test_qa_reads_raw_content_and_dedups_a_repeated_block() -> None:
    session = parse(FIXTURES / "qa.jsonl")
    read = by_call(session, "toolu_q1")[1]
    assert read.content == SALES and read.tool_kind == "read"
    shell = by_call(session, "toolu_q2")
    assert shell[0].command == SUM_CMD and (shell[1].text, shell[1].exit_code) == ("136.5", 0)
    answers = [e.text for e in session.events if e.kind == "assistant"]
    assert answers == [
        "Let me sum the column exactly.",
        "The total of the amount column is 136.50.",
    ]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("build.jsonl", {"stats.py": STATS, "test_stats.py": STATS_TEST}),
        (
            "repair.jsonl",
            {
                "calc.py": CALC_BUGGY.replace(
                    "return high\n    if value > high", "return low\n    if value > high"
                ),
                "test_calc.py": CALC_TEST,
            },
        ),
        (
            "extend.jsonl",
            {
                "inventory.py": INVENTORY.replace("        return self.items[name]\n", REMOVE_ITEM),
                "test_inventory.py": REMOVE_TEST,
            },
        ),
        ("qa.jsonl", {"sales.csv": SALES}),
    ],
)
def test_replay_rebuilds_the_final_workspace(name: str, expected: dict[str, str]) -> None:
    session = parse(FIXTURES / name)
    state = replay(session.events, session.header.cwd)
    assert not state.divergences and not state.violations
    assert state.state_at(len(session.events) - 1).files == expected


def test_strip_line_numbers_handles_arrows_tabs_and_empty_files() -> None:
    assert strip_line_numbers("     1→a\n     2→\n     3→b") == "a\n\nb\n"
    assert strip_line_numbers("     1\tx = 1\n    10\ty") == "x = 1\ny\n"
    empty = (
        "<system-reminder>Warning: the file exists but the contents are empty.</system-reminder>"
    )
    assert strip_line_numbers(empty) == ""
    reminder = "     1→a\n\n<system-reminder>\nWhenever you read a file...\n</system-reminder>\n"
    assert strip_line_numbers(reminder) == "a\n"
    assert strip_line_numbers("File does not exist.") is None


def _line(uid: str, parent: str | None, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message.update({"id": extra.pop("msg"), "model": "claude-opus-4-1-20250805"})
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "sessionId": "s-1",
        "cwd": "/w",
        "version": "2.0.5",
        "gitBranch": "",
        "type": kind,
        "uuid": uid,
        "timestamp": f"2025-10-01T00:00:{len(uid):02d}Z",
        "message": message,
        **extra,
    }


def test_multiedit_ranged_reads_parallel_results_and_compaction(tmp_path: Path) -> None:
    multi = {
        "type": "tool_use",
        "id": "t1",
        "name": "MultiEdit",
        "input": {
            "file_path": "/w/a.py",
            "edits": [
                {"old_string": "x", "new_string": "y", "replace_all": True},
                {"old_string": "def f", "new_string": "def g"},
            ],
        },
    }
    ranged = {
        "type": "tool_use",
        "id": "t2",
        "name": "Read",
        "input": {"file_path": "/w/big.py", "offset": 10, "limit": 2},
    }
    records = [
        _line("u1", None, "user", "go"),
        _line("a1", "u1", "assistant", [multi], msg="m1"),
        _line("a2", "a1", "assistant", [ranged], msg="m1"),
        # parallel results: both hang off the last streamed line, as siblings
        _line("r1", "a2", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]),
        _line(
            "r2",
            "a2",
            "user",
            [{"type": "tool_result", "tool_use_id": "t2", "content": "    10→p\n    11→q"}],
            toolUseResult={
                "type": "text",
                "file": {
                    "filePath": "/w/big.py",
                    "content": "p\nq",
                    "numLines": 2,
                    "startLine": 10,
                    "totalLines": 40,
                },
            },
        ),
        {
            "type": "system",
            "subtype": "compact_boundary",
            "parentUuid": None,
            "logicalParentUuid": "r2",
            "uuid": "c1",
            "sessionId": "s-1",
            "content": "compacted",
        },
        _line("u2", "c1", "user", "This session is being continued...", isCompactSummary=True),
        _line("a3", "u2", "assistant", [{"type": "text", "text": "done"}], msg="m2"),
    ]
    session = parse(write_lines(tmp_path / "s.jsonl", records))
    assert [e.kind for e in session.events] == [
        "user",
        "tool_call",
        "tool_call",
        "tool_result",
        "tool_result",
        "assistant",
    ]
    edit = session.events[1]
    assert edit.tool == "MultiEdit" and edit.tool_kind == "edit"
    assert edit.edits == (Edit(old="x", new="y", replace_all=True), Edit(old="def f", new="def g"))
    read = by_call(session, "t2")
    assert read[0].offset == 10 and read[1].content == "p\nq" and read[1].partial
    assert session.skipped == {"system": 1, "user:meta": 1}
    assert session.header.git is None and session.header.model == "claude-opus-4-1-20250805"


def test_truncated_garbage_and_foreign_lines_become_warnings(tmp_path: Path) -> None:
    good = (FIXTURES / "repair.jsonl").read_bytes().splitlines(keepends=True)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(
        b"".join(good[:5])
        + b"\x00\xff\xfe binary junk\n"
        + b"[1, 2]\n"
        + b'{"hello": "world"}\n'
        + b"".join(good[5:])
        + good[-1][:40]
    )
    session = parse(damaged)
    assert [(w.file, w.line) for w in session.warnings] == [
        (str(damaged), 6),
        (str(damaged), 7),
        (str(damaged), 8),
        (str(damaged), len(good) + 4),
    ]
    assert "not JSON" in session.warnings[0].message
    assert "not a Claude Code transcript line" in session.warnings[1].message
    intact = parse(FIXTURES / "repair.jsonl")
    assert [(e.kind, e.call_id, e.text) for e in session.events] == [
        (e.kind, e.call_id, e.text) for e in intact.events
    ]


def test_empty_file_warns_and_foreign_file_raises(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert list(ClaudeCodeFormat().parse(empty)) == [
        ParseWarning(file=str(empty), line=1, message="empty file: no Claude Code lines")
    ]
    foreign = write_lines(tmp_path / "x.jsonl", [{"type": "session", "id": "p"}, {"a": 1}])
    with pytest.raises(FormatError, match=r"x\.jsonl.*line 1"):
        list(ClaudeCodeFormat().parse(foreign))
    garbage = tmp_path / "g.jsonl"
    garbage.write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(FormatError, match="not a Claude Code transcript"):
        list(ClaudeCodeFormat().parse(garbage))


def test_gzipped_transcript_parses_the_same(tmp_path: Path) -> None:
    packed = tmp_path / "qa.jsonl.gz"
    packed.write_bytes(gzip.compress((FIXTURES / "qa.jsonl").read_bytes()))
    assert ClaudeCodeFormat().sniff(packed, read_head(packed))
    plain, zipped = parse(FIXTURES / "qa.jsonl"), parse(packed)
    assert [e.model_dump(exclude={"source"}) for e in plain.events] == [
        e.model_dump(exclude={"source"}) for e in zipped.events
    ]


def test_missing_parent_warns_and_keeps_the_rest(tmp_path: Path) -> None:
    records = lines_of("qa.jsonl")[2:]  # drop the prompt and the first assistant line
    session = parse(write_lines(tmp_path / "orphan.jsonl", records))
    assert len(session.warnings) == 1 and "not found" in session.warnings[0].message
    assert session.warnings[0].line == 1
    assert session.events[-1].text == "The total of the amount column is 136.50."


def test_linear_transcript_without_uuids_and_blocked_commands(tmp_path: Path) -> None:
    def bash(tool_id: str, command: str) -> dict[str, Any]:
        return {
            "type": "assistant",
            "sessionId": "old",
            "message": {
                "role": "assistant",
                "id": f"m{tool_id}",
                "model": "claude-3-7-sonnet-20250219",
                "content": [
                    {
                        "type": "tool_use",
                        "id": tool_id,
                        "name": "Bash",
                        "input": {"command": command},
                    }
                ],
            },
        }

    def result(tool_id: str, text: str, is_error: bool) -> dict[str, Any]:
        return {
            "type": "user",
            "sessionId": "old",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": tool_id,
                        "content": text,
                        "is_error": is_error,
                    }
                ],
            },
        }

    records = [
        {"type": "user", "sessionId": "old", "message": {"role": "user", "content": "hi"}},
        bash("t1", "rm -rf build"),
        result("t1", "PreToolUse:Bash hook error: [guard.sh]: blocked: rm -rf", True),
        bash("t2", "sleep 999"),
        result("t2", "Command timed out after 2m 0.0s", True),
        bash("t3", "false"),
        result("t3", "Exit code 1", True),
    ]
    session = parse(write_lines(tmp_path / "old.jsonl", records))
    outcomes = [
        (e.call_id, e.is_error, e.exit_code) for e in session.events if e.kind == "tool_result"
    ]
    assert outcomes == [("t1", True, None), ("t2", True, None), ("t3", True, 1)]
    assert session.header.session_id == "old" and session.header.cwd is None
    assert [e.source.line for e in session.events] == [1, 2, 3, 4, 5, 6, 7]


def _queued(uid: str, parent: str, prompt: Any, **attachment: Any) -> dict[str, Any]:
    """A ``queued_command`` attachment line, as Claude Code writes a message typed mid-turn."""
    fields = {"type": "queued_command", "commandMode": "prompt", "origin": {"kind": "human"}}
    return {
        "type": "attachment",
        "parentUuid": parent,
        "uuid": uid,
        "isSidechain": False,
        "sessionId": "s-1",
        "attachment": {**fields, "prompt": prompt, **attachment},
    }


STEER = "also make remove_item(name, 0) a no-op that returns the current quantity"


def test_a_message_typed_while_the_agent_worked_is_a_steer(tmp_path: Path) -> None:
    """Claude Code folds a message typed mid-turn into the running turn as a ``queued_command``
    attachment, with no ``user`` line (then ``queue-operation`` ``remove``): it is the person's
    words, delivered as a steer. A task notification, another session's message, meta text and
    a queued prompt on an abandoned branch are not; nor is the empty ``enqueue`` record."""
    records = lines_of("extend.jsonl")
    edited = "03000010-0000-4000-8000-000000000010"  # the Edit's result, on the path
    abandoned = "03000003-0000-4000-8000-000000000003"  # the first prompt's branch
    queued = [
        {"type": "queue-operation", "operation": "enqueue", "sessionId": "s-1"},
        _queued(
            "q-note",
            edited,
            "<task-notification>done</task-notification>",
            commandMode="task-notification",
        ),
        _queued("q-peer", edited, "hello from the other session", origin={"kind": "peer"}),
        _queued("q-meta", edited, "meta text", isMeta=True),
        _queued("q-steer", edited, [{"type": "text", "text": STEER}]),
        {"type": "queue-operation", "operation": "remove", "sessionId": "s-1"},
    ]
    records[11 - 1]["parentUuid"] = "q-steer"  # the next line hangs off the attachment
    records = [
        *records[:3],
        _queued("q-old", abandoned, "forget it"),
        *records[3:10],
        *queued,
        *records[10:],
    ]
    session = parse(write_lines(tmp_path / "s.jsonl", records))
    users = [i for i, e in enumerate(session.events) if e.kind == "user"]
    assert [session.events[i].text for i in users] == [SCENARIOS[2].request, STEER]
    assert session.steers == (users[1],)
    before, after = session.events[users[1] - 1], session.events[users[1] + 1]
    assert before.kind == "tool_result" and before.call_id == "toolu_e2"
    assert after.call_id in ("toolu_e3:original", "toolu_e3")
    assert session.skipped["attachment"] == 4 and session.skipped["queue-operation"] == 2
    assert parse(FIXTURES / "extend.jsonl").steers == ()


def test_the_steer_typed_mid_turn_is_part_of_the_task_it_steered(tmp_path: Path) -> None:
    """Through the CLI: the queued message joins the request it continues ("also …"), so the
    task states both (without it, the reference does what the request alone does not ask)."""
    records = lines_of("extend.jsonl")
    records[10]["parentUuid"] = "q-steer"
    edited = "03000010-0000-4000-8000-000000000010"
    records = [*records[:10], _queued("q-steer", edited, STEER), *records[10:]]
    (tmp_path / "in").mkdir()
    write_lines(tmp_path / "in" / "s.jsonl", records)
    argv = [sys.executable, "-m", "trajforge.cli.main", "reconstruct", str(tmp_path / "in")]
    result = subprocess.run(
        [*argv, "-o", str(tmp_path / "out"), "--json"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    (task,) = (json.loads(p.read_text()) for p in (tmp_path / "out").glob("tasks/*/task.json"))
    assert task["family"] == "extend"
    assert task["instruction"] == f"{SCENARIOS[2].request}\n\n{STEER}"
