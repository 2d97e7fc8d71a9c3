"""One rollout setup per run: the harness's version is asked once, not once per rollout.

Real parts: a ``pi`` executable on PATH that counts its ``--version`` calls in a file and fails
any real run (so each rollout is a quick ``error``), the real pi harness driving it through the
host runner, the guard proxy, and :func:`trajforge.train.rollout.run_rollout`.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from trajforge.records import Budget
from trajforge.registry import HARNESSES, SANDBOXES, create
from trajforge.train.rollout import run_rollout
from trajforge.train.rollout_spec import setup_for, spec_for

FAKE_PI = """#!/bin/sh
if [ "$1" = "--version" ]; then
  echo asked >> "{count}"
  echo "{version}"
  exit 0
fi
echo "not a real pi" >&2
exit 3
"""
ROLLOUTS = 4


def fake_pi(folder: Path, count: Path, version: str) -> Path:
    """Write the counting ``pi`` into ``folder``; its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "pi"
    path.write_text(FAKE_PI.format(count=count, version=version))
    path.chmod(0o755)
    return path


def asked(count: Path) -> int:
    return len(count.read_text().splitlines()) if count.exists() else 0


def test_the_version_is_asked_once_per_run_not_per_rollout(
    tasks: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    count = tmp_path / "version-calls.txt"
    pi = fake_pi(tmp_path / "bin", count, "9.9.9-counting")
    monkeypatch.setenv("PATH", f"{pi.parent}{os.pathsep}{os.environ['PATH']}")
    setup = setup_for("pi", create(SANDBOXES, "local", "sandbox"), Budget(timeout_s=30), "off")
    assert setup.harness_version == "9.9.9-counting" and asked(count) == 1
    spec = spec_for(setup, tasks["repair"], "http://127.0.0.1:9/v1", "probe")
    results = [
        run_rollout(dataclasses.replace(spec, rollout_id=f"count-{n}")) for n in range(ROLLOUTS)
    ]
    # each rollout really ran the (failing) CLI and recorded the version asked at setup
    assert [r.status for r in results] == ["error"] * ROLLOUTS
    assert all(r.reasons == ("harness exited with 3",) for r in results), results[0]
    assert {r.harness_version for r in results} == {"9.9.9-counting"}
    assert asked(count) == 1
    # the registry's fresh harness objects share the answer too (asked once per process)
    assert create(HARNESSES, "pi", "harness").version() == "9.9.9-counting"
    assert setup_for("pi", setup.verifier, placement="off").harness_version == "9.9.9-counting"
    assert asked(count) == 1


def test_a_reinstalled_cli_is_asked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    count = tmp_path / "version-calls.txt"
    pi = fake_pi(tmp_path / "bin", count, "1.0.0")
    monkeypatch.setenv("PATH", f"{pi.parent}{os.pathsep}{os.environ['PATH']}")
    harness = create(HARNESSES, "pi", "harness")
    assert (harness.version(), harness.version(), asked(count)) == ("1.0.0", "1.0.0", 1)
    stat = pi.stat()
    fake_pi(pi.parent, count, "2.0.0")  # upgraded in place: same path, new mtime
    os.utime(pi, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert (harness.version(), harness.version(), asked(count)) == ("2.0.0", "2.0.0", 2)
    pi.unlink()  # uninstalled: not installed, and nothing stale is served
    assert harness.version() is None or harness.version() != "2.0.0"
