"""The replay policy plays Codex ``apply_patch`` calls: a patch becomes writes / ``rm -f``.

The task is built for real from the bundled Codex sample whose episode edits two files with
V4A patches (reconstruct + validate CLIs); the policy's actions are applied to a copy of the
starting workspace and must give the oracle's files. The pi replay runs the real pi CLI and
skips loudly when it is not installed.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trajforge.records import Event, Session, Task, TaskSource, load_record
from trajforge.registry import HARNESSES, SANDBOXES, create
from trajforge.train.harnesses.base import Action
from trajforge.train.policy import episode_actions
from trajforge.train.replay import load_session, replay_task, resolve_session
from trajforge.train.rollout_spec import setup_for

REPO = Path(__file__).resolve().parents[2]
SAMPLE = next((REPO / "trajforge" / "samples" / "codex").glob("rollout-2025-09-03T*.jsonl"))


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "trajforge.cli.main", *args]
    return subprocess.run(argv, capture_output=True, text=True, check=False, cwd=REPO)


@pytest.fixture(scope="module")
def codex_task(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Task, Session]:
    """An accepted extend task from the Codex sample whose episode has patch calls."""
    out = tmp_path_factory.mktemp("codex-tasks")
    made = _cli("reconstruct", str(SAMPLE), "-o", str(out))
    assert made.returncode == 0, made.stderr
    checked = _cli("validate", str(out), "--set", "max_mutants=0", "--json")
    assert checked.returncode == 0, checked.stderr
    for task_dir in sorted((out / "tasks").iterdir()):
        task = load_record(Task, task_dir / "task.json")
        if task.validation.status != "accepted" or task.source.harness != "codex":
            continue
        session = load_session(task, resolve_session(task, task_dir, None))
        first, last = task.source.events
        if any(e.tool_kind == "patch" for e in session.events[first : last + 1]):
            return task_dir, task, session
    raise AssertionError(f"no accepted codex task with a patch call in {out}")


def _play(actions: list[Action], workspace: Path) -> None:
    """Apply the policy's actions the way a harness's tools would (write / edit / rm -f)."""
    for action in actions:
        if action[0] == "write":
            path = workspace / action[1]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(action[2])
        elif action[0] == "edit":
            path = workspace / action[1]
            path.write_text(path.read_text().replace(action[2], action[3], 1))
        elif action[0] == "shell" and action[1].startswith("rm -f "):
            for rel in shlex.split(action[1])[2:]:
                (workspace / rel).unlink(missing_ok=True)


def _files(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}


def test_patch_calls_reproduce_the_oracle(
    codex_task: tuple[Path, Task, Session], tmp_path: Path
) -> None:
    task_dir, task, session = codex_task
    actions, answer = episode_actions(session, task, task_dir)
    writes = [a for a in actions if a[0] == "write"]
    assert writes, actions  # the patches became writes
    assert all(not Path(a[1]).is_absolute() for a in writes)
    work = tmp_path / "ws"
    shutil.copytree(task_dir / task.workspace, work)
    before = _files(work)
    _play(actions, work)
    oracle = _files(task_dir / "oracle")
    changed = {rel for rel, text in oracle.items() if before.get(rel) != text}
    assert changed, "the oracle changes no file"
    after = _files(work)
    assert {rel: after.get(rel) for rel in changed} == {rel: oracle[rel] for rel in changed}
    assert answer.strip()
    # without the task folder the starting files are unknown: the update patches are skipped
    blind, _ = episode_actions(session, task)
    assert not [a for a in blind if a[0] == "write"]


def _with_events(session: Session, task: Task, events: list[Event]) -> tuple[Session, Task]:
    source = TaskSource.model_validate({**task.source.model_dump(), "events": (0, len(events) - 1)})
    return (
        session.model_copy(update={"events": tuple(events)}),
        task.model_copy(update={"source": source}),
    )


def test_delete_move_unified_and_bad_patches(
    codex_task: tuple[Path, Task, Session], caplog: pytest.LogCaptureFixture
) -> None:
    task_dir, task, session = codex_task
    call = next(e for e in session.events if e.tool_kind == "patch")
    cwd = session.header.cwd or "/"
    start = (task_dir / task.workspace / "inventory.py").read_text()
    first = start.splitlines()[0]
    unified = f"--- a/inventory.py\n+++ b/inventory.py\n@@ -1,1 +1,1 @@\n-{first}\n+# top\n"
    patches = [
        ("unified", unified),
        ("v4a", "*** Begin Patch\n*** Update File: nothere.py\n@@\n-x\n+y\n*** End Patch\n"),
        ("v4a", "*** Begin Patch\n*** Delete File: test_inventory.py\n*** End Patch\n"),
        ("v4a", f"*** Begin Patch\n*** Update File: {cwd}/inventory.py\n*** Move to: pkg/inv.py\n"
         "@@\n-# top\n+# moved\n*** End Patch\n"),
    ]  # fmt: skip
    events = [
        call.model_copy(update={"patch": text, "patch_format": fmt, "call_id": f"p{i}"})
        for i, (fmt, text) in enumerate(patches)
    ]
    with caplog.at_level("WARNING", logger="trajforge.train.policy"):
        actions, _ = episode_actions(*_with_events(session, task, events), task_dir)
    moved = start.replace(first, "# moved", 1)
    assert actions == [
        ("write", "inventory.py", start.replace(first, "# top", 1)),
        ("shell", "rm -f test_inventory.py"),
        ("shell", "rm -f inventory.py"),
        ("write", "pkg/inv.py", moved),
    ]
    assert "nothere.py" in caplog.text and "does not apply" in caplog.text


def test_pi_replays_the_codex_task_to_reward_1(codex_task: tuple[Path, Task, Session]) -> None:
    version = create(HARNESSES, "pi", "harness").version()
    if version is None:
        pytest.skip("!! pi CLI not installed: run `trajforge harness install`; replay not checked")
    task_dir, _, _ = codex_task
    result = replay_task(setup_for("pi", create(SANDBOXES, "local", "sandbox")), task_dir)
    assert result.status == "ok", result.reasons
    assert result.reward == 1.0, result.tests
