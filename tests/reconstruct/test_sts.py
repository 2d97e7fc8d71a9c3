"""The Hub's Session Trace Simple Format (STS-Format) as an input format.

The session below is hand-written in the spec's exact shape
(https://huggingface.co/docs/hub/session-traces-format): a header, then message envelopes with
``toolCalls`` whose ``arguments`` are JSON strings and ``tool`` results linked by
``toolCallId``, under a harness's own tool names (``write_file``, the text-editor tool,
``bash``). pi's session files also start with ``{"type": "session", ...}``: they must never be
read as STS, nor STS as pi. Our own ``export sts`` read back is in tests/splits/test_export_sts.py.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from trajforge.errors import FormatError
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.formats.sts import StsFormat
from trajforge.reconstruct.inputs import read_head
from trajforge.records import ParseWarning, Session, Task, load_record

FMT = StsFormat()
GREET = 'def hello(name):\n    return f"Hello, {name}!"\n'
TEST = 'from greet import hello\n\n\ndef test_hello():\n    assert hello("Ada") == "Hello, Ada!"\n'
REQUEST = (
    "Create a Python module greet.py with a function hello(name) that returns "
    "'Hello, <name>!', add a pytest test for it in test_greet.py, and run the tests."
)
HEADER = {"type": "session", "harness": "my-agent", "id": "b1a2c3", "name": "Greeting module"}


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "function": {"name": name, "arguments": json.dumps(args)}}


def _msg(**message: Any) -> dict[str, Any]:
    return {"type": "message", "message": message}


MESSAGES = [
    _msg(role="system", content="You are a coding agent."),
    _msg(role="user", content=REQUEST, timestamp=1767225600000),
    _msg(
        role="assistant",
        content="",
        reasoningContent="Write the module first.",
        model="my-model-1",
        timestamp=1767225601000,
        toolCalls=[_call("call_1", "write_file", {"path": "greet.py", "content": GREET})],
    ),
    _msg(role="tool", content="Wrote greet.py", toolCallId="call_1", timestamp=1767225601500),
    _msg(
        role="assistant",
        content="Now the test.",
        model="my-model-1",
        toolCalls=[
            _call(
                "call_2",
                "str_replace_based_edit_tool",
                {"command": "create", "path": "test_greet.py", "file_text": TEST},
            )
        ],
    ),
    _msg(role="tool", content="File created", toolCallId="call_2"),
    _msg(
        role="assistant",
        content="",
        model="my-model-1",
        toolCalls=[_call("call_3", "bash", {"command": "python -m pytest -q"})],
    ),
    _msg(role="tool", content="1 passed in 0.01s", toolCallId="call_3"),
    _msg(role="assistant", content="Done: greet.py and its test pass.", model="my-model-1"),
]


def _write(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    return _write(tmp_path / "session.jsonl", [HEADER, *MESSAGES])


def _only(path: Path) -> Session:
    (session,) = list(FMT.parse(path))
    assert isinstance(session, Session)
    return session


def test_sniffed_as_sts_before_pi(trace: Path) -> None:
    formats = pipeline.all_formats()
    head = read_head(trace)
    claims = [f.name for f in formats if f.sniff(trace, head)]
    assert claims[0] == "sts" and set(claims) <= {"sts", "pi"}  # pi takes any session line
    assert pipeline.detect(trace, formats).name == "sts"


def test_spec_shaped_session_reads_to_events(trace: Path) -> None:
    session = _only(trace)
    header = session.header
    assert (header.harness, header.session_id, header.model) == ("my-agent", "b1a2c3", "my-model-1")
    assert header.started_at == "2026-01-01T00:00:00.000Z"  # the first message's epoch ms
    assert header.source_path == str(trace) and len(header.content_hash) == 64
    got = [
        (e.kind, e.source.line, e.tool, e.tool_kind, e.path or e.command, e.text[:13])
        for e in session.events
    ]
    assert got == [
        ("user", 3, None, None, None, REQUEST[:13]),
        ("tool_call", 4, "write_file", "write", "greet.py", ""),
        ("tool_result", 5, "write_file", "write", None, "Wrote greet.py"[:13]),
        ("assistant", 6, None, None, None, "Now the test."),
        ("tool_call", 6, "str_replace_based_edit_tool", "write", "test_greet.py", ""),
        ("tool_result", 7, "str_replace_based_edit_tool", "write", None, "File created"),
        ("tool_call", 8, "bash", "shell", "python -m pytest -q", ""),
        ("tool_result", 9, "bash", "shell", None, "1 passed in 0"),
        ("assistant", 10, None, None, None, "Done: greet.p"),
    ]
    assert all(e.source.file == str(trace) for e in session.events)
    calls = [e for e in session.events if e.kind == "tool_call"]
    assert [e.content for e in calls[:2]] == [GREET, TEST]
    assert [e.call_id for e in session.events if e.kind == "tool_result"] == [
        "call_1",
        "call_2",
        "call_3",
    ]
    assert session.warnings == ()
    assert session.skipped == {"system_message": 1, "reasoning_content": 1}


def test_spec_shaped_session_replays_to_a_build_task(trace: Path, tmp_path: Path) -> None:
    summary = pipeline.run([trace], tmp_path / "out")
    assert summary.exit_code() == 0 and [i.format for i in summary.inputs] == ["sts"]
    assert summary.candidates == {"my-agent": {"build": 1}}
    (task_json,) = (tmp_path / "out" / "tasks").glob("build-*/task.json")
    task = load_record(Task, task_json)
    assert (task.source.harness, task.source.session) == ("my-agent", "b1a2c3")
    assert task.instruction.startswith("Create a Python module greet.py")
    oracle = task_json.parent / "oracle"
    assert (oracle / "greet.py").read_text() == GREET
    assert (oracle / "test_greet.py").read_text() == TEST


def test_pi_files_are_not_sts(tmp_path: Path) -> None:
    pi_files = [p for p in sorted(FIXTURES.rglob("*.jsonl")) if "pi" in p.parts]
    assert len(pi_files) >= 7  # pi/, repos/pi/, ts/pi/
    for path in pi_files:
        assert not FMT.sniff(path, read_head(path)), path
        assert pipeline.detect(path, pipeline.all_formats()).name == "pi", path
    # a pi v1 header (no version) with a string-content message, and one quoting an STS header
    quoted = json.dumps(HEADER)
    lines = [
        {"type": "session", "id": "p1", "timestamp": "2026-01-01T00:00:00Z", "cwd": "/w"},
        {
            "type": "message",
            "timestamp": "2026-01-01T00:00:01Z",
            "message": {"role": "user", "content": quoted, "timestamp": 1},
        },
    ]
    path = _write(tmp_path / "pi.jsonl", lines)
    assert not FMT.sniff(path, read_head(path))
    assert pipeline.detect(path, pipeline.all_formats()).name == "pi"


def test_other_fixtures_are_not_sts(fixture_sessions: dict[str, list[Path]]) -> None:
    for paths in fixture_sessions.values():
        for path in paths:
            assert not FMT.sniff(path, read_head(path)), path


def test_damaged_lines_are_warnings_with_file_and_line(tmp_path: Path) -> None:
    lines = [json.dumps(HEADER), *(json.dumps(m) for m in MESSAGES[:3])]
    lines += ['{"type": "message", "message": {"role": "tool", "cont', "[1, 2]"]
    last = MESSAGES[8]
    lines += [json.dumps(_msg(role="narrator", content="?")), json.dumps(last)]
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(lines) + "\n")
    session = _only(path)
    assert [(w.file, w.line) for w in session.warnings] == [(str(path), n) for n in (5, 6, 7)]
    assert session.warnings[0].message.startswith("not JSON")
    assert session.events[-1].text == last["message"]["content"]  # read on past the damage
    assert session.events[-1].source.line == 8
    summary = pipeline.run([path], tmp_path / "out")  # reported, never a traceback
    assert summary.warnings[0].startswith(f"{path}:5: not JSON")


def test_unusable_calls_and_results_are_counted(tmp_path: Path) -> None:
    bad_args = {"id": "c9", "function": {"name": "bash", "arguments": "{not json"}}
    lines = [
        HEADER,
        _msg(role="user", content="Run the listing please, then tell me what is there."),
        _msg(role="assistant", content="", toolCalls=[bad_args]),
        _msg(role="tool", content="orphan", toolCallId="nobody"),
        _msg(
            role="assistant",
            content="",
            toolCalls=[{"id": "c1", "function": {"name": "run", "arguments": {"cmd": "ls"}}}],
        ),
        _msg(role="tool", content="a.py", toolCallId="c1", isError=False, exitCode=0),
        {"type": "custom", "note": "ignored"},
    ]
    session = _only(_write(tmp_path / "odd.jsonl", lines))
    assert [(w.line, w.message[:20]) for w in session.warnings] == [(3, "unreadable tool call")]
    assert session.skipped == {
        "unreadable_tool_call": 1,
        "tool_result_without_call": 1,
        "custom_line": 1,
    }
    call, result = session.events[1:]
    assert (call.tool_kind, call.command, call.arguments) == ("shell", "ls", {"cmd": "ls"})
    assert (result.exit_code, result.is_error) == (0, False)


def test_header_without_harness_or_id_is_a_clear_error(tmp_path: Path) -> None:
    for field in ("harness", "id"):
        header = {k: v for k, v in HEADER.items() if k != field}
        path = _write(tmp_path / f"no-{field}.jsonl", [header, *MESSAGES])
        with pytest.raises(FormatError, match=rf"no-{field}\.jsonl: line 1: .*'{field}'"):
            list(FMT.parse(path))
        # sniffed as STS (never pi): reading it names the field instead of misreading it
        assert pipeline.detect(path, pipeline.all_formats()).name == "sts"
        summary = pipeline.run([path], tmp_path / f"out-{field}")
        assert summary.exit_code() == 2 and f"'{field}'" in (summary.inputs[0].error or "")
    headless = _write(tmp_path / "headless.jsonl", MESSAGES[1:])
    assert pipeline.detect(headless, pipeline.all_formats()).name == "sts"
    with pytest.raises(FormatError, match=r"headless\.jsonl: line 1: no STS session header"):
        list(FMT.parse(headless))
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "session", "harn\n' + json.dumps(MESSAGES[1]) + "\n")
    with pytest.raises(FormatError, match=r"broken\.jsonl: line 1: no STS session header \(not"):
        list(FMT.parse(broken))


def test_concatenated_and_gzipped_sessions(tmp_path: Path) -> None:
    second = {**HEADER, "id": "d4e5f6", "cwd": "/work/app", "timestamp": 1767225600000}
    raw = "".join(json.dumps(x) + "\n" for x in [HEADER, *MESSAGES, second, *MESSAGES[1:3]])
    path = tmp_path / "two.jsonl.gz"
    path.write_bytes(gzip.compress(raw.encode()))
    assert FMT.sniff(path, read_head(path))
    items = list(FMT.parse(path))
    assert all(isinstance(i, Session) for i in items)
    sessions = [i for i in items if isinstance(i, Session)]
    assert [s.header.session_id for s in sessions] == ["b1a2c3", "d4e5f6"]
    assert sessions[1].header.cwd == "/work/app"
    assert sessions[1].header.started_at == "2026-01-01T00:00:00.000Z"
    assert [e.source.line for e in sessions[1].events] == [12, 13]
    assert sessions[0].header.content_hash != sessions[1].header.content_hash
    assert not any(isinstance(i, ParseWarning) for i in items)
