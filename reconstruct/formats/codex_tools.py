"""Codex tool calls and outputs → normalised event fields (shell, apply_patch, read-by-cat)."""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import Any

import orjson

SHELL_TOOLS = frozenset({"shell", "container.exec", "local_shell"})
STRING_SHELL_TOOLS = {"shell_command": "command", "exec_command": "cmd"}
EXIT_HEADER_RE = re.compile(
    r"\AExit code: (-?\d+)\nWall time: [^\n]*\n(?:Total output lines: \d+\n)?Output:\n?(.*)\Z",
    re.DOTALL,
)
UNIFIED_RE = re.compile(
    r"\A(?:[A-Z][^\n]*\n)*?Process exited with code (-?\d+)\n"
    r"(?:[A-Z][^\n]*\n)*?Output:\n?(.*)\Z",
    re.DOTALL,
)
HEREDOC_RE = re.compile(r"\A\s*(?:cd\s+\S+\s*&&\s*)?(?:apply_patch|applypatch)\b")
PATCH_RE = re.compile(r"\*\*\* Begin Patch\n.*?\*\*\* End Patch", re.DOTALL)
SED_RANGE_RE = re.compile(r"\A(\d+),(\d+)p\Z")
OMITTED_RE = re.compile(r"\[\.\.\. omitted \d+ of \d+ lines \.\.\.\]")


def str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def message_text(content: object) -> str:
    blocks = content if isinstance(content, list) else [{"text": content}]
    return "\n".join(
        str(b["text"]) for b in blocks if isinstance(b, dict) and isinstance(b.get("text"), str)
    )


def _patch_fields(patch: str) -> dict[str, Any]:
    match = PATCH_RE.search(patch)
    text = match.group(0) + "\n" if match else patch
    return {"tool_kind": "patch", "patch": text, "patch_format": "v4a" if match else None}


def _shell_fields(command: str, cwd: str | None) -> dict[str, Any]:
    """A shell command, or the V4A patch when the command is an ``apply_patch`` heredoc."""
    if HEREDOC_RE.match(command) and "*** Begin Patch" in command:
        return {**_patch_fields(command), "cwd": cwd}
    return {"tool_kind": "shell", "command": command, "cwd": cwd}


def argv_fields(argv: list[str], cwd: str | None) -> dict[str, Any]:
    if len(argv) >= 2 and argv[0] in ("apply_patch", "applypatch"):
        return {**_patch_fields(argv[1]), "cwd": cwd}
    shell = argv[0].rsplit("/", 1)[-1] if argv else ""
    if len(argv) == 3 and shell in ("bash", "sh", "zsh") and argv[1] in ("-lc", "-c"):
        return _shell_fields(argv[2], cwd)
    return _shell_fields(shlex.join(argv), cwd)


def call_fields(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Normalised fields of a Codex tool call (kind, command / patch, cwd)."""
    cwd = str_or_none(args.get("workdir"))
    if name in SHELL_TOOLS:
        command = args.get("command")
        if isinstance(command, list) and all(isinstance(a, str) for a in command):
            return argv_fields(command, cwd)
        if isinstance(command, str):
            return _shell_fields(command, cwd)
    if name in STRING_SHELL_TOOLS and isinstance(args.get(STRING_SHELL_TOOLS[name]), str):
        return _shell_fields(args[STRING_SHELL_TOOLS[name]], cwd)
    if name == "apply_patch":
        patch = args.get("input", args.get("patch"))
        if isinstance(patch, str):
            return _patch_fields(patch)
    return {"tool_kind": "other"}


def parse_output(raw: object) -> tuple[str, int | None, bool | None]:
    """(text, exit code, success) of a tool output in any of its recorded forms."""
    success: bool | None = None
    if isinstance(raw, dict):
        success = raw["success"] if isinstance(raw.get("success"), bool) else None
        raw = raw.get("content", raw.get("output", ""))
    text = message_text(raw)
    if text.startswith("{"):
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("output"), str):
            meta = value.get("metadata")
            exit_code = int_or_none(meta.get("exit_code")) if isinstance(meta, dict) else None
            return value["output"], exit_code, success
    for regex in (EXIT_HEADER_RE, UNIFIED_RE):
        match = regex.match(text)
        if match:
            return match.group(2), int(match.group(1)), success
    return text, None, success


def shell_read(command: str | None, cwd: str | None, output: str) -> dict[str, Any] | None:
    """``path`` / ``content`` / ``partial`` when ``command`` printed one whole or ranged file."""
    try:
        argv = shlex.split(command or "")
    except ValueError:
        return None
    if len(argv) == 2 and argv[0] == "cat":
        path, partial = argv[1], False
    elif len(argv) == 4 and argv[:2] == ["sed", "-n"] and SED_RANGE_RE.match(argv[2]):
        first, last = argv[2][:-1].split(",")
        path, partial = argv[3], first != "1" or len(output.splitlines()) >= int(last)
    else:
        return None
    if path.startswith("-") or any(c in path for c in "*?[$~"):
        return None
    if cwd and not path.startswith("/"):
        path = posixpath.join(cwd, path)
    return {
        "path": path,
        "content": output,
        "partial": partial or OMITTED_RE.search(output) is not None,
    }
