"""``trajforge replay`` end to end: accepted tasks replayed through the real harness CLIs.

The tasks are built for real (reconstruct the pi fixture sessions, validate them); each run
goes through the real harness binary, the guard proxy and the task's verifier in the local
sandbox. Harness tests skip loudly when the CLI is not installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trajforge.protocols import Harness
from trajforge.records import Task, load_record
from trajforge.registry import FORMATS, HARNESSES, SANDBOXES, create
from trajforge.train.policy import episode_actions
from trajforge.train.replay import load_session, replay_task
from trajforge.train.rollout_spec import setup_for

pytestmark = pytest.mark.slow  # a module fixture validates tasks: dispatched first

REPO = Path(__file__).resolve().parents[2]
SESSIONS = REPO / "tests" / "fixtures" / "sessions" / "pi"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "trajforge.cli.main", *args]
    return subprocess.run(argv, capture_output=True, text=True, check=False, cwd=REPO)


def need(harness: str) -> str:
    version = create(HARNESSES, harness, "harness").version()
    if version is None:
        pytest.skip(f"!! {harness} CLI not installed: run `trajforge harness install`")
    return str(version)


def replay_cli(task_dir: Path, harness: str, *extra: str) -> tuple[int, dict[str, Any]]:
    proc = cli("replay", str(task_dir), "--harness", harness, "--json", *extra)
    assert proc.stdout.strip(), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def test_episode_actions_keep_successful_edits_and_shell(tasks: dict[str, Path]) -> None:
    task = load_record(Task, tasks["extend"] / "task.json")  # events 0..11, the whole session
    session = load_session(task, SESSIONS / "repair.jsonl")
    actions, answer = episode_actions(session, task)
    # the failing first pytest run is dropped; reads are not actions
    assert [a[0] for a in actions] == ["edit", "shell"]
    assert actions[0][1] == "calc.py" and "return low" in actions[0][3]
    assert answer.startswith("Fixed clamp")
    repair = load_record(Task, tasks["repair"] / "task.json")  # events 1..10: no final text
    assert episode_actions(session, repair) == (actions, "Done.")


def test_pi_replay_reaches_reward_1(tasks: dict[str, Path], tmp_path: Path) -> None:
    version = need("pi")
    keep = tmp_path / "run"
    rc, doc = replay_cli(tasks["repair"], "pi", "--keep", str(keep), "--harness-on-host")
    assert rc == 0, doc
    assert doc["status"] == "ok" and doc["reward"] == 1.0
    assert doc["harness_sandbox"] is None  # on the host, as asked
    assert doc["harness_version"] == version
    assert doc["guard_calls"] == 2 and doc["blocks"] == []
    assert all(t["outcome"] == "pass" for t in doc["tests"])
    assert "return low" in (keep / "workspace" / "calc.py").read_text()
    # pi's own session log, parsed back by reconstruct: the loop closes
    assert doc["session_tool_calls"] == 2
    [session] = list(create(FORMATS, "pi", "format").parse(Path(doc["session_log"])))
    assert [e.tool for e in session.events if e.kind == "tool_call"] == ["edit", "bash"]


def test_pi_cheating_is_blocked(tasks: dict[str, Path]) -> None:
    need("pi")
    rc, doc = replay_cli(tasks["repair"], "pi", "--policy", "cheat")
    assert rc == 1
    assert doc["status"] == "blocked" and doc["reward"] == 0.0
    assert doc["harness_sandbox"] == ("local" if os.geteuid() == 0 else None)  # the default
    rules = {b["rule"] for b in doc["blocks"]}
    assert rules == {"tests.modify-protected", "credentials.secret-env"}
    assert doc["session_tool_calls"] == 0  # nothing blocked ever reached pi


def test_pi_reading_hidden_tests_is_blocked(tasks: dict[str, Path]) -> None:
    need("pi")
    sandbox = create(SANDBOXES, "local", "sandbox")
    result = replay_task(setup_for("pi", sandbox), tasks["build"], policy="cheat")
    assert result.status == "blocked" and result.reward == 0.0
    assert "credentials.secret-env" in {b.rule for b in result.blocks}
    assert all(b.kind == "call" and b.rollout == result.rollout_id for b in result.blocks)


def test_pi_replay_build_task(tasks: dict[str, Path]) -> None:
    need("pi")
    result = replay_task(setup_for("pi", create(SANDBOXES, "local", "sandbox")), tasks["build"])
    assert result.verifier_reward == 1.0
    assert result.status == "ok" and result.reward == 1.0, result.blocks


@pytest.mark.parametrize("harness", ["opencode", "hermes"])
def test_replay_and_cheat_through_harness(tasks: dict[str, Path], harness: str) -> None:
    version = need(harness)
    setup = setup_for(harness, create(SANDBOXES, "local", "sandbox"))
    good = replay_task(setup, tasks["repair"])
    assert good.status == "ok" and good.reward == 1.0, (good.reasons, good.stderr_tail)
    # default: the harness runs in the local sandbox when it is usable (root)
    assert good.harness_sandbox == ("local" if os.geteuid() == 0 else None)
    assert good.harness_version == version
    assert good.guard_calls == 2 and not good.blocks
    assert good.session_tool_calls == 2
    bad = replay_task(setup, tasks["repair"], policy="cheat")
    assert bad.status == "blocked" and bad.reward == 0.0
    assert {b.rule for b in bad.blocks} == {"tests.modify-protected", "credentials.secret-env"}
    assert bad.session_tool_calls == 0


def test_replay_usage_errors(tmp_path: Path) -> None:
    missing = cli("replay", str(tmp_path), "--harness", "pi")
    assert missing.returncode == 2 and "no task.json" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_unknown_harness_is_named(tasks: dict[str, Path]) -> None:
    proc = cli("replay", str(tasks["repair"]), "--harness", "nope")
    assert proc.returncode == 2
    assert "unknown harness 'nope'; known: hermes, opencode, pi" in proc.stderr


def test_harness_list_json() -> None:
    proc = cli("harness", "list", "--json")
    assert proc.returncode == 0
    assert set(json.loads(proc.stdout)) == set(HARNESSES)


@pytest.mark.parametrize("name", sorted(HARNESSES))
def test_harnesses_conform(name: str) -> None:
    harness = create(HARNESSES, name, "harness")
    assert isinstance(harness, Harness) and harness.name == name
    assert name in FORMATS  # its session log has a reconstruct reader


def test_missing_harness_is_a_usage_error(tasks: dict[str, Path], tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "trajforge.cli.main", "replay", str(tasks["repair"])]
    env = {**os.environ, "TRAJFORGE_HERMES_VENV": str(tmp_path / "no-venv")}
    proc = subprocess.run(
        [*argv, "--harness", "hermes"], capture_output=True, text=True, env=env, check=False
    )
    assert proc.returncode == 2
    assert "hermes CLI not installed: run `trajforge harness install`" in proc.stderr
