"""After a rollout the guard re-hashes the protected files: a visible test the rollout changed
is a block (reward 0) even when no call-level rule caught the change.

Real parts: the task is built for real (reconstruct + validate of the pi fixtures), the guard
proxy is the one rollouts run behind, and the end-to-end case drives the real pi CLI with a
scripted model whose tool calls rewrite the visible test through an indirection (a helper
script that decodes the test's path at run time) that no call-level rule reads as a test edit.
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest

from trajforge.guard.engine import bundle_at
from trajforge.guard.profile import profile_from_task
from trajforge.registry import HARNESSES, SANDBOXES, create
from trajforge.taskdir import load_task
from trajforge.train.harnesses.revision import RecordingGuardProxy
from trajforge.train.rollout import check_integrity, guard_record


def _visible_test(task_dir: Path) -> str:
    profile = profile_from_task(task_dir)
    visible = [f.path for f in profile.files if f.role == "visible_test"]
    if not visible:
        pytest.fail(f"{task_dir.name}: the fixture task has no visible test to protect")
    return visible[0]


def _workspace(task_dir: Path, tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(task_dir / load_task(task_dir).workspace, ws)
    return ws


def test_a_changed_visible_test_is_a_workspace_block(
    tasks: dict[str, Path], tmp_path: Path
) -> None:
    task_dir = tasks["repair"]
    ws = _workspace(task_dir, tmp_path)
    proxy = RecordingGuardProxy(
        "http://127.0.0.1:9/v1", bundle_at(None), profile_from_task(task_dir)
    )
    assert check_integrity(proxy, "clean", ws) == 0  # an untouched workspace: nothing
    assert guard_record(proxy, "clean") == (0, ())
    test = _visible_test(task_dir)
    (ws / test).write_text((ws / test).read_text() + "\ndef test_extra():\n    assert True\n")
    assert check_integrity(proxy, "tampered", ws) == 1
    _, (block,) = guard_record(proxy, "tampered")
    assert block.kind == "workspace" and block.rule == "integrity.protected-changed"
    assert test in block.reason and "modified" in block.reason
    (ws / test).unlink()
    assert check_integrity(proxy, "deleted", ws) == 1  # a deleted one too


def test_pi_rollout_that_rewrites_a_test_indirectly_scores_zero(
    tasks: dict[str, Path], tmp_path: Path
) -> None:
    from trajforge.train.policy import script
    from trajforge.train.rollout import rollout_in
    from trajforge.train.rollout_spec import RolloutSpec, setup_for
    from trajforge.train.scripted import ScriptedServer

    harness = create(HARNESSES, "pi", "harness")
    if harness.version() is None:
        pytest.skip("!! pi CLI not installed: run `trajforge harness install`")
    task_dir = tasks["repair"]
    task = load_task(task_dir)
    test = _visible_test(task_dir)
    ws = _workspace(task_dir, tmp_path)
    name = base64.b64encode(test.encode()).decode()  # the path never appears in a call
    helper = (
        "import base64, pathlib\n"
        f"target = pathlib.Path(base64.b64decode('{name}').decode())\n"
        "target.write_text('def test_ok():\\n    pass\\n')\n"
    )
    actions = [("write", "fmt_helper.py", helper), ("shell", "python3 fmt_helper.py")]
    turns = script([[harness.tool_call(a, ws)] for a in actions], "Done.")
    setup = setup_for("pi", create(SANDBOXES, "local", "sandbox"), placement="off")
    with ScriptedServer(turns) as server:
        spec = RolloutSpec(setup, task_dir, task, server.base_url, "tamper", policy_turns=3)
        rollout = rollout_in(spec, ws)
    assert (ws / test).read_text().startswith("def test_ok"), rollout.blocks
    kinds = [b.kind for b in rollout.blocks]
    assert kinds == ["workspace"], (rollout.status, rollout.reasons, rollout.blocks)
    assert rollout.status == "blocked" and rollout.reward == 0.0
    assert any(test in r for r in rollout.reasons), rollout.reasons
