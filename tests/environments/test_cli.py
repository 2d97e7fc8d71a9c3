"""``trajforge env build|list|prune`` on reconstructed tasks (real builds from the registries)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.fixtures.repos import make_repo
from trajforge.cli.env_cmd import env_app
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.repos import RepoSearch

SESSIONS = Path(__file__).parents[1] / "fixtures" / "sessions" / "repos"


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(env_app, list(args))
    return result.exit_code, result.stdout


@pytest.mark.slow
def test_build_list_prune(tmp_path: Path) -> None:
    for name in ("nodecalc", "pyslug"):
        make_repo(name, tmp_path / "repos" / name)
    out = tmp_path / "out"
    pipeline.run(
        [SESSIONS / "pi"],
        out,
        pipeline.ReconstructSpec(repos=RepoSearch(dirs=(str(tmp_path / "repos"),))),
    )
    cache = str(tmp_path / "cache")
    code, stdout = _invoke("build", str(out), "-j", "2", "--cache", cache, "--json")
    assert code == 0, stdout
    rows = json.loads(stdout)["environments"]
    assert sorted(tuple(r["managers"]) for r in rows) == [("npm",), ("pip",)]
    assert {r["status"] for r in rows} == {"built"}
    assert sum(len(r["tasks"]) for r in rows) == len(list((out / "tasks").iterdir()))
    code, stdout = _invoke("build", str(out), "--cache", cache, "--json")
    assert {r["status"] for r in json.loads(stdout)["environments"]} == {"cached"}
    code, stdout = _invoke("list", "--cache", cache, "--json")
    listed = json.loads(stdout)["environments"]
    assert code == 0 and {e["hash"] for e in listed} == {r["hash"] for r in rows}
    code, stdout = _invoke("prune", "--cache", cache, "--json")  # used just now: kept
    assert json.loads(stdout)["removed"] == []
    code, stdout = _invoke("prune", "--all", "--cache", cache, "--json")
    assert code == 0 and len(json.loads(stdout)["removed"]) == 2
    assert json.loads(_invoke("list", "--cache", cache, "--json")[1])["environments"] == []


def test_build_rejects_what_is_not_a_task(tmp_path: Path) -> None:
    result = CliRunner().invoke(env_app, ["build", str(tmp_path), "--cache", str(tmp_path / "c")])
    assert result.exit_code != 0
    assert "neither a task folder" in str(result.exception)
