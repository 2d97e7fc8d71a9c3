"""The Codex reader on the hand-authored rollouts in tests/fixtures/sessions/codex (envelope era
for build / repair / extend, bare era for qa, written by generate.py from the codex-rs protocol
types) and on damaged, forked and rolled-back variants derived from them in tmp_path.
"""

from __future__ import annotations

import importlib.util
import json
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
    PYTEST,
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
from trajforge.reconstruct.formats.codex import (
    CodexFormat,
    call_fields,
    parse_output,
    shell_read,
)
from trajforge.reconstruct.inputs import read_head
from trajforge.reconstruct.replay import replay
from trajforge.records import Event, GitInfo, ParseWarning, Session
from trajforge.registry import FORMATS, create

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sessions" / "codex"
OTHER_FIXTURES = Path(__file__).parents[1] / "fixtures" / "sessions"
NAMES = {
    "build": "rollout-2025-09-01T09-00-00-0199a001-0000-7000-8000-000000000001.jsonl",
    "repair": "rollout-2025-09-02T09-00-00-0199a002-0000-7000-8000-000000000002.jsonl",
    "extend": "rollout-2025-09-03T09-00-00-0199a003-0000-7000-8000-000000000003.jsonl",
    "qa": "rollout-2025-07-04T09-00-00-0199a004-0000-7000-8000-000000000004.jsonl",
}


def load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("codex_generate", FIXTURES / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse(path: Path) -> Session:
    out = list(CodexFormat().parse(path))
    assert len(out) == 1 and isinstance(out[0], Session), out
    return out[0]


def fixture(name: str) -> Path:
    return FIXTURES / NAMES[name]


def pair(session: Session, call_id: str) -> tuple[Event, Event]:
    call, result = [e for e in session.events if e.call_id == call_id]
    return call, result


def write_lines(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_committed_fixtures_match_their_generator() -> None:
    rendered = load_generator().render()
    assert sorted(rendered) == sorted(p.name for p in FIXTURES.glob("*.jsonl"))
    assert sorted(rendered) == sorted(NAMES.values())
    for name, text in rendered.items():
        assert (FIXTURES / name).read_text() == text, f"{name}: rerun generate.py"


def test_registered_and_sniffs_both_eras_only(tmp_path: Path) -> None:
    fmt = create(FORMATS, "codex", "format")
    assert isinstance(fmt, CodexFormat) and isinstance(fmt, Format) and fmt.name == "codex"
    for path in FIXTURES.glob("*.jsonl"):
        assert fmt.sniff(path, read_head(path)), path
    for path in OTHER_FIXTURES.rglob("*.jsonl"):
        if path.parent.name != "codex":
            assert not fmt.sniff(path, read_head(path)), path
    pi_like = write_lines(
        tmp_path / "pi.jsonl", [{"type": "session", "id": "x", "timestamp": "t", "cwd": "/"}]
    )
    assert not fmt.sniff(pi_like, read_head(pi_like))


def test_build_envelope_header_patches_and_json_outputs() -> None:
    session = parse(fixture("build"))
    assert session.header.model_dump() == {
        "harness": "codex",
        "session_id": "0199a001-0000-7000-8000-000000000001",
        "source_path": str(fixture("build")),
        "content_hash": session.header.content_hash,
        "harness_version": "0.46.0",
        "model": "gpt-5-codex",
        "cwd": "/home/dev/stats",
        "git": {
            "repository_url": "https://github.com/example/stats.git",
            "branch": "main",
            "commit": "01" + "c0ffee" * 6 + "ab",
        },
        "started_at": "2025-09-01T09:00:00.000Z",
    }
    assert Counter(e.kind for e in session.events) == Counter(
        {"user": 1, "assistant": 1, "tool_call": 3, "tool_result": 3}
    )
    argv_patch, argv_out = pair(session, "call_1001")
    assert (argv_patch.tool, argv_patch.tool_kind, argv_patch.patch_format) == (
        "shell",
        "patch",
        "v4a",
    )
    assert argv_patch.patch is not None and "*** Add File: stats.py" in argv_patch.patch
    assert (argv_out.exit_code, argv_out.is_error) == (0, False)
    assert argv_out.text == "Success. Updated the following files:\nA stats.py\n"
    freeform, _ = pair(session, "call_1002")
    assert (freeform.tool, freeform.tool_kind) == ("apply_patch", "patch")
    tests, result = pair(session, "call_1003")
    assert (tests.command, tests.cwd) == (PYTEST, "/home/dev/stats")  # bash -lc unwrapped
    assert result.exit_code == 0 and result.text.endswith("3 passed in 0.02s\n")
    assert session.skipped["response_item:reasoning"] == 1
    assert session.skipped["message:context"] == 1
    assert session.events[0].text == SCENARIOS[0].request


def test_repair_header_form_outputs_and_heredoc_patch() -> None:
    session = parse(fixture("repair"))
    run, failed = pair(session, "call_2001")
    assert run.command == PYTEST
    assert (failed.exit_code, failed.is_error) == (1, True)
    assert failed.text.startswith(".F.") and "Wall time" not in failed.text
    _, cat = pair(session, "call_2002")
    assert cat.text == CALC_TEST
    _, sed = pair(session, "call_2003")
    assert sed.text == CALC_BUGGY and sed.exit_code == 0
    learned = session.events[session.events.index(sed) + 1]
    assert (learned.call_id, learned.tool_kind, learned.path, learned.content) == (
        "call_2003:read",
        "read",
        "/home/dev/calc/calc.py",
        CALC_BUGGY,
    )
    assert not learned.partial  # 7 lines printed of the 200 asked for: the whole file
    assert not [e for e in session.events if e.call_id == "call_2001:read"]
    patch, applied = pair(session, "call_2004")
    assert patch.tool == "shell" and patch.tool_kind == "patch" and patch.command is None
    assert patch.patch is not None and patch.patch.startswith("*** Begin Patch\n")
    assert patch.patch.endswith("*** End Patch\n") and "PATCH" not in patch.patch
    assert not applied.is_error
    assert pair(session, "call_2005")[1].exit_code == 0
    assert session.events[-1].text == next(a[1] for a in SCENARIOS[1].actions if a[0] == "say")


def test_extend_plain_output_takes_exit_code_from_exec_end() -> None:
    session = parse(fixture("extend"))
    cat, out = pair(session, "call_3001")
    assert cat.command == "cat inventory.py" and out.text == INVENTORY
    assert out.exit_code == 0
    _, printed = pair(session, "call_3003")
    assert printed.text == INVENTORY_TEST and printed.exit_code == 0
    fn_patch, fn_out = pair(session, "call_3004")
    assert (fn_patch.tool, fn_patch.tool_kind, fn_patch.patch_format) == (
        "apply_patch",
        "patch",
        "v4a",
    )
    assert fn_out.exit_code == 0
    assert session.skipped["event_msg:exec_command_end"] == 2


def test_qa_bare_era() -> None:
    session = parse(fixture("qa"))
    header = session.header
    assert header.session_id == "0199a004-0000-7000-8000-000000000004"
    assert header.cwd == "/home/dev/sales"  # from the <environment_context> message
    assert header.harness_version is None and header.model is None
    assert header.git == GitInfo(
        repository_url="https://github.com/example/sales.git",
        branch="main",
        commit="04" + "c0ffee" * 6 + "ab",
    )
    assert header.started_at == "2025-07-04T09:00:00.000Z"
    assert session.skipped == {"state": 3, "message:context": 1, "response_item:reasoning": 1}
    cat, cat_out = pair(session, "call_q1")
    assert cat.command == "cat sales.csv" and cat_out.text == SALES and cat_out.exit_code == 0
    local, plain = pair(session, "call_q2")
    assert (local.tool, local.tool_kind, local.command) == ("local_shell", "shell", SUM_CMD)
    assert local.cwd == "/home/dev/sales"
    assert (plain.text, plain.exit_code, plain.is_error) == ("136.5\n", None, False)
    plan, _ = pair(session, "call_q3")
    assert plan.tool_kind == "other" and plan.arguments["plan"][0]["status"] == "completed"
    assert session.events[-1].kind == "assistant"
    assert session.events[-1].text == "The total of the amount column is 136.50."
    assert [e.source.line for e in session.events] == [4, 6, 7, 7, 9, 10, 11, 12, 13]
    read = session.events[3]
    assert (read.kind, read.tool_kind, read.call_id) == ("tool_result", "read", "call_q1:read")
    assert (read.path, read.content, read.partial) == ("/home/dev/sales/sales.csv", SALES, False)
    assert not [e for e in session.events if e.call_id == "call_q2:read"]  # not a file read


@pytest.mark.parametrize(
    ("name", "base", "expected"),
    [
        ("build", {}, {"stats.py": STATS, "test_stats.py": STATS_TEST}),
        (
            "repair",
            {},
            {
                "calc.py": CALC_BUGGY.replace(
                    "return high\n    if value > high", "return low\n    if value > high"
                ),
                "test_calc.py": CALC_TEST,
            },
        ),
        (
            "extend",
            {},
            {
                "inventory.py": INVENTORY.replace("        return self.items[name]\n", REMOVE_ITEM),
                "test_inventory.py": REMOVE_TEST,
            },
        ),
        ("qa", {}, {"sales.csv": SALES}),
    ],
)
def test_replay_applies_the_v4a_patches(
    name: str, base: dict[str, str], expected: dict[str, str]
) -> None:
    session = parse(fixture(name))
    state = replay(session.events, session.header.cwd, base=base)
    assert not state.divergences and not state.violations
    assert state.state_at(len(session.events) - 1).files == expected


def test_parse_output_forms() -> None:
    meta = json.dumps({"output": "ok\n", "metadata": {"exit_code": 2, "duration_seconds": 1}})
    assert parse_output(meta) == ("ok\n", 2, None)
    header = "Exit code: 0\nWall time: 1.2 seconds\nTotal output lines: 2\nOutput:\na\nb\n"
    assert parse_output(header) == ("a\nb\n", 0, None)
    unified = (
        "Chunk ID: 1f\nWall time: 0.1 seconds\nProcess exited with code 3\n"
        "Original token count: 4\nOutput:\nboom\n"
    )
    assert parse_output(unified) == ("boom\n", 3, None)
    assert parse_output("just text") == ("just text", None, None)
    assert parse_output("{not json") == ("{not json", None, None)
    assert parse_output({"content": "denied", "success": False}) == ("denied", None, False)
    items = [{"type": "input_text", "text": "a"}, {"type": "input_image", "image_url": "x"}]
    assert parse_output(items) == ("a", None, None)


def test_shell_read_recognises_whole_and_ranged_prints() -> None:
    assert shell_read("cat a.py", "/w", "x\n") == {
        "path": "/w/a.py",
        "content": "x\n",
        "partial": False,
    }
    assert shell_read("cat /abs/a.py", "/w", "x\n")["path"] == "/abs/a.py"
    assert shell_read("sed -n '1,2p' a.py", None, "1\n2\n") == {
        "path": "a.py",
        "content": "1\n2\n",
        "partial": True,
    }
    assert shell_read("sed -n '5,9p' a.py", None, "5\n")["partial"]
    cut = "a\n[... omitted 10 of 300 lines ...]\nz\n"
    assert shell_read("cat big.py", None, cut)["partial"]
    for command in (
        "cat a.py b.py",
        "cat *.py",
        "cat a.py | head",
        "ls",
        "cat 'unclosed",
        "cat -n a.py",
        None,
    ):
        assert shell_read(command, "/w", "x") is None, command


def test_call_fields_spellings() -> None:
    assert (
        call_fields("shell", {"command": ["ls", "-la", "my dir"]})["command"] == "ls -la 'my dir'"
    )
    assert call_fields("shell_command", {"command": "ls", "workdir": "/w"}) == {
        "tool_kind": "shell",
        "command": "ls",
        "cwd": "/w",
    }
    assert call_fields("exec_command", {"cmd": "pytest -q"})["command"] == "pytest -q"
    heredoc = (
        "cd /w && apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: a\n*** End Patch\nEOF"
    )
    assert (
        call_fields("shell", {"command": ["bash", "-lc", heredoc]})["patch"]
        == "*** Begin Patch\n*** Delete File: a\n*** End Patch\n"
    )
    assert call_fields("update_plan", {"plan": []}) == {"tool_kind": "other"}


def test_thread_rollback_drops_the_abandoned_turn(tmp_path: Path) -> None:
    lines = [json.loads(x) for x in fixture("extend").read_text().splitlines()]

    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "timestamp": "2025-09-03T10:00:00.000Z",
            "type": "response_item",
            "payload": payload,
        }

    def user(text: str) -> dict[str, Any]:
        return item(
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        )

    lines += [
        user("Also add a clear() method."),
        item(
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "call_x",
                "arguments": json.dumps({"command": ["bash", "-lc", "rm inventory.py"]}),
            }
        ),
        item({"type": "function_call_output", "call_id": "call_x", "output": ""}),
        {
            "timestamp": "2025-09-03T10:01:00.000Z",
            "type": "event_msg",
            "payload": {"type": "thread_rolled_back", "num_turns": 1},
        },
        user("Thanks, that's all."),
    ]
    session = parse(write_lines(tmp_path / "rolled.jsonl", lines))
    assert not [e for e in session.events if e.call_id == "call_x"]
    assert [e.text for e in session.events if e.kind == "user"] == [
        SCENARIOS[2].request,
        "Thanks, that's all.",
    ]
    assert session.skipped["rolled_back"] == 3
    assert session.events[-1].source.line == len(lines)


def test_forked_rollout_keeps_its_own_meta(tmp_path: Path) -> None:
    lines = [json.loads(x) for x in fixture("build").read_text().splitlines()]
    parent_meta = json.loads(json.dumps(lines[0]))
    lines[0]["payload"].update(
        id="0199ffff-0000-7000-8000-00000000000f",
        forked_from_id="0199a001-0000-7000-8000-000000000001",
    )
    lines.insert(1, parent_meta)
    session = parse(write_lines(tmp_path / "fork.jsonl", lines))
    assert session.header.session_id == "0199ffff-0000-7000-8000-00000000000f"
    assert session.skipped["session_meta:extra"] == 1
    assert len(session.events) == len(parse(fixture("build")).events)


def test_base_files_fill_what_the_session_never_printed(tmp_path: Path) -> None:
    lines = fixture("extend").read_text().splitlines(keepends=True)
    kept = [x for x in lines if "call_3003" not in x]  # drop `cat test_inventory.py`
    blind_file = tmp_path / "rollout-blind.jsonl"
    blind_file.write_text("".join(kept))
    session = parse(blind_file)
    blind = replay(session.events, session.header.cwd)
    assert any("test_inventory.py" in d for d in blind.divergences)
    based = replay(session.events, session.header.cwd, base={"test_inventory.py": INVENTORY_TEST})
    assert not based.divergences
    assert based.state_at(len(session.events) - 1).files["test_inventory.py"] == REMOVE_TEST


def test_bad_lines_become_warnings_and_valid_records_stay(tmp_path: Path) -> None:
    good = fixture("repair").read_bytes().splitlines(keepends=True)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(
        b"".join(good[:3])
        + b"\xde\xad\xbe\xef\n"
        + b'"a string"\n'
        + b'{"type": "nonsense"}\n'
        + b"".join(good[3:])
        + good[-1][:30]
    )
    session = parse(damaged)
    assert [w.line for w in session.warnings] == [4, 5, 6, len(good) + 4]
    assert all(w.file == str(damaged) for w in session.warnings)
    assert "not a Codex rollout line" in session.warnings[1].message
    intact = parse(fixture("repair"))
    assert [(e.kind, e.call_id, e.text, e.exit_code) for e in session.events] == [
        (e.kind, e.call_id, e.text, e.exit_code) for e in intact.events
    ]


def test_bad_arguments_and_unknown_outputs_warn(tmp_path: Path) -> None:
    lines = [
        {"id": "bare-1", "timestamp": "2025-05-01T00:00:00Z", "instructions": ""},
        {"type": "function_call", "name": "shell", "call_id": "c1", "arguments": "{oops"},
        {"type": "function_call_output", "call_id": "c9", "output": "orphan"},
        {"type": "web_search_call", "call_id": "c2", "status": "completed"},
    ]
    session = parse(write_lines(tmp_path / "bad.jsonl", lines))
    assert [w.line for w in session.warnings] == [2, 3]
    assert session.events[0].arguments == {"raw": "{oops"}
    assert session.events[1].tool is None and session.events[1].text == "orphan"
    assert session.skipped == {"response_item:web_search_call": 1}
    assert session.header.session_id == "bare-1"


def test_empty_and_foreign_files(tmp_path: Path) -> None:
    empty = tmp_path / "rollout-empty.jsonl"
    empty.write_text("")
    assert list(CodexFormat().parse(empty)) == [
        ParseWarning(file=str(empty), line=1, message="empty file: no Codex rollout lines")
    ]
    foreign = write_lines(tmp_path / "f.jsonl", [{"conversations": []}, [1]])
    with pytest.raises(FormatError, match=r"f\.jsonl.*line 1"):
        list(CodexFormat().parse(foreign))


def test_a_call_its_sandbox_could_not_start_failed() -> None:
    """The shared Windows session (Battle-Cities): "execution error: Io(Custom { … windows
    sandbox: runner error: CreateProcessAsUserW failed: 1312 })" has no exit code, and the call
    never ran; it was recorded as a success, and a live_state detail cited it over the retry."""
    path = (
        Path(__file__).parents[2].parent
        / "shared/corpus/real/codex/CryptoSodi__Battle-Cities/codex-session.jsonl"
    )
    if not path.is_file():
        pytest.skip(f"SKIPPED: the shared real corpus is not at {path}")
    session = parse(path)
    results = [e for e in session.events if e.kind == "tool_result"]
    failed = [e for e in results if e.text.startswith("execution error:")]
    assert failed and all(e.is_error for e in failed)
    assert not all(e.is_error for e in results)  # the retries outside the sandbox ran
