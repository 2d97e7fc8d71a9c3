"""The pi reader on real sessions: the pi-mono corpus, fixtures written by the real pi CLI, and
damaged variants of both derived here.

Expected counts were taken from the raw JSON with jq / a plain json one-off, not with this reader
(see /work/shared/corpus/README.md for the hand counts).
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.scenarios import CALC_BUGGY, REMOVE_ITEM, SCENARIOS, STATS
from trajforge.errors import FormatError
from trajforge.protocols import Format
from trajforge.reconstruct.formats.pi import PiFormat
from trajforge.reconstruct.inputs import expand_paths, read_head
from trajforge.records import Edit, Event, ParseWarning, Session
from trajforge.registry import FORMATS, create

CORPUS = Path("/work/shared/corpus/pi-mono")
LARGE = CORPUS / "large-session.jsonl"
COMPACTION = CORPUS / "before-compaction.jsonl"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "sessions" / "pi"

needs_corpus = pytest.mark.skipif(
    not LARGE.exists(), reason=f"pi-mono corpus missing at {CORPUS}: corpus tests cannot run"
)


def parse(path: Path) -> tuple[list[Session], list[ParseWarning]]:
    out = list(PiFormat().parse(path))
    return (
        [o for o in out if isinstance(o, Session)],
        [o for o in out if isinstance(o, ParseWarning)],
    )


def only_session(path: Path) -> Session:
    sessions, loose = parse(path)
    assert len(sessions) == 1 and not loose
    return sessions[0]


def kinds(session: Session) -> Counter[tuple[str, str | None]]:
    return Counter((e.kind, e.tool) for e in session.events)


def results(session: Session, tool_kind: str | None = None) -> list[Event]:
    return [
        e for e in session.events if e.kind == "tool_result" and tool_kind in (None, e.tool_kind)
    ]


def write_lines(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


# --- contract -------------------------------------------------------------------------------


def test_registered_and_satisfies_format_protocol() -> None:
    fmt = create(FORMATS, "pi", "format")
    assert isinstance(fmt, PiFormat) and isinstance(fmt, Format) and fmt.name == "pi"


@needs_corpus
def test_sniff_claims_pi_and_nothing_else(tmp_path: Path) -> None:
    fmt = PiFormat()
    pi_files = [LARGE, COMPACTION, *sorted(FIXTURES.glob("*.jsonl"))]
    assert all(fmt.sniff(p, read_head(p)) for p in pi_files)
    gz = tmp_path / "s.jsonl.gz"
    gz.write_bytes(gzip.compress(LARGE.read_bytes()))
    assert fmt.sniff(gz, read_head(gz))
    others = [
        b'{"parentUuid":null,"isSidechain":false,"type":"user","sessionId":"abc"}\n',  # claude
        b'{"type":"summary","summary":"x","leafUuid":"u"}\n',  # claude code summary line
        b'{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}\n',
        b'{"id":"x","timestamp":"2025-01-01","instructions":null}\n',  # old codex
        b'{"session_id":"x","model":"m","messages":[]}\n',  # hermes-style json
        b'{"type":"session"}\n',  # no id: pi itself rejects it
        b"\x00\x01garbage\n",
        b"",
    ]
    assert not any(fmt.sniff(tmp_path, head) for head in others)


# --- the real pi-mono sessions ----------------------------------------------------------------


@needs_corpus
def test_large_session_counts() -> None:
    s = only_session(LARGE)
    assert s.warnings == ()
    h = s.header
    assert (h.harness, h.harness_version, h.session_id) == (
        "pi",
        "session-v1",
        "d703a1a9-1b7b-4fb1-b512-c9738b1fe617",
    )
    assert h.model == "anthropic/claude-sonnet-4-5"
    assert h.cwd == "/Users/badlogic/workspaces/pi-mono"
    assert h.started_at == "2025-11-20T23:33:50.805Z"
    assert h.content_hash == hashlib.sha256(LARGE.read_bytes()).hexdigest()
    c = kinds(s)
    assert c[("user", None)] == 88
    assert c[("assistant", None)] == 244  # assistant messages with text (thinking excluded)
    calls = {t: c[("tool_call", t)] for t in ("bash", "edit", "read", "write")}
    assert calls == {"bash": 192, "edit": 146, "read": 50, "write": 3}
    assert len(results(s)) == 373
    assert sum(e.is_error for e in results(s)) == 19
    codes = Counter(e.exit_code for e in results(s, "shell"))
    assert codes == {0: 173, 1: 14, 2: 3, None: 2}  # 2 x "Command aborted"
    assert s.skipped == {"model_change": 1, "thinking_level_change": 103}
    # 21 messages stopped with "aborted" (the person pressed Escape), one "error" ("terminated")
    cut = Counter(c.failure for c in s.cut_offs)
    assert cut == {"Request was aborted.": 20, "Request was aborted": 1, "terminated": 1}
    assert [c.after for c in s.cut_offs] == sorted(c.after for c in s.cut_offs)
    # two messages sent while a turn still ran (after a tool result of a "toolUse" stop)
    steered = [s.events[i].text[:30] for i in s.steers]
    assert steered == ["wrie some code in markdown in ", "hm, i selected the theme while"]


@needs_corpus
def test_before_compaction_counts() -> None:
    s = only_session(COMPACTION)
    assert s.warnings == ()
    assert s.header.model == "anthropic/claude-opus-4-5"
    c = kinds(s)
    assert c[("user", None)] == 55
    assert c[("assistant", None)] == 253
    # 206 bash tool calls plus 3 user `!` commands (bashExecution)
    calls = {t: c[("tool_call", t)] for t in ("bash", "edit", "read", "write")}
    assert calls == {"bash": 209, "edit": 125, "read": 107, "write": 16}
    assert sum(e.is_error for e in results(s)) == 12
    codes = Counter(e.exit_code for e in results(s, "shell"))
    assert (codes[1], codes[2]) == (4, 2)
    assert s.skipped["compaction"] == 2
    user_bash = [e for e in s.events if e.call_id and e.call_id.startswith("bashExecution:")]
    assert [(e.kind, e.command, e.exit_code) for e in user_bash[:2]] == [
        ("tool_call", "ls", None),
        ("tool_result", None, 0),
    ]
    assert len(user_bash) == 6


@needs_corpus
@pytest.mark.parametrize(
    ("path", "partial", "full", "notices"), [(LARGE, 25, 25, 25), (COMPACTION, 88, 16, 82)]
)
def test_read_results_recover_file_text(path: Path, partial: int, full: int, notices: int) -> None:
    """Partial = ranged call or a "Use offset=N to continue" notice (both pi notice styles)."""
    reads = results(only_session(path), "read")
    assert Counter(e.partial for e in reads) == {True: partial, False: full}
    assert all(e.content is not None for e in reads)
    assert not any("Use offset=" in (e.content or "")[-100:] for e in reads)
    cut = [e for e in reads if e.text != e.content]
    assert len(cut) == notices
    for e in cut:
        assert e.partial and e.text.startswith(e.content or "")
        assert "Use offset=" in e.text[len(e.content or "") :]


@needs_corpus
def test_tool_calls_are_normalised() -> None:
    s = only_session(LARGE)
    calls = {e.call_id: e for e in s.events if e.kind == "tool_call"}
    for e in calls.values():
        assert e.arguments and e.source.file == str(LARGE) and e.source.line > 1
        if e.tool_kind == "shell":
            assert e.command == e.arguments["command"]
        elif e.tool_kind == "write":
            assert (e.path, e.content) == (e.arguments["path"], e.arguments["content"])
        elif e.tool_kind == "read":
            assert e.path == e.arguments["path"] and e.offset == e.arguments.get("offset")
    edits = [e for e in calls.values() if e.tool_kind == "edit"]
    good = [e for e in edits if "newText" in e.arguments]
    assert all(
        e.edits == (Edit(old=e.arguments["oldText"], new=e.arguments["newText"]),) for e in good
    )
    assert [e.edits for e in edits if "newText" not in e.arguments] == [()]  # broken call
    for r in results(s):
        assert (r.tool, r.tool_kind) == (calls[r.call_id].tool, calls[r.call_id].tool_kind)


@needs_corpus
@pytest.mark.parametrize(
    "path", [LARGE, COMPACTION, *sorted(FIXTURES.glob("*.jsonl"))], ids=lambda p: p.name
)
def test_sessions_revalidate(path: Path) -> None:
    """The reader builds records without pydantic validation; validating them changes nothing."""
    s = only_session(path)
    again = Session.model_validate_json(s.model_dump_json())
    assert again == s and again.model_dump() == s.model_dump()
    assert all(not e.arguments for e in s.events if e.kind != "tool_call")
    assert len({id(e.arguments) for e in s.events}) == len(s.events)  # nothing shared


@needs_corpus
def test_v1_reads_like_its_pi_migration_to_a_v3_tree(tmp_path: Path) -> None:
    """pi's migrateV1ToV2: each entry becomes the child of the previous one."""
    lines = [json.loads(x) for x in LARGE.read_text().splitlines()]
    lines[0]["version"] = 3
    for i, entry in enumerate(lines[1:], start=1):
        entry["id"] = f"e{i}"
        entry["parentId"] = f"e{i - 1}" if i > 1 else None
    v3 = only_session(write_lines(tmp_path / "v3.jsonl", lines))
    v1 = only_session(LARGE)
    assert v3.header.harness_version == "session-v3"
    assert [e.model_dump(exclude={"source"}) for e in v3.events] == [
        e.model_dump(exclude={"source"}) for e in v1.events
    ]


# --- damaged input ---------------------------------------------------------------------------


@needs_corpus
def test_truncated_last_line_keeps_every_complete_record(tmp_path: Path) -> None:
    raw = LARGE.read_bytes()
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(raw[: len(raw) - 40])
    s = only_session(cut)
    assert [(w.line, w.message.startswith("not JSON")) for w in s.warnings] == [(1019, True)]
    full = only_session(LARGE)
    last_line = full.events[-1].source.line
    assert last_line == 1019
    assert len(s.events) == sum(1 for e in full.events if e.source.line < 1019)


@needs_corpus
@pytest.mark.parametrize("junk", [b"this is not json {", b"\x00\xff\xfe\x89PNG\x1a binary"])
def test_garbage_lines_become_warnings(tmp_path: Path, junk: bytes) -> None:
    lines = LARGE.read_bytes().split(b"\n")
    lines.insert(500, junk)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join(lines))
    s = only_session(bad)
    assert [(w.file, w.line) for w in s.warnings] == [(str(bad), 501)]
    assert kinds(s) == kinds(only_session(LARGE))


@needs_corpus
def test_gzip_copy_parses_the_same(tmp_path: Path) -> None:
    gz = tmp_path / "large-session.jsonl.gz"
    gz.write_bytes(gzip.compress(LARGE.read_bytes()))
    s, plain = only_session(gz), only_session(LARGE)
    assert s.header.content_hash == hashlib.sha256(gz.read_bytes()).hexdigest()
    assert s.warnings == ()
    assert [e.model_dump(exclude={"source"}) for e in s.events] == [
        e.model_dump(exclude={"source"}) for e in plain.events
    ]


@needs_corpus
def test_garbled_header_keeps_the_entries(tmp_path: Path) -> None:
    lines = LARGE.read_bytes().split(b"\n")
    lines[0] = lines[0][:30]  # the header line cut short
    bad = tmp_path / "headless.jsonl"
    bad.write_bytes(b"\n".join(lines))
    sessions, loose = parse(bad)
    assert [(w.line, w.message[:8]) for w in loose] == [(1, "not JSON"), (2, "no sessi")]
    (s,) = sessions
    assert s.header.session_id == s.header.content_hash[:16]
    assert s.header.harness_version == "session-v1" and s.header.cwd is None
    assert kinds(s) == kinds(only_session(LARGE))


def test_empty_file_is_a_warning(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"\n\n")
    sessions, loose = parse(empty)
    assert sessions == [] and [(w.file, w.line) for w in loose] == [(str(empty), 1)]
    assert "empty" in loose[0].message


@pytest.mark.parametrize(
    "content",
    [
        b'{"name": "package", "version": "1.0"}\n',
        b'[{"role": "user", "content": "hi"}]\n',
        b"plain text\nmore text\n",
    ],
)
def test_json_that_is_no_pi_session_raises(tmp_path: Path, content: bytes) -> None:
    other = tmp_path / "other.jsonl"
    other.write_bytes(content)
    with pytest.raises(FormatError, match="not a pi session"):
        list(PiFormat().parse(other))


def test_stray_records_and_unknown_types(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "s.jsonl",
        [
            {"type": "session", "id": "s1", "timestamp": "t", "cwd": "/w"},
            {"type": "message", "timestamp": "t", "message": {"role": "user", "content": "hi"}},
            {"hello": "world"},  # JSON, but no pi entry
            {"type": "future_entry", "timestamp": "t"},
            {"type": "message", "message": {"role": "custom", "customType": "x", "content": "c"}},
            {
                "type": "message",
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm"},
                        {"type": "text", "text": "hello"},
                        {
                            "type": "toolCall",
                            "id": "c1",
                            "name": "grep",
                            "arguments": {"pattern": "x"},
                        },
                    ],
                },
            },
            {
                "type": "message",
                "message": {
                    "role": "toolResult",
                    "toolCallId": "c1",
                    "toolName": "grep",
                    "content": [],
                    "isError": False,
                },
            },
        ],
    )
    s = only_session(path)
    assert [(w.line, w.message) for w in s.warnings] == [
        (3, "JSON record is not a pi session entry")
    ]
    assert s.skipped == {"future_entry": 1, "message:custom": 1}
    assert [(e.kind, e.text, e.tool_kind) for e in s.events] == [
        ("user", "hi", None),
        ("assistant", "hello", None),
        ("tool_call", "", "other"),
        ("tool_result", "", "other"),
    ]
    assert s.header.model is None


# --- trees (v2 / v3) ------------------------------------------------------------------------


def _msg(entry_id: str, parent: str | None, role: str, text: str) -> dict[str, Any]:
    content: Any = text if role == "user" else [{"type": "text", "text": text}]
    message = {"role": role, "content": content, "provider": "p", "model": "m"}
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "t",
        "message": message,
    }


def test_tree_follows_the_path_from_the_last_entry(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "tree.jsonl",
        [
            {"type": "session", "version": 3, "id": "s1", "timestamp": "t", "cwd": "/w"},
            _msg("a", None, "user", "first"),
            _msg("b", "a", "assistant", "answer one"),
            _msg("c", "b", "user", "abandoned branch"),
            _msg("d", "c", "assistant", "abandoned answer"),
            {
                "type": "branch_summary",
                "id": "e",
                "parentId": "b",
                "fromId": "d",
                "summary": "s",
                "timestamp": "t",
            },
            _msg("f", "e", "user", "second try"),
            _msg("g", "f", "assistant", "answer two"),
        ],
    )
    s = only_session(path)
    assert [e.text for e in s.events] == ["first", "answer one", "second try", "answer two"]
    assert [e.source.line for e in s.events] == [2, 3, 7, 8]
    assert s.skipped == {"branch_summary": 1, "off_path": 2}
    assert s.header.model == "p/m" and s.warnings == ()


def test_tree_with_a_missing_parent_warns(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "orphan.jsonl",
        [
            {"type": "session", "version": 2, "id": "s1", "timestamp": "t", "cwd": "/w"},
            _msg("a", None, "user", "lost"),
            _msg("b", "zzz", "user", "kept"),
        ],
    )
    s = only_session(path)
    assert [e.text for e in s.events] == ["kept"]
    assert [(w.line, "zzz" in w.message) for w in s.warnings] == [(3, True)]


# --- fixtures written by the real pi CLI ------------------------------------------------------


def fixture(name: str) -> Session:
    path = FIXTURES / f"{name}.jsonl"
    assert path.exists(), f"{path} missing: run python -m tests.fixtures.generate_pi"
    s = only_session(path)
    assert s.warnings == ()
    assert (s.header.harness_version, s.header.model) == ("session-v3", "scripted/scripted")
    assert s.header.cwd and s.events[0].kind == "user"
    return s


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda sc: sc.name)
def test_fixture_replays_its_scenario(scenario: Any) -> None:
    s = fixture(scenario.name)
    kinds_of = {"read": "read", "write": "write", "edit": "edit", "shell": "shell"}
    calls = [e for e in s.events if e.kind == "tool_call"]
    assert [e.tool_kind for e in calls] == [
        kinds_of[a[0]] for a in scenario.actions if a[0] != "say"
    ]
    assert len(results(s)) == len(calls)
    assert [e.call_id for e in results(s)] == [e.call_id for e in calls]
    assert s.events[0].text == scenario.request
    assert (s.events[-1].kind, s.events[-1].text) == ("assistant", scenario.actions[-1][1])


def test_repair_fixture_fails_then_passes() -> None:
    s = fixture("repair")
    shell = results(s, "shell")
    assert [(e.exit_code, e.is_error) for e in shell] == [(1, True), (0, False)]
    assert "1 failed" in shell[0].text and "3 passed" in shell[1].text
    paths = {e.call_id: e.path for e in s.events if e.kind == "tool_call"}
    (read,) = [e for e in results(s, "read") if paths[e.call_id] == "calc.py"]
    assert (read.content, read.partial) == (CALC_BUGGY, False)
    (edit,) = [e for e in s.events if e.kind == "tool_call" and e.tool_kind == "edit"]
    assert edit.path == "calc.py" and set(edit.arguments) == {"path", "oldText", "newText"}
    assert edit.edits == (
        Edit(
            old="    if value < low:\n        return high",
            new="    if value < low:\n        return low",
        ),
    )


def test_extend_fixture_edit_uses_the_edits_array() -> None:
    s = fixture("extend")
    (edit,) = [e for e in s.events if e.kind == "tool_call" and e.tool_kind == "edit"]
    assert "edits" in edit.arguments
    assert edit.edits == (Edit(old="        return self.items[name]\n", new=REMOVE_ITEM),)


def test_build_and_qa_fixtures() -> None:
    build = fixture("build")
    writes = [e for e in build.events if e.kind == "tool_call" and e.tool_kind == "write"]
    assert (writes[0].path, writes[0].content) == ("stats.py", STATS)
    assert results(build, "shell")[0].exit_code == 0
    qa = fixture("qa")
    assert results(qa, "shell")[0].text.strip() == "136.5"
    assert results(qa, "read")[0].content == SCENARIOS[3].setup["sales.csv"]


def test_hub_dump_folder_yields_only_sessions(tmp_path: Path) -> None:
    """A pi-share-hf dataset: session files plus manifest.jsonl and README.md."""
    dump = tmp_path / "dump"
    dump.mkdir()
    for path in sorted(FIXTURES.glob("*.jsonl")):
        (dump / path.name).write_bytes(path.read_bytes())
    (dump / "manifest.jsonl").write_text(
        json.dumps(
            {"file": "qa.jsonl", "source_hash": "a", "redaction_key": "b", "redacted_hash": "c"}
        )
        + "\n"
    )
    (dump / "README.md").write_text("# sessions\n")
    inputs, errors = expand_paths([dump])
    assert errors == [] and [p.name for p in inputs] == [
        "build.jsonl",
        "extend.jsonl",
        "qa.jsonl",
        "repair.jsonl",
    ]
    assert all(only_session(p).header.harness == "pi" for p in inputs)
