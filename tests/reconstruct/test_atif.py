"""ATIF as an input format: our own `export atif` read back, and ATIF in the upstream shape.

The round trip exports every fixture session (written by the real harnesses) with
``trajforge.splits.atif.export`` and reconstructs both: the same events, the same task ids.
``tests/fixtures/sessions/atif/harbor-claude-code.json`` is hand-written in the shape Harbor's
agents write (see the README beside it); other upstream shapes are built in tmp_path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.scenarios import CALC_BUGGY
from tests.support.roundtrip import all_task_ids, events_of, sessions_by_key
from trajforge.errors import FormatError
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.formats.atif import AtifFormat
from trajforge.reconstruct.inputs import read_head
from trajforge.records import ParseWarning, Session, Task, load_record
from trajforge.registry import FORMATS, create
from trajforge.splits.atif import export

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sessions"
HARBOR = FIXTURES / "atif" / "harbor-claude-code.json"
FMT = AtifFormat()


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("atif")
    folders = [FIXTURES / h for h in ("pi", "opencode", "hermes", "claude-code", "codex")]
    outcomes = list(export(folders, target))
    assert outcomes and all(o.status == "accepted" for o in outcomes)
    return target


def test_export_reads_back_to_the_same_events(exported: Path) -> None:
    folders = [FIXTURES / h for h in ("pi", "opencode", "hermes", "claude-code", "codex")]
    inputs, _ = pipeline.expand_paths(folders)
    original = sessions_by_key(inputs)
    files = sorted(exported.glob("*.json"))
    assert [pipeline.detect(f, pipeline.all_formats()).name for f in files] == ["atif"] * len(files)
    again = sessions_by_key(files)
    assert set(again) == set(original) and len(again) >= 20
    for key, session in again.items():
        before = original[key]
        assert session.warnings == (), key
        assert session.header.cwd == before.header.cwd, key
        assert session.header.model == before.header.model, key
        assert events_of(session) == events_of(before), key
        # what triage joins by (a request cut off, the steer after it) travels too
        assert (session.cut_offs, session.steers) == (before.cut_offs, before.steers), key
    assert any(s.cut_offs for s in again.values())


def test_export_reconstructs_to_the_same_tasks(exported: Path, tmp_path: Path) -> None:
    folders = [FIXTURES / h for h in ("pi", "opencode", "hermes", "claude-code", "codex")]
    direct = pipeline.run(folders, tmp_path / "direct")
    via = pipeline.run([exported], tmp_path / "via-atif")
    assert via.exit_code() == 0 and via.warnings == []
    assert {i.format for i in via.inputs} == {"atif"}
    # the export writes one file per session id: the copies in all.jsonl.gz, opencode.db and
    # the legacy storage tree are the same sessions, so fewer sessions, the same tasks
    assert set(via.sessions) == set(direct.sessions)
    # the same qa scenario in every harness is one task; which copy is kept follows input order
    assert all_task_ids(via, tmp_path / "via-atif") == all_task_ids(direct, tmp_path / "direct")
    assert via.written == direct.written


def test_harbor_shaped_trajectory_is_inferred_from_its_arguments(tmp_path: Path) -> None:
    head = read_head(HARBOR)
    assert [n for n in FORMATS if create(FORMATS, n, "format").sniff(HARBOR, head)] == ["atif"]
    (session,) = list(FMT.parse(HARBOR))
    assert isinstance(session, Session) and session.warnings == ()
    header = session.header
    assert (header.harness, header.harness_version) == ("claude-code", "2.0.14")
    assert header.model == "claude-sonnet-4-5-20250929" and header.cwd is None
    assert header.started_at == "2025-11-03T17:02:11.412Z"
    calls = [(e.tool, e.tool_kind) for e in session.events if e.kind == "tool_call"]
    assert calls == [("Bash", "shell"), ("Read", "read"), ("Edit", "edit"), ("Bash", "shell")]
    shell = [e for e in session.events if e.kind == "tool_result" and e.tool_kind == "shell"]
    assert [(e.exit_code, e.is_error) for e in shell] == [(1, True), (0, False)]
    read = next(e for e in session.events if e.kind == "tool_result" and e.tool_kind == "read")
    assert read.content == CALC_BUGGY and read.path == "/app/calc.py"
    assert session.events[0].text.startswith("The tests in /app fail.")  # content parts (v1.6)
    summary = pipeline.run([HARBOR], tmp_path)
    assert summary.exit_code() == 0
    assert summary.candidates["claude-code"]["repair"] == 1
    repair = next(load_record(Task, p) for p in (tmp_path / "tasks").glob("repair-*/task.json"))
    assert repair.verifier.command == "python3 -m pytest -q"
    workspace = tmp_path / "tasks" / repair.id / "workspace" / "calc.py"
    oracle = tmp_path / "tasks" / repair.id / "oracle" / "calc.py"
    assert workspace.read_text() == CALC_BUGGY
    assert "return low" in oracle.read_text()


def _step(step_id: int, **fields: Any) -> dict[str, Any]:
    return {"step_id": step_id, "source": "agent", "message": "", **fields}


def _call(call_id: str, name: str, args: dict[str, Any], output: str) -> dict[str, Any]:
    return {
        "tool_calls": [{"tool_call_id": call_id, "function_name": name, "arguments": args}],
        "observation": {"results": [{"source_call_id": call_id, "content": output}]},
    }


def test_other_agents_tool_shapes(tmp_path: Path) -> None:
    """terminus-2 keystrokes, the str_replace_editor tool, Codex's apply_patch and exec output,
    a v1.7 result extra, a result without a call and an embedded subagent trajectory."""
    patch = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch"
    doc = {
        "schema_version": "ATIF-v1.7",
        "trajectory_id": "run-42",
        "agent": {"name": "terminus-2", "version": "1.0"},
        "steps": [
            {"step_id": 1, "source": "system", "message": "You are an agent."},
            {"step_id": 2, "source": "user", "message": "Make it work."},
            _step(
                3, **_call("k1", "bash_command", {"keystrokes": "ls -la\n", "duration": 0.1}, "$")
            ),
            _step(
                4, **_call("e1", "str_replace_editor", {"command": "view", "path": "/w/a.py"}, "x")
            ),
            _step(
                5,
                **_call(
                    "e2",
                    "str_replace_editor",
                    {"command": "str_replace", "path": "/w/a.py", "old_str": "1", "new_str": "2"},
                    "ok",
                ),
            ),
            _step(6, **_call("p1", "apply_patch", {"input": patch}, "Done!")),
            _step(
                7,
                **_call(
                    "s1", "exec_command", {"cmd": "make"}, "Process exited with code 2\nOutput:\n"
                ),
            ),
            _step(
                8,
                tool_calls=[
                    {"tool_call_id": "t1", "function_name": "run", "arguments": {"command": "true"}}
                ],
                observation={
                    "results": [
                        {"source_call_id": "t1", "content": "", "extra": {"exit_code": 0}},
                        {"content": "a note the environment added"},
                    ]
                },
            ),
        ],
        "subagent_trajectories": [{"trajectory_id": "sub-1", "agent": {}, "steps": []}],
    }
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(doc))
    assert FMT.sniff(path, read_head(path))
    (session,) = list(FMT.parse(path))
    assert isinstance(session, Session)
    assert session.header.session_id == "run-42" and session.header.harness == "terminus-2"
    calls = [
        (e.tool_kind, e.command or e.path or e.patch_format)
        for e in session.events
        if e.kind == "tool_call"
    ]
    assert calls == [
        ("shell", "ls -la"),
        ("read", "/w/a.py"),
        ("edit", "/w/a.py"),
        ("patch", "v4a"),
        ("shell", "make"),
        ("shell", "true"),
    ]
    codes = [
        e.exit_code for e in session.events if e.kind == "tool_result" and e.tool_kind == "shell"
    ]
    assert codes == [None, 2, 0]  # a terminal screen says nothing; exec output and extra do
    read = next(e for e in session.events if e.kind == "tool_result" and e.tool_kind == "read")
    assert read.content is None  # "x" is not a numbered listing: the file stays unknown
    assert session.skipped == {
        "system_step": 1,
        "observation_without_call": 1,
        "subagent_trajectory": 1,
    }


def test_lists_lines_and_bad_input(tmp_path: Path) -> None:
    one = json.loads(HARBOR.read_text())
    two = {**one, "session_id": "second"}
    listed = tmp_path / "both.json"
    listed.write_text(json.dumps([one, two]))
    assert [s.header.session_id for s in FMT.parse(listed) if isinstance(s, Session)] == [
        one["session_id"],
        "second",
    ]
    lines = tmp_path / "both.jsonl"
    lines.write_text(
        json.dumps(one) + "\n{broken\n" + json.dumps({"schema_version": "ATIF-v1.4"}) + "\n"
    )
    items = list(FMT.parse(lines))
    assert [type(i).__name__ for i in items] == ["Session", "ParseWarning", "ParseWarning"]
    assert [(i.line, i.message[:8]) for i in items if isinstance(i, ParseWarning)] == [
        (2, "not JSON"),
        (3, "not an A"),
    ]
    other = tmp_path / "config.json"
    other.write_text(json.dumps({"schema_version": "ATIF-v1.4", "name": "not a trajectory"}))
    with pytest.raises(FormatError, match="no 'steps'"):
        list(FMT.parse(other))


def test_a_session_that_quotes_atif_is_not_taken_for_it(tmp_path: Path) -> None:
    """A JSONL session whose messages contain an ATIF document holds it escaped."""
    text = json.dumps(json.loads(HARBOR.read_text()))
    quoting = tmp_path / "chat.jsonl"
    quoting.write_text(json.dumps({"type": "user", "message": {"content": text}}) + "\n")
    assert not FMT.sniff(quoting, read_head(quoting))
    for folder in ("pi", "opencode", "hermes", "claude-code", "codex"):
        for path in sorted((FIXTURES / folder).iterdir()):
            if path.is_file():
                assert not FMT.sniff(path, read_head(path)), path
