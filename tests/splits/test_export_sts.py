"""``trajforge export sts``: sessions of every harness as the Hub's Session Trace Simple Format.

Each exported file is checked line by line against the spec's field rules
(https://huggingface.co/docs/hub/session-traces-format); the round trip reads the export back
(the ``sts`` format) to the same events and reconstructs it to the same tasks as the original
sessions, as tests/reconstruct/test_atif.py does for ATIF.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.support.roundtrip import all_task_ids, events_of, sessions_by_key
from trajforge.reconstruct import pipeline
from trajforge.splits.sts import export

HARNESSES = ("pi", "opencode", "hermes", "claude-code", "codex")
SAMPLES = Path(__file__).parents[2] / "trajforge" / "samples"
ROLES = {"user", "assistant", "system", "tool"}
SECRET = "ghp_" + "Z3x9Qk2LmT7vR1sW8yB4nC6dF0hJ5pA2uE9i"


def _folders(root: Path) -> list[Path]:
    return [root / h for h in HARNESSES]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("sts")
    outcomes = list(export([*_folders(FIXTURES), FIXTURES / "atif"], target))
    assert outcomes and all(o.status == "accepted" and o.written for o in outcomes)
    return target


def _check_header(line: Any) -> str:
    assert isinstance(line, dict) and line["type"] == "session"
    assert isinstance(line["harness"], str) and line["harness"]
    assert isinstance(line["id"], str) and line["id"]
    assert isinstance(line.get("name", ""), str)
    return str(line["harness"])


def _check_message(line: Any, calls: set[str]) -> None:
    """One line against the spec: an envelope around a message with the spec's field types."""
    assert isinstance(line, dict) and set(line) == {"type", "message"}
    assert line["type"] == "message"
    message = line["message"]
    assert message["role"] in ROLES and isinstance(message["content"], str)
    for key in ("reasoningContent", "model"):
        assert isinstance(message.get(key, ""), str)
    if "timestamp" in message:
        assert isinstance(message["timestamp"], int)
    if "toolCalls" in message:
        assert message["role"] == "assistant" and message["toolCalls"]
        for call in message["toolCalls"]:
            assert isinstance(call["id"], str) and isinstance(call["function"]["name"], str)
            assert isinstance(json.loads(call["function"]["arguments"]), dict)  # a JSON string
            calls.add(call["id"])
    if "toolCallId" in message:
        assert message["role"] == "tool" and message["toolCallId"] in calls


def test_every_line_is_spec_shaped(exported: Path) -> None:
    files = sorted(exported.glob("*.jsonl"))
    harnesses = set()
    for path in files:
        lines = [json.loads(raw) for raw in path.read_text().splitlines()]
        harnesses.add(_check_header(lines[0]))
        calls: set[str] = set()
        for line in lines[1:]:
            _check_message(line, calls)
        roles = [line["message"]["role"] for line in lines[1:]]
        assert roles[0] == "user" and "tool" in roles, path.name
        assert lines[0].get("name"), path.name  # the first request, as the title
    assert harnesses == set(HARNESSES)
    assert len(files) >= 20


def test_export_reads_back_to_the_same_events(exported: Path) -> None:
    inputs, _ = pipeline.expand_paths([*_folders(FIXTURES), FIXTURES / "atif"])
    original = sessions_by_key(inputs)
    files = sorted(exported.glob("*.jsonl"))
    assert {pipeline.detect(f, pipeline.all_formats()).name for f in files} == {"sts"}
    again = sessions_by_key(files)
    assert set(again) == set(original)
    for key, session in again.items():
        before = original[key]
        assert session.warnings == (), key
        dropped = {"source_path", "content_hash"}
        assert session.header.model_dump(exclude=dropped) == before.header.model_dump(
            exclude=dropped
        ), key
        assert events_of(session) == events_of(before), key
        assert {Path(e.source.file).parent for e in session.events} == {exported}, key
        # what triage joins turns by (a request cut off, the steer after it) travels too
        assert (session.cut_offs, session.steers) == (before.cut_offs, before.steers), key


def test_export_of_the_samples_reconstructs_to_the_same_tasks(tmp_path: Path) -> None:
    outcomes = list(export(_folders(SAMPLES), tmp_path / "sts"))
    assert all(o.status == "accepted" for o in outcomes)
    direct = pipeline.run(_folders(SAMPLES), tmp_path / "direct")
    via = pipeline.run([tmp_path / "sts"], tmp_path / "via")
    assert via.exit_code() == 0 and via.warnings == []
    assert {i.format for i in via.inputs} == {"sts"}
    assert set(via.sessions) == set(direct.sessions)
    assert via.written == direct.written >= 15
    assert all_task_ids(via, tmp_path / "via") == all_task_ids(direct, tmp_path / "direct")


def test_texts_are_scrubbed(tmp_path: Path) -> None:
    """A secret in a request, a command and a tool's output is redacted everywhere."""
    args = json.dumps({"command": f"curl -H 'Authorization: token {SECRET}' https://x"})
    lines = [
        {"type": "session", "harness": "my-agent", "id": "s1"},
        {"type": "message", "message": {"role": "user", "content": f"Use the token {SECRET}."}},
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": "",
                "toolCalls": [{"id": "c1", "function": {"name": "bash", "arguments": args}}],
            },
        },
        {"type": "message", "message": {"role": "tool", "content": SECRET, "toolCallId": "c1"}},
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (outcome,) = export([source], tmp_path / "out")
    assert outcome.written == ("my-agent-s1.jsonl",)
    text = (tmp_path / "out" / "my-agent-s1.jsonl").read_text()
    assert SECRET not in text and "[REDACTED:" in text
    (session,) = sessions_by_key([tmp_path / "out" / "my-agent-s1.jsonl"]).values()
    assert session.events[1].tool_kind == "shell" and SECRET not in (
        session.events[1].command or ""
    )


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trajforge.cli.main", *args], capture_output=True, text=True
    )


def test_cli_exit_codes(tmp_path: Path) -> None:
    bad = tmp_path / "junk.jsonl"
    bad.write_text("this is not a session\n")
    good = str(SAMPLES / "pi")
    done = cli("export", "sts", good, "-o", str(tmp_path / "a"), "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["sessions"] == 4 and len(list((tmp_path / "a").glob("pi-*.jsonl"))) == 4
    assert all(i["status"] == "accepted" for i in report["inputs"])
    partial = cli("export", "sts", good, str(bad), "-o", str(tmp_path / "b"))
    assert partial.returncode == 1 and "junk.jsonl" in partial.stderr
    assert "wrote 4 STS session traces" in partial.stdout
    nothing = cli("export", "sts", str(bad), "-o", str(tmp_path / "c"), "--json")
    assert nothing.returncode == 2 and "Traceback" not in nothing.stderr
    assert json.loads(nothing.stdout)["inputs"][0]["status"] == "error"
