"""pi (``@mariozechner/pi-coding-agent``): ``pi --print`` with a ``models.json`` provider.

Same invocation as ``tests/fixtures/generate_pi.py``: config, auth and sessions live under the
run's root (``PI_CODING_AGENT_DIR``, ``HOME``), offline, no extensions / skills / context files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trajforge.protocols import HarnessRun, Runner
from trajforge.train.harnesses.base import (
    Action,
    absolute,
    node_cli_paths,
    node_path,
    tail,
    version_of,
)

PI_VERSION = "0.73.1"
PACKAGE = f"@mariozechner/pi-coding-agent@{PI_VERSION}"
PROVIDER = "scripted"
MODEL = "scripted"


def models_json(base_url: str, api_key: str) -> str:
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
    return json.dumps(models, indent=2)


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

    def sandbox_paths(self) -> tuple[list[Path], str | None]:
        return node_cli_paths(self.binary)

    def run(
        self, request: str, runner: Runner, base_url: str, api_key: str, timeout_s: float
    ) -> HarnessRun:
        agent = runner.write("agent/models.json", models_json(base_url, api_key)).parent
        sessions = runner.root / "sessions"
        env = runner.env({"PI_CODING_AGENT_DIR": str(agent), "PI_OFFLINE": "1"})
        env["PATH"] = node_path(self.binary, env.get("PATH", ""))
        argv = [self.binary, "--print", "--provider", PROVIDER, "--model", MODEL]
        argv += ["--session-dir", str(sessions), "--no-extensions", "--no-skills"]
        argv += ["--no-prompt-templates", "--no-context-files", request]
        proc = runner.run(argv, env, timeout_s)
        found = runner.fetch("sessions")
        logs = sorted(found.glob("*.jsonl")) if found else []
        return HarnessRun(
            exit_code=proc.exit_code,
            timed_out=proc.timed_out,
            session_log=str(logs[-1]) if logs else None,
            stderr_tail=tail(proc.stderr),
        )
