"""hermes (``hermes-agent`` on PyPI): ``run_agent.AIAgent`` in its own virtual environment.

Same driver as ``tests/fixtures/generate_hermes.py``: HOME and HERMES_HOME under the run's
root, local terminal backend with its cwd in the workspace, ``save_trajectories=True``. hermes
appends its ShareGPT trajectory to ``trajectory_samples.jsonl`` (``failed_trajectories.jsonl``
when cut off) in the workspace; it is moved out to ``session.jsonl`` beside the workspace so it
never reaches the verifier.

The venv: ``$TRAJFORGE_HERMES_VENV``, else ``~/.cache/trajforge/hermes-venv`` (what
``trajforge harness install`` creates), else ``/tmp/hermes-venv`` (the fixture generator's).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from trajforge.protocols import HarnessRun, Runner
from trajforge.train.harnesses.base import (
    UNEXPOSABLE,
    Action,
    tail,
    version_of,
)

HERMES_VERSION = "0.19.0"
PACKAGE = f"hermes-agent=={HERMES_VERSION}"
TRAJECTORIES = ("trajectory_samples.jsonl", "failed_trajectories.jsonl")

DRIVER = """
import json, sys
from run_agent import AIAgent
cfg = json.loads(sys.argv[1])
agent = AIAgent(base_url=cfg["base_url"], model="scripted", api_key=cfg["api_key"],
                max_iterations=cfg["max_iterations"], tool_delay=0.0,
                enabled_toolsets=["terminal", "file"], save_trajectories=True,
                quiet_mode=True, skip_memory=True, skip_context_files=True)
result = agent.run_conversation(cfg["query"])
print(json.dumps({"completed": result.get("completed"), "session_id": agent.session_id}))
"""


def default_venv() -> Path:
    """Where ``trajforge harness install`` puts hermes's virtual environment."""
    configured = os.environ.get("TRAJFORGE_HERMES_VENV")
    if configured:
        return Path(configured)
    return Path.home() / ".cache" / "trajforge" / "hermes-venv"


def hermes_python() -> Path:
    """The venv python that has hermes-agent (see the module docstring for the search order)."""
    venv = default_venv()
    legacy = Path("/tmp/hermes-venv")
    explicit = bool(os.environ.get("TRAJFORGE_HERMES_VENV"))
    if not explicit and not (venv / "bin" / "python").exists() and legacy.is_dir():
        venv = legacy
    return venv / "bin" / "python"


class HermesHarness:
    """hermes-agent, driven through its Python API in its venv."""

    name = "hermes"
    package = PACKAGE
    max_iterations = 50

    def version(self) -> str | None:
        code = "import importlib.metadata as m; print(m.version('hermes-agent'))"
        return version_of([str(hermes_python()), "-c", code])

    def tool_call(self, action: Action, workspace: Path) -> dict[str, Any]:
        verb = action[0]
        if verb == "read":
            return {"name": "read_file", "arguments": {"path": action[1]}}
        if verb == "write":
            return {"name": "write_file", "arguments": {"path": action[1], "content": action[2]}}
        if verb == "shell":
            return {"name": "terminal", "arguments": {"command": action[1]}}
        if verb == "edit":
            args = {
                "mode": "replace",
                "path": action[1],
                "old_string": action[2],
                "new_string": action[3],
            }
            return {"name": "patch", "arguments": args}
        raise ValueError(f"hermes has no tool for action {verb!r}")

    def sandbox_paths(self) -> tuple[list[Path], str | None]:
        python = hermes_python()
        venv, base = python.parent.parent, python.resolve().parent.parent
        for path in (venv, base):
            if str(path).startswith(UNEXPOSABLE):
                return [], f"the hermes venv {path} is under a folder the local sandbox cannot show"
        return [venv, base], None

    def run(
        self, request: str, runner: Runner, base_url: str, api_key: str, timeout_s: float
    ) -> HarnessRun:
        hermes_home = runner.write("home/.hermes/.keep", "").parent
        extra = {
            "PATH": "/usr/bin:/bin",
            "HERMES_HOME": str(hermes_home),
            "TERMINAL_ENV": "local",
            "TERMINAL_CWD": str(runner.workspace),
            "LANG": "C.UTF-8",
        }
        cfg = {
            "base_url": base_url,
            "api_key": api_key,
            "query": request,
            "max_iterations": self.max_iterations,
        }
        argv = [str(hermes_python()), "-c", DRIVER, json.dumps(cfg)]
        proc = runner.run(argv, runner.env(extra, inherit=False), timeout_s)
        log_path = None
        for name in TRAJECTORIES:
            found = runner.host_workspace / name
            if found.exists():
                log_path = runner.host_root / "session.jsonl"
                found.replace(log_path)
        return HarnessRun(
            exit_code=proc.exit_code,
            timed_out=proc.timed_out,
            session_log=str(log_path) if log_path else None,
            stderr_tail=tail(proc.stderr),
        )
