"""`trajforge demo`: the README's main job, on the bundled samples, offline."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trajforge.cli.demo_cmd import SAMPLES, STAGES

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"


def test_samples_are_identical_to_fixtures() -> None:
    samples = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.name != "README.md")
    assert len(samples) >= 16  # hermes: one .gz holding four sessions
    for sample in samples:
        fixture = FIXTURES / sample.relative_to(SAMPLES)
        assert sample.read_bytes() == fixture.read_bytes(), sample


def _demo(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trajforge.cli.main", "demo", "-o", str(out), "--json", *extra],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


@pytest.mark.slow
@pytest.mark.timeout(1800)  # two demo runs
def test_demo_reconstructs_and_validates_every_task(tmp_path: Path) -> None:
    result = _demo(tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)  # stdout is the JSON document alone
    _quiet_and_staged(result.stderr, report)
    summary, validation = report["reconstruct"], report["validate"]
    harnesses = {"pi", "opencode", "hermes", "claude-code", "codex"}
    assert set(summary["sessions"]) == harnesses
    rows = validation["tasks"]
    data = report["dataenv"]
    assert len(rows) == summary["written"] + data["written"] and summary["written"] > 0
    assert validation["totals"]["error"] == 0
    repairs = [r for r in rows if r["family"] == "repair"]
    assert {r["harness"] for r in repairs} == harnesses
    for row in repairs:  # every repair from every harness: verifier proven
        assert row["status"] == "accepted", row
        assert row["cells"]["prefix"]["tone"] == "good" and row["cells"]["stub"]["tone"] == "good"
    builds = [r for r in rows if r["family"] == "build" and r["status"] == "accepted"]
    assert {r["harness"] for r in builds} == harnesses  # mined hidden tests
    for family, counts in validation["funnel"].items():
        stages = list(counts.values())
        assert stages == sorted(stages, reverse=True), family  # a funnel never widens
    assert all(
        r["status"] == "accepted"
        for r in rows
        if r["family"] == "qa" and "136.50" in " ".join(r["reasons"])
    )
    data_rows = [r for r in rows if r["family"] == "data"]
    assert len(data_rows) == data["tasks"] > 0
    assert all(r["status"] == "accepted" for r in data_rows)  # stored queries re-executed
    _later_stages_ran(report)
    again = _demo(tmp_path, "--stop-after", "push")  # the learning stages were proven above
    second = json.loads(again.stdout)
    assert list(second["seconds"]) == list(STAGES[: STAGES.index("push") + 1])
    assert "eval" not in second and "train" not in second
    assert second["reconstruct"]["written"] == 0  # same ids, nothing rewritten
    assert second["dataenv"]["written"] == 0
    assert second["validate"]["tasks"] == rows  # cached: the same verdicts, nothing re-run
    assert second["push"]["created"] is False  # identical revision: no new commit
    assert second["push"]["commit"] == report["push"]["commit"]


def _quiet_and_staged(stderr: str, report: dict[str, Any]) -> None:
    """One progress line per stage on stderr, and no third-party warnings or progress bars."""
    lines = stderr.splitlines()
    started = [line.split("] ", 1)[1].split(":", 1)[0] for line in lines if line.startswith("[")]
    assert started == list(STAGES), lines
    assert list(report["seconds"]) == list(STAGES)
    noise = [line for line in lines if re.search(r"Warning|warn\(|it/s\]|\{'loss'", line)]
    assert not noise, noise
    assert len(lines) <= len(STAGES) + 5, lines  # stage lines (+ a few of trajforge's own)


def _later_stages_ran(report: dict[str, Any]) -> None:
    """Split holds tasks out per config, the revision lands in the local hub, guard audits."""
    counts = report["split"]["counts"]
    assert sum(counts["coding"]["test"].values()) > 0 and sum(counts["coding"]["train"].values())
    assert sum(counts["data_analysis"]["test"].values()) > 0
    push = report["push"]
    assert push["created"] is True and push["revision"] == "demo" and len(push["commit"]) == 40
    tags = subprocess.run(
        ["git", "-C", push["target"], "tag"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "demo" in tags
    replay = report["replay"]
    if "skipped" in replay:
        print(f"!! demo replay skipped: {replay['skipped']}")
    else:  # every accepted pi repair replays to reward 1 through the real pi CLI
        assert replay["rewards"] and set(replay["rewards"].values()) == {1.0}, replay
    guard = report["guard"]
    assert guard["sessions"] == sum(report["reconstruct"]["sessions"].values())
    assert guard["calls"] > 0 and guard["blocks"] == 0  # clean recorded sessions are not blocked
    _learning_stages_ran(report)


def _learning_stages_ran(report: dict[str, Any]) -> None:
    """Scripted eval on the pushed revision shows the replay arm ahead; tiny training saves."""
    evaluation, training = report["eval"], report["train"]
    if "skipped" in evaluation:
        print(f"!! demo eval skipped: {evaluation['skipped']}")
    else:
        assert evaluation["tasks"] > 0 and evaluation["errors"] == 0, evaluation
        success = evaluation["success"]
        assert success["adapter"] > success["base"], evaluation  # replay beats give-up
        assert (Path(evaluation["output"]) / "results.parquet").is_file()
    if "skipped" in training:
        print(f"!! demo training skipped: {training['skipped']}")
    else:
        adapter = Path(training["adapter"])
        assert (adapter / "adapter_model.safetensors").is_file()
        assert (adapter / "deployment_unit.json").is_file()
        assert training["rollouts"] == 8 and training["block_rate"] == 0.0
        warm = training["warm_start"]  # the samples' QA task: right total, a rejected near miss
        assert warm["task"].startswith("qa-") and warm["right"] == "136.50", warm
        assert min(warm["probs"]) >= 0.3, warm
        # a learning signal: rewards differ inside the groups and the gradient is not zero
        assert training["reward_std"] > 0 and training["mixed_groups"] > 0, training
        assert any(g > 0 for g in training["grad_norm"]), training
        assert 0 < training["mean_reward"] < 1, training
