"""opencode (``opencode-ai``): ``opencode run --format json`` with the request on stdin.

Same invocation as ``tests/fixtures/generate_opencode.py``: an ``@ai-sdk/openai-compatible``
provider as the only model, every permission allowed, XDG folders under the run's root; the
session is then exported with ``opencode export ID`` to ``session.json`` beside the workspace.
opencode 1.18 bundles ``@ai-sdk/openai-compatible``; at start it also asks npm about plugin
packages (``@opencode-ai/plugin`` ...) and carries on when npm cannot be reached, so it runs
inside the sandbox without network.
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

OPENCODE_VERSION = "1.18.33"
PACKAGE = f"opencode-ai@{OPENCODE_VERSION}"


def config_json(base_url: str, api_key: str) -> str:
    """An opencode.json with one openai-compatible provider and everything allowed."""
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {
            "scripted": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": base_url, "apiKey": api_key},
                "models": {"scripted": {"name": "Scripted", "tool_call": True}},
            }
        },
        "model": "scripted/scripted",
        "small_model": "scripted/scripted",
        "permission": {
            "edit": "allow",
            "bash": "allow",
            "webfetch": "allow",
            "external_directory": "allow",
        },
        "autoupdate": False,
        "share": "disabled",
    }
    return json.dumps(config, indent=2)


def write_config(home: Path, base_url: str, api_key: str) -> Path:
    """Write :func:`config_json` to ``home/opencode.json`` (the fixture generator's config)."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "opencode.json"
    path.write_text(config_json(base_url, api_key))
    return path


def opencode_env(home: Path, config: Path, workspace: Path) -> dict[str, str]:
    """Variables confining opencode to the run's HOME."""
    return {
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "OPENCODE_CONFIG": str(config),
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "PWD": str(workspace),
        "TERM": "dumb",
    }


def session_id_from(stdout: str) -> str | None:
    """The session id from ``opencode run --format json`` event lines."""
    for line in stdout.splitlines():
        if line.startswith("{"):
            try:
                sid = json.loads(line).get("sessionID")
            except json.JSONDecodeError:
                continue
            if sid:
                return str(sid)
    return None


class OpencodeHarness:
    """The opencode CLI (binary ``opencode``)."""

    name = "opencode"
    binary = "opencode"
    package = PACKAGE

    def version(self) -> str | None:
        return version_of([self.binary, "--version"])

    def tool_call(self, action: Action, workspace: Path) -> dict[str, Any]:
        kind = action[0]
        if kind == "shell":
            args: dict[str, Any] = {"command": action[1], "description": "Run a shell command"}
            return {"name": "bash", "arguments": args}
        path = absolute(workspace, action[1])
        if kind == "read":
            return {"name": "read", "arguments": {"filePath": path}}
        if kind == "write":
            return {"name": "write", "arguments": {"filePath": path, "content": action[2]}}
        if kind == "edit":
            args = {"filePath": path, "oldString": action[2], "newString": action[3]}
            return {"name": "edit", "arguments": args}
        raise ValueError(f"opencode has no tool for action {kind!r}")

    def sandbox_paths(self) -> tuple[list[Path], str | None]:
        return node_cli_paths(self.binary, needs_node=False)

    def run(
        self, request: str, runner: Runner, base_url: str, api_key: str, timeout_s: float
    ) -> HarnessRun:
        config = runner.write("home/opencode.json", config_json(base_url, api_key))
        env = runner.env(opencode_env(runner.root / "home", config, runner.workspace))
        env["PATH"] = node_path(self.binary, env.get("PATH", ""))
        proc = runner.run([self.binary, "run", "--format", "json"], env, timeout_s, request)
        sid = session_id_from(proc.stdout)
        log_path = None
        if sid is not None and not proc.timed_out:
            export = runner.run([self.binary, "export", sid], env, timeout_s)
            text = export.stdout[export.stdout.find("{") :] if "{" in export.stdout else ""
            if export.exit_code == 0 and text:
                log_path = runner.host_root / "session.json"
                log_path.write_text(text)
        return HarnessRun(
            exit_code=proc.exit_code,
            timed_out=proc.timed_out,
            session_log=str(log_path) if log_path else None,
            stderr_tail=tail(proc.stderr),
        )
