"""`trajforge demo`: the README's main job, on the bundled samples, offline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from trajforge.cli.demo_cmd import SAMPLES

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"


def test_samples_are_identical_to_fixtures() -> None:
    samples = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.name != "README.md")
    assert len(samples) >= 16  # hermes: one .gz holding four sessions
    for sample in samples:
        fixture = FIXTURES / sample.relative_to(SAMPLES)
        assert sample.read_bytes() == fixture.read_bytes(), sample


def test_demo_runs_every_stage_that_exists(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "trajforge.cli.main", "demo", "-o", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    summary = report["reconstruct"]
    assert set(summary["sessions"]) == {"pi", "opencode", "hermes", "claude-code", "codex"}
    checks = report["checks"]
    assert len(checks) == summary["written"] > 0
    repairs = [c for c in checks if c["family"] == "repair"]
    assert {c["harness"] for c in repairs} == set(summary["sessions"])
    for check in repairs:  # the recorded check fails before the fix and passes after it
        assert check["start_exit"] != 0 and check["oracle_exit"] == 0, check
    assert all("136.50" in c["answer"] for c in checks if c["family"] == "qa")
    again = subprocess.run(
        [sys.executable, "-m", "trajforge.cli.main", "demo", "-o", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert json.loads(again.stdout)["reconstruct"]["written"] == 0  # same ids, nothing rewritten
