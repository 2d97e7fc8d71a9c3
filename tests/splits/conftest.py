"""Accepted task folders for the splits tests, produced for real by the reconstruct stage.

``accepted_out``: the committed fixture sessions reconstructed into tmp, every task copy marked
``validation.status = "accepted"`` except one left pending (the validation stage's verdict is
test input here). ``varied_out``: tasks derived from those in tmp, each with its own instruction
and files, spread over chosen sessions, so group and stratification rules have room to act.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from trajforge.reconstruct import pipeline
from trajforge.records import canonical_json, sha256_hex

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

WORDS = [f"w{i}{c}" for i in range(40) for c in "abcde"]


def set_status(task_dir: Path, status: str) -> None:
    path = task_dir / "task.json"
    data = json.loads(path.read_text())
    data["validation"]["status"] = status
    path.write_text(json.dumps(data, indent=2))


@pytest.fixture(scope="session")
def reconstructed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reconstructed")
    summary = pipeline.run([FIXTURES], out)
    assert summary.written > 20, summary
    return out


@pytest.fixture
def accepted_out(reconstructed: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(reconstructed, out)
    folders = sorted((out / "tasks").iterdir())
    for folder in folders:
        set_status(folder, "accepted")
    set_status(folders[0], "pending")
    return out


def derive(template: Path, dest_tasks: Path, family: str, session: str, rng: random.Random) -> str:
    """A new accepted task from ``template`` with fresh instruction, files and session."""
    data = json.loads((template / "task.json").read_text())
    words = " ".join(rng.choice(WORDS) for _ in range(30))
    data["family"] = family
    data["instruction"] = f"Task about {words}."
    data["source"]["session"] = session
    data["validation"]["status"] = "accepted"
    data["probes"] = []
    task_id = f"{family}-{sha256_hex(canonical_json(data))[:16]}"
    data["id"] = task_id
    dest = dest_tasks / task_id
    dest.mkdir()
    body = " ".join(rng.choice(WORDS) for _ in range(40))
    for name, text in (("workspace", f"start {words}\n"), ("oracle", f"done {body}\n")):
        (dest / name).mkdir()
        (dest / name / "notes.txt").write_text(f"{name} {task_id}: {text}")
    (dest / "task.json").write_text(json.dumps(data, indent=2))
    return task_id


def varied(reconstructed: Path, out: Path, plan: dict[str, list[str]], seed: int = 7) -> Path:
    """Derived tasks: ``plan`` maps a session id to the families of its tasks."""
    template = next(
        p for p in sorted((reconstructed / "tasks").iterdir()) if p.name.startswith("build")
    )
    rng = random.Random(seed)
    tasks = out / "tasks"
    tasks.mkdir(parents=True)
    for session, families in plan.items():
        for family in families:
            derive(template, tasks, family, session, rng)
    return out


@pytest.fixture
def varied_out(reconstructed: Path, tmp_path: Path) -> Iterator[Path]:
    plan = {f"s{i:02d}": [fam] for i, fam in enumerate(["build"] * 8 + ["repair"] * 6 + ["qa"] * 4)}
    plan.update({"multi-a": ["build", "repair", "extend"], "multi-b": ["build", "build"]})
    yield varied(reconstructed, tmp_path / "varied", plan)
