"""A small held-out dataset built for real, and helpers to run ``trajforge eval``.

The pi fixture sessions (recorded from the real pi CLI) are reconstructed, validated in the
local sandbox and split into a dataset revision whose ``test`` split holds every task.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trajforge.registry import HARNESSES, create

REPO = Path(__file__).resolve().parents[2]
SESSIONS = REPO / "tests" / "fixtures" / "sessions" / "pi"
REVISION = "eval-t1"


def cli(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "trajforge.cli.main", *args]
    return subprocess.run(argv, capture_output=True, text=True, check=False, cwd=cwd)


def need_pi() -> str:
    version = create(HARNESSES, "pi", "harness").version()
    if version is None:
        pytest.skip("!! pi CLI not installed: run `trajforge harness install` (eval needs it)")
    return str(version)


def config_text(dataset: Path) -> str:
    """The scripted example config (examples/eval-scripted-cpu.toml), pointed at ``dataset``."""
    text = (REPO / "examples" / "eval-scripted-cpu.toml").read_text()
    lines = []
    for line in text.splitlines():
        key = line.split("=")[0].strip()
        if key == "path":
            line = f'path = "{dataset}"'
        elif key == "revision":
            line = f'revision = "{REVISION}"'
        lines.append(line)
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Dataset revision ``eval-t1``: extend, repair (one session) and qa, all in ``test``."""
    root = tmp_path_factory.mktemp("eval-data")
    out = root / "out"
    sessions = [str(SESSIONS / "repair.jsonl"), str(SESSIONS / "qa.jsonl")]
    made = cli("reconstruct", *sessions, "-o", str(out))
    assert made.returncode == 0, made.stderr
    checked = cli(
        "validate", str(out), "--set", "max_mutants=0", "--set", "oracle_runs=1", "--json"
    )
    assert checked.returncode == 0, checked.stderr
    folder = root / "dataset"
    split = cli(
        "split",
        str(out),
        "-o",
        str(folder),
        "--eval-per-family",
        "1",
        "--revision",
        REVISION,
        "--json",
    )
    assert split.returncode == 0, split.stderr
    counts: dict[str, Any] = json.loads((folder / "manifest.json").read_text())["counts"]
    assert counts["coding"]["test"] == {"extend": 1, "qa": 1, "repair": 1}, counts
    return folder
