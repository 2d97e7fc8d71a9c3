"""One session that hermes wrote in two shapes is read once (issue 30).

hermes's gateway keeps ``~/.hermes/sessions/session_<id>.json`` (the snapshot, with
``sessions.write_json_snapshots``) and ``~/.hermes/sessions/<id>.jsonl`` (its transcript) for
the same session. The dumps here hold the real snapshot of the repair run
(tests/fixtures/sessions/hermes/repair.session.json, hermes-agent 0.19.0) and its transcript
written the way the gateway writes one (tests/fixtures/generate_hermes.py: a ``session_meta``
line, then ``{**message, "timestamp"}`` per message).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from trajforge.reconstruct import pipeline
from trajforge.reconstruct.formats.hermes import HermesFormat
from trajforge.reconstruct.formats.shapes import TwoShapes
from trajforge.reconstruct.inputs import read_head

SNAPSHOT = Path(__file__).parents[1] / "fixtures" / "sessions" / "hermes" / "repair.session.json"
FMT = HermesFormat()


def _snapshot() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SNAPSHOT.read_text())
    return data


def _write_snapshot(folder: Path, data: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"session_{data['session_id']}.json"
    path.write_text(json.dumps(data, indent=2))  # as run_agent.py's atomic_json_write
    return path


def _write_transcript(folder: Path, data: dict[str, Any], name: str | None = None) -> Path:
    """The gateway's transcript of ``data``'s messages, named ``<session id>.jsonl``."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = data["session_start"]
    meta = {"role": "session_meta", "model": data["model"], "platform": "telegram"}
    rows = [{**meta, "timestamp": stamp}, *({**m, "timestamp": stamp} for m in data["messages"])]
    path = folder / f"{name or data['session_id']}.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def _task_ids(out: Path) -> set[str]:
    return {p.name for p in (out / "tasks").iterdir()}


def test_hermes_declares_its_two_shapes(tmp_path: Path) -> None:
    data = _snapshot()
    snapshot = _write_snapshot(tmp_path, data)
    transcript = _write_transcript(tmp_path, data)
    assert isinstance(FMT, TwoShapes)
    assert FMT.twin_key(snapshot) == FMT.twin_key(transcript) == data["session_id"]
    assert FMT.twin_key(tmp_path / "trajectory_samples.json") is None
    first = FMT.shape(snapshot, read_head(snapshot))
    second = FMT.shape(transcript, read_head(transcript))
    assert first is not None and second is not None
    assert first.session_id == second.session_id == data["session_id"]
    assert (first.name, second.name) == ("session snapshot", "gateway transcript")
    assert first.rank > second.rank
    trajectory = SNAPSHOT.parent / "repair.jsonl"  # a ShareGPT trajectory is neither shape
    assert FMT.shape(trajectory, read_head(trajectory)) is None


def test_one_session_in_both_shapes_gives_one_set_of_episodes(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = _snapshot()
    dump = tmp_path / "sessions"
    snapshot = _write_snapshot(dump, data)
    transcript = _write_transcript(dump, data)  # sorts first: "2026…" < "session_…"
    alone = pipeline.run([snapshot], tmp_path / "alone")
    assert alone.sessions == {"hermes": 1} and alone.written >= 2
    with caplog.at_level(logging.INFO, logger="trajforge.reconstruct.formats.shapes"):
        summary = pipeline.run([dump], tmp_path / "out")
    assert summary.exit_code() == 0, summary.inputs
    assert summary.sessions == {"hermes": 1}
    rows = {Path(i.path).name: i for i in summary.inputs}
    assert rows[transcript.name].same_session_as == str(snapshot)
    assert rows[transcript.name].sessions == 0 and rows[transcript.name].format == "hermes"
    assert rows[snapshot.name].sessions == 1 and rows[snapshot.name].same_session_as is None
    assert summary.candidates == alone.candidates
    assert summary.triage == alone.triage and summary.dropped == alone.dropped
    assert _task_ids(tmp_path / "out") == _task_ids(tmp_path / "alone")
    (line,) = [r.getMessage() for r in caplog.records if "two inputs" in r.getMessage()]
    assert f"reading {snapshot} (session snapshot), not {transcript} (gateway transcript)" in line


def test_forced_hermes_format_and_inputs_given_one_by_one_read_it_once(tmp_path: Path) -> None:
    data = _snapshot()
    snapshot = _write_snapshot(tmp_path / "a", data)
    transcript = _write_transcript(tmp_path / "b", data)  # another folder of the same dump
    spec = pipeline.ReconstructSpec(fmt="hermes")
    summary = pipeline.run([transcript, snapshot], tmp_path / "out", spec)
    assert summary.sessions == {"hermes": 1}
    assert [i.same_session_as for i in summary.inputs] == [str(snapshot), None]


def test_the_fuller_copy_of_one_shape_is_read(tmp_path: Path) -> None:
    """Two copies of one transcript, one cut short: the longer is read."""
    data = _snapshot()
    short = {**data, "messages": data["messages"][:4]}
    cut = _write_transcript(tmp_path / "old", short)
    full = _write_transcript(tmp_path / "new", data)
    summary = pipeline.run([cut, full], tmp_path / "out")
    assert summary.sessions == {"hermes": 1}
    assert [i.same_session_as for i in summary.inputs] == [str(full), None]


def test_different_sessions_are_both_read(tmp_path: Path) -> None:
    """Names that pair up are only a hint: the session id inside the snapshot decides."""
    data = _snapshot()
    other = {**data, "session_id": "20261130_090000_beef01"}
    snapshot = _write_snapshot(tmp_path, other)
    renamed = snapshot.rename(tmp_path / f"session_{data['session_id']}.json")
    transcript = _write_transcript(tmp_path, data)
    summary = pipeline.run([tmp_path], tmp_path.parent / "out")
    assert summary.sessions == {"hermes": 2}
    assert {Path(i.path).name for i in summary.inputs} == {renamed.name, transcript.name}
    assert all(i.same_session_as is None for i in summary.inputs)
