"""A newcomer's install: the project in a fresh venv under /tmp, base install only (issue 17).

Two failures were invisible in a developer's environment: the task runtime depended on the
extras installed (no pytest: every code oracle "failed"), and a venv under /tmp was hidden in
the local sandbox (its /tmp is fresh), so data tasks ran with the system python and no polars.
Here a fresh venv is made under /tmp, the project installed into it with the base install only
(``pip install -e REPO``: no extras, no torch), and the demo's validation stage is run with that
venv's ``trajforge`` through the local sandbox: reconstruct the bundled samples of one harness
(Claude Code's hold a build, an extend, a repair and a qa task: every code family; the demo test
validates all five harnesses' samples), build data tasks, validate. Every family must have
accepted tasks. Needs PyPI (or pip's cache) and root
for the local sandbox; skips loudly only when the local sandbox is unavailable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from trajforge.registry import SANDBOXES, create

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "trajforge" / "samples" / "claude-code"
FAMILIES = {"build", "extend", "repair", "qa", "data"}
DATA_TASKS = 3
"""Data tasks built (the demo builds 20; three cover the runtime: each runs polars)."""
INSTALL_TIMEOUT_S = 900
"""pip from an empty venv: the base dependencies (polars, pyarrow, tree-sitter, ...)."""


def run(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 600) -> str:
    """Run ``argv``; its stdout, or fail with the command and its output."""
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd,
                          timeout=timeout, check=False)  # fmt: skip
    assert proc.returncode == 0, f"{argv}: exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def fresh_venv() -> Iterator[tuple[Path, dict[str, str]]]:
    """A venv under /tmp holding the project (editable, base install only); its environment."""
    problem = create(SANDBOXES, "local", "sandbox").available()
    if problem:
        pytest.skip(f"!! local sandbox unavailable, fresh-venv validation cannot run: {problem}")
    with tempfile.TemporaryDirectory(prefix="trajforge-fresh-venv-", dir="/tmp") as tmp:
        venv = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL"))}
        env = {**clean, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}:{os.environ['PATH']}",
               "PIP_DISABLE_PIP_VERSION_CHECK": "1"}  # fmt: skip
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-e", str(REPO)]
        run(pip, env, Path(tmp), timeout=INSTALL_TIMEOUT_S)
        yield venv, env


@pytest.mark.timeout(INSTALL_TIMEOUT_S + 1200)  # the install (fixture) and the validation
def test_base_install_in_a_venv_under_tmp_validates_every_family(
    fresh_venv: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    venv, env = fresh_venv
    python = str(venv / "bin" / "python")
    probe = "import importlib.util as u, sys; print(sys.prefix, u.find_spec('torch') is None)"
    prefix, no_torch = run([python, "-c", probe], env, tmp_path).split()
    assert Path(prefix) == venv and no_torch == "True"  # the venv's own python, base install only
    trajforge = str(venv / "bin" / "trajforge")
    out = tmp_path / "out"
    run([trajforge, "reconstruct", str(SAMPLES), "-o", str(out)], env, tmp_path)
    run([trajforge, "dataenv", "build", "-o", str(out), "--count", str(DATA_TASKS)], env, tmp_path)
    doc = json.loads(run(
        [trajforge, "validate", str(out), "-j", "2", "--set", "max_mutants=2", "--json"],
        env, tmp_path, timeout=1200,
    ))  # fmt: skip
    funnel = doc["funnel"]
    accepted = {family: counts["accepted"] for family, counts in funnel.items()}
    assert set(accepted) == FAMILIES, funnel
    assert all(n > 0 for n in accepted.values()), funnel  # every family runs in the sandbox
    assert accepted["data"] == DATA_TASKS, funnel  # polars from the venv, inside the sandbox
    assert doc["totals"]["error"] == 0, doc["totals"]
    for family in ("build", "extend", "repair"):  # oracles really ran under pytest, and passed
        assert funnel[family]["oracle_passes"] == funnel[family]["has_verifier"] > 0, funnel
