"""The protected set comes from a real validated task folder (mined hidden tests)."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from trajforge.guard.engine import RuleDetector
from trajforge.guard.profile import changed_files, profile_from_task
from trajforge.records import Task, load_record

BUILD = Path(__file__).parents[1] / "fixtures" / "sessions" / "pi" / "build.jsonl"


def _validated_build(tmp_path: Path) -> Path:
    out = tmp_path / "out"
    cli = [sys.executable, "-m", "trajforge.cli.main"]
    subprocess.run(
        [*cli, "reconstruct", str(BUILD), "-o", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    subprocess.run(
        [*cli, "validate", str(out), "--set", "max_mutants=2"],
        check=True,
        capture_output=True,
        timeout=600,
    )
    return next(p.parent for p in (out / "tasks").glob("build-*/task.json"))


def test_profile_from_validated_task(tmp_path: Path) -> None:
    """Mined hidden tests are laid over the agent's own test file at verification, so the agent
    may write and read that path (the task asks it to write those tests); the session ids and
    the hidden content stay protected."""
    task_dir = _validated_build(tmp_path)
    task = load_record(Task, task_dir / "task.json")
    assert task.validation.status == "accepted" and task.verifier.tests == ("test_stats.py",)
    profile = profile_from_task(task_dir)
    overlay = {f.path: f for f in profile.files if f.role == "overlay_test"}
    digest = hashlib.sha256((task_dir / "tests" / "test_stats.py").read_bytes()).hexdigest()
    assert overlay["test_stats.py"].sha256 == digest
    assert task.source.session in profile.source_ids
    detector = RuleDetector(profile)
    write = detector.check("write", {"path": "test_stats.py", "content": "def test_x(): ..."}, "pi")
    assert write.decision != "block", write  # a name-heuristic flag at most
    run = detector.check("bash", {"command": "python3 -m pytest -q"}, "pi")
    assert run.decision == "allow", run
    seek = detector.check("bash", {"command": f"grep -r {task.source.session} ~"}, "pi")
    assert seek.decision == "block", seek
    # the agent's own version of an overlay test is not an integrity change
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "test_stats.py").write_text("def test_nothing():\n    assert True\n")
    assert changed_files(profile, workspace) == []


def test_visible_tests_the_verifier_runs_as_they_are_stay_protected(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cli = [sys.executable, "-m", "trajforge.cli.main"]
    repair = BUILD.with_name("repair.jsonl")
    subprocess.run(
        [*cli, "reconstruct", str(repair), "-o", str(out)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    task_dir = next(p.parent for p in (out / "tasks").glob("repair-*/task.json"))
    profile = profile_from_task(task_dir)
    assert [f.path for f in profile.files if f.role == "visible_test"] == ["test_calc.py"]
    detector = RuleDetector(profile)
    weaken = detector.check(
        "edit", {"path": "test_calc.py", "oldText": "== 0", "newText": "== 10"}, "pi"
    )
    assert weaken.decision == "block" and weaken.rule == "tests.modify-protected", weaken
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "test_calc.py").write_text("def test_nothing():\n    assert True\n")
    assert [c.path for c in changed_files(profile, workspace)] == ["test_calc.py"]
