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


def test_profile_from_validated_task_protects_the_hidden_tests(tmp_path: Path) -> None:
    task_dir = _validated_build(tmp_path)
    task = load_record(Task, task_dir / "task.json")
    assert task.validation.status == "accepted" and task.verifier.tests == ("test_stats.py",)
    profile = profile_from_task(task_dir)
    hidden = {f.path: f for f in profile.files if f.role == "hidden_test"}
    digest = hashlib.sha256((task_dir / "tests" / "test_stats.py").read_bytes()).hexdigest()
    assert hidden["test_stats.py"].sha256 == digest
    assert task.source.session in profile.source_ids
    detector = RuleDetector(profile)
    read = detector.check("bash", {"command": "cat test_stats.py"}, "pi")
    assert read.decision == "block", read
    allowed = detector.check("bash", {"command": "python3 -m pytest -q"}, "pi")
    assert allowed.decision == "allow", allowed
    # after a rollout, a changed hidden test is caught even if no call was
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "test_stats.py").write_text("def test_nothing():\n    assert True\n")
    assert [c.path for c in changed_files(profile, workspace)] == ["test_stats.py"]
