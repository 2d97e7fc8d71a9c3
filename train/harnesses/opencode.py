"""opencode (``opencode-ai``): ``opencode run --format json`` with the request on stdin.

Same invocation as ``tests/fixtures/generate_opencode.py``: an ``@ai-sdk/openai-compatible``
provider as the only model, every permission allowed, XDG folders under the run's root; the
session is then exported with ``opencode export ID`` to ``session.json`` beside the workspace.
opencode fetches ``@ai-sdk/openai-compatible`` from npm on first use (cached under the run's
HOME, so each run needs npm access).
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

OPENCODE_VERSION = "1.18.33"
PACKAGE = f"opencode-ai@{OPENCODE_VERSION}"


def write_config(home: Path, base_url: str, api_key: str) -> Path:
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
    home.mkdir(parents=True, exist_ok=True)
    path = home / "opencode.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def opencode_env(root: Path, config: Path, workspace: Path) -> dict[str, str]:
    """Environment confining opencode to the run's HOME."""
    home = root / "home"
    return isolated_env(
        root,
        {
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
        },
    )


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

    def run(
        self, request: str, workspace: Path, base_url: str, api_key: str, timeout_s: float
    ) -> HarnessRun:
        root = workspace.parent
        env = opencode_env(root, write_config(root / "home", base_url, api_key), workspace)
        proc = run_process(
            [self.binary, "run", "--format", "json"], workspace, env, timeout_s, request
        )
        sid = session_id_from(proc.stdout)
        log_path = None
        if sid is not None and not proc.timed_out:
            export = run_process([self.binary, "export", sid], workspace, env, timeout_s)
            text = export.stdout[export.stdout.find("{") :] if "{" in export.stdout else ""
            if export.exit_code == 0 and text:
                log_path = root / "session.json"
                log_path.write_text(text)
        return HarnessRun(
            exit_code=proc.exit_code,
            timed_out=proc.timed_out,
            session_log=str(log_path) if log_path else None,
            stderr_tail=tail(proc.stderr),
        )
