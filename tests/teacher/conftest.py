"""The teacher tests' task: the pi build fixture (stats.py mean / median) reconstructed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.validate.conftest import local_context
from trajforge.reconstruct import pipeline

BUILD = Path(__file__).parents[1] / "fixtures" / "sessions" / "pi" / "build.jsonl"


@pytest.fixture
def out(tmp_path: Path) -> Path:
    local_context()  # skips loudly when the local sandbox is unusable
    summary = pipeline.run([BUILD], tmp_path / "out")
    assert summary.written == 1
    return tmp_path / "out"
