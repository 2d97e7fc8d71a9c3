"""pi (``@mariozechner/pi-coding-agent``): ``pi --print`` with a ``models.json`` provider.

Same invocation as ``tests/fixtures/generate_pi.py``: config, auth and sessions live under the
run's root (``PI_CODING_AGENT_DIR``, ``HOME``), offline, no extensions / skills / context files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trajforge.protocols import HarnessRun
from trajforge.train.harnesses.base import (
    Action,
    absolute,
    isolated_env,
    run_process,
    tail,
    version_of,
)

PI_VERSION = "0.73.1"
PACKAGE = f"@mariozechner/pi-coding-agent@{PI_VERSION}"
PROVIDER = "scripted"
MODEL = "scripted"


def write_models_json(agent_dir: Path, base_url: str, api_key: str) -> None:
    """pi's provider config: one OpenAI-completions provider at ``base_url``."""
    models = {
        "providers": {
            PROVIDER: {
                "baseUrl": base_url,
                "api": "openai-completions",
                "apiKey": api_key,
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [{"id": MODEL, "reasoning": False}],
            }
        }
    }
    agent_dir.mkdir(parents=True, exist_ok=True)
    (agent_dir / "models.json").write_text(json.dumps(models, indent=2))


class PiHarness:
    """The pi CLI (binary ``pi``)."""

    name = "pi"
    binary = "pi"
    package = PACKAGE

    def version(self) -> str | None:
        return version_of([self.binary, "--version"])

    def tool_call(self, action: Action, workspace: Path) -> dict[str, Any]:
        kind = action[0]
        if kind == "read":
            return {"name": "read", "arguments": {"path": absolute(workspace, action[1])}}
        if kind == "write":
            path = absolute(workspace, action[1])
            return {"name": "write", "arguments": {"path": path, "content": action[2]}}
        if kind == "edit":
            path = absolute(workspace, action[1])
            args = {"path": path, "oldText": action[2], "newText": action[3]}
            return {"name": "edit", "arguments": args}
        if kind == "shell":
            return {"name": "bash", "arguments": {"command": action[1]}}
        raise ValueError(f"pi has no tool for action {kind!r}")

    def run(
        self, request: str, workspace: Path, base_url: str, api_key: str, timeout_s: float
    ) -> HarnessRun:
        root = workspace.parent
        sessions = root / "sessions"
        write_models_json(root / "agent", base_url, api_key)
        env = isolated_env(root, {"PI_CODING_AGENT_DIR": str(root / "agent"), "PI_OFFLINE": "1"})
        argv = [self.binary, "--print", "--provider", PROVIDER, "--model", MODEL]
        argv += ["--session-dir", str(sessions), "--no-extensions", "--no-skills"]
        argv += ["--no-prompt-templates", "--no-context-files", request]
        proc = run_process(argv, workspace, env, timeout_s)
        logs = sorted(sessions.glob("*.jsonl"))
        return HarnessRun(
            exit_code=proc.exit_code,
            timed_out=proc.timed_out,
            session_log=str(logs[-1]) if logs else None,
            stderr_tail=tail(proc.stderr),
        )
