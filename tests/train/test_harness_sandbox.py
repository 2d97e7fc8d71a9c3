"""The harness process inside the local sandbox, and the harness revision of each run.

Real parts only: the real pi / hermes CLIs, the local sandbox (namespaces, root needed), the
bridge, the guard proxy and the scripted model server. Skips loudly when the local sandbox or
a harness CLI is not usable here.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from trajforge.protocols import Harness
from trajforge.registry import HARNESSES, SANDBOXES, create
from trajforge.train.harnesses.revision import normalise
from trajforge.train.harnesses.sandboxed import RUN_ROOT, sandbox_blocker
from trajforge.train.policy import script
from trajforge.train.replay import replay_task
from trajforge.train.rollout import Budget, Rollout, run_rollout
from trajforge.train.rollout_spec import setup_for, spec_for
from trajforge.train.scripted import ScriptedServer

REPO = Path(__file__).resolve().parents[2]
MARKER = "1234.5678"
PROBE = """
import json, socket
def tcp(host, port):
    try:
        socket.create_connection((host, port), timeout=3).close()
        return "connected"
    except OSError as exc:
        return type(exc).__name__
def dns(name):
    try:
        socket.getaddrinfo(name, 443)
        return "resolved"
    except OSError as exc:
        return type(exc).__name__
base = json.load(open("{models}"))["providers"]["scripted"]["baseUrl"]
bridge = int(base.split(":")[2].split("/")[0])
print(json.dumps({{"bridge": tcp("127.0.0.1", bridge), "host_port": tcp("127.0.0.1", {port}),
                  "outside": tcp("1.1.1.1", 53), "dns": dns("pypi.org")}}))
"""


def need(harness: str) -> Harness:
    runner = create(HARNESSES, harness, "harness")
    if runner.version() is None:
        pytest.skip(f"!! {harness} CLI not installed: run `trajforge harness install`")
    assert isinstance(runner, Harness)
    reason = sandbox_blocker(runner)
    if reason is not None:
        pytest.skip(f"!! {harness} cannot run in the local sandbox here: {reason}")
    return runner


def replay_cli(*args: str) -> tuple[int, dict[str, Any]]:
    argv = [sys.executable, "-m", "trajforge.cli.main", "replay", *args, "--json"]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False, cwd=REPO)
    assert proc.stdout.strip(), proc.stderr
    return proc.returncode, json.loads(proc.stdout)


@pytest.fixture(scope="module")
def pi_repair(tasks: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """pi replaying the repair task in the sandbox (the default), run folder kept."""
    need("pi")
    keep = tmp_path_factory.mktemp("pi-sandbox") / "run"
    rc, doc = replay_cli(str(tasks["repair"]), "--harness", "pi", "--keep", str(keep))
    assert rc == 0, doc
    return {"doc": doc, "keep": keep}


def test_pi_in_sandbox_reaches_reward_1(pi_repair: dict[str, Any]) -> None:
    doc, keep = pi_repair["doc"], pi_repair["keep"]
    assert doc["harness_sandbox"] == "local"
    assert doc["status"] == "ok" and doc["reward"] == 1.0
    assert doc["guard_calls"] == 2 and doc["blocks"] == []  # every call went through the guard
    assert doc["session_tool_calls"] == 2  # pi's session log, fetched out of the sandbox
    assert Path(doc["session_log"]).parent == keep / "sessions"
    assert "return low" in (keep / "workspace" / "calc.py").read_text()  # the sandbox's edits


def test_revision_is_recorded_in_the_kept_run(pi_repair: dict[str, Any]) -> None:
    doc, keep = pi_repair["doc"], pi_repair["keep"]
    record = json.loads((keep / "harness_revision.json").read_text())
    assert record["harness_revision"] == doc["harness_revision"]
    assert record["system_prompt_sha256"] == doc["system_prompt_sha256"]
    assert record["tools_sha256"] == doc["tools_sha256"]
    assert record["version"] == doc["harness_version"]
    prompt = record["system_prompt"]
    assert "Current working directory: <workspace>" in prompt
    assert "Current date: <date>" in prompt
    assert {t["function"]["name"] for t in record["tools"]} >= {"read", "bash", "edit", "write"}


def test_same_harness_same_revision_across_tasks(
    pi_repair: dict[str, Any], tasks: dict[str, Path]
) -> None:
    other = replay_task(setup_for("pi", create(SANDBOXES, "local", "sandbox")), tasks["extend"])
    assert other.task != pi_repair["doc"]["task"]
    assert other.harness_revision == pi_repair["doc"]["harness_revision"]
    assert other.system_prompt_sha256 == pi_repair["doc"]["system_prompt_sha256"]


def test_hermes_in_sandbox_and_its_revision_differs(
    pi_repair: dict[str, Any], tasks: dict[str, Path]
) -> None:
    need("hermes")
    setup = setup_for("hermes", create(SANDBOXES, "local", "sandbox"), placement="on")
    result = replay_task(setup, tasks["repair"])
    assert result.harness_sandbox == "local"
    assert result.status == "ok" and result.reward == 1.0, (result.reasons, result.stderr_tail)
    assert result.harness_revision is not None
    assert result.harness_revision != pi_repair["doc"]["harness_revision"]
    assert result.tools_sha256 != pi_repair["doc"]["tools_sha256"]


def _scripted_rollout(
    task_dir: Path, calls: list[dict[str, Any]], keep: Path, budget: Budget
) -> Rollout:
    """pi in the sandbox against a scripted server making ``calls`` (one per turn)."""
    setup = setup_for("pi", create(SANDBOXES, "local", "sandbox"), budget, placement="on")
    with ScriptedServer(script([[c] for c in calls], "Done.")) as server:
        spec = spec_for(setup, task_dir, server.base_url, "probe")
        result = run_rollout(dataclasses.replace(spec, keep=keep))
    return result


def test_the_model_endpoint_is_the_only_way_out(tasks: dict[str, Path], tmp_path: Path) -> None:
    need("pi")
    with ScriptedServer([]) as host_server:  # listens on a host port the sandbox must not reach
        code = PROBE.format(models=RUN_ROOT / "agent" / "models.json", port=host_server.port)
        calls = [
            {"name": "write", "arguments": {"path": "probe.py", "content": code}},
            {"name": "bash", "arguments": {"command": "python3 probe.py > net.json"}},
        ]
        result = _scripted_rollout(tasks["repair"], calls, tmp_path / "run", Budget(timeout_s=120))
    assert result.harness_sandbox == "local" and result.guard_calls == 2, result
    net = json.loads((tmp_path / "run" / "workspace" / "net.json").read_text())
    assert net["bridge"] == "connected"  # the model endpoint, through the bridge
    assert net["host_port"] == "ConnectionRefusedError"  # a host port: not there
    assert net["outside"] in ("OSError", "ConnectionRefusedError")  # no route out
    assert net["dns"] == "gaierror"


def test_timeout_kills_the_sandboxed_process_tree(tasks: dict[str, Path], tmp_path: Path) -> None:
    need("pi")
    hang = f"(setsid sleep {MARKER} &) ; sleep {MARKER}"
    calls = [{"name": "bash", "arguments": {"command": hang}}]
    result = _scripted_rollout(tasks["repair"], calls, tmp_path / "run", Budget(timeout_s=5))
    assert result.status == "timeout" and result.harness_sandbox == "local"
    # pi and everything it started, the setsid'd daemon included, died with the sandbox run
    left = [
        p.pid
        for p in psutil.process_iter(["cmdline"])
        if MARKER in " ".join(p.info["cmdline"] or [])
    ]
    assert left == []


def test_the_budget_caps_the_sandboxed_harness_disk(tasks: dict[str, Path], tmp_path: Path) -> None:
    need("pi")
    fill = (
        "out=$(dd if=/dev/zero of=big bs=1M count=200 2>&1); rc=$?; rm -f big; "
        'echo "$rc $out" > dd.txt'
    )
    calls = [{"name": "bash", "arguments": {"command": fill}}]
    budget = Budget(timeout_s=120, disk_mb=64)
    result = _scripted_rollout(tasks["repair"], calls, tmp_path / "run", budget)
    assert result.harness_sandbox == "local" and result.status == "ok", result
    ws = tmp_path / "run" / "workspace"
    rc, out = (ws / "dd.txt").read_text().split(" ", 1)
    assert rc != "0" and "No space left on device" in out, out


def test_normalise_replaces_run_paths_dates_and_secrets() -> None:
    text = (
        "cwd /tmp/x/run/workspace home /tmp/x/run/home; started Monday, November 30, 2026 "
        "at 2026-11-30T01:02:03Z (Mon Nov 30 2026); key sk-ant-api03-" + "a" * 40
    )
    places = {"/tmp/x/run/workspace": "<workspace>", "/tmp/x/run": "<run>"}
    out = normalise(text, places)
    assert out.startswith("cwd <workspace> home <run>/home; started <date> at <date> (<date>)")
    assert "sk-ant" not in out
