"""Tool calls from any harness → effects.

Tool names of pi, opencode, hermes, Claude Code and Codex are mapped to what they do; argument
key names vary by harness (``path`` / ``filePath`` / ``file_path``, ``command`` as a string or
an argv list, V4A or unified patch text) and are all read here.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from typing import Any

import orjson

from trajforge.guard.effects import Effect, RolloutState, canonical
from trajforge.guard.patchpaths import patch_paths
from trajforge.guard.shell import ShellWalker

SHELL_TOOLS = frozenset(
    {"bash", "shell", "terminal", "local_shell_call", "local_shell", "exec_command",
     "shell_command", "container.exec", "execute_command", "run_command", "run_terminal_cmd",
     "run_shell_command", "process"}
)  # fmt: skip
READ_TOOLS = frozenset({"read", "read_file", "view", "open_file", "notebookread", "cat"})
WRITE_TOOLS = frozenset({"write", "write_file", "create_file", "notebookedit", "create"})
EDIT_TOOLS = frozenset(
    {
        "edit",
        "multiedit",
        "str_replace",
        "search_replace",
        "replace",
        "edit_file",
        "replace_in_file",
    }
)
PATCH_TOOLS = frozenset({"apply_patch", "patch", "applypatch"})
SEARCH_TOOLS = frozenset({"grep", "search", "search_files", "codebase_search", "ripgrep"})
LIST_TOOLS = frozenset({"glob", "list", "ls", "list_dir", "list_directory", "find", "find_files"})
NET_TOOLS = frozenset(
    {"webfetch", "web_fetch", "fetch", "web_search", "websearch", "web_extract",
     "browser_navigate", "browse", "http_request"}
)  # fmt: skip
PATH_KEYS = ("path", "file_path", "filePath", "file", "filename", "notebook_path",
             "target_file", "absolute_path", "filepath")  # fmt: skip
CWD_KEYS = ("workdir", "cwd", "working_directory", "workingDirectory", "dir")
# Harnesses whose shell tool keeps the working directory between calls.
PERSISTENT_CWD = frozenset({"claude-code", "hermes", ""})


def _str(args: Mapping[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def call_effects(
    state: RolloutState, tool: str, arguments: Mapping[str, Any], harness: str = ""
) -> list[Effect]:
    """Effects of one tool call; updates the rollout's working directory for shell calls."""
    name = tool.strip().lower()
    walker = ShellWalker(state, _cwd(state, arguments))
    if name in SHELL_TOOLS:
        _shell_call(walker, arguments)
        if harness in PERSISTENT_CWD:
            state.cwd = walker.scope.cwd
        return walker.effects
    if name == "str_replace_based_edit_tool" or name == "str_replace_editor":
        name = {"view": "read", "create": "write"}.get(str(arguments.get("command")), "edit")
    path = _str(arguments, PATH_KEYS)
    if name in PATCH_TOOLS and path is None:
        _patch_call(walker, arguments)
    elif name in READ_TOOLS and path:
        walker.add("read", walker.path(path))
    elif name in WRITE_TOOLS and path:
        content = arguments.get("content", arguments.get("file_text", arguments.get("new_source")))
        walker.add("write", walker.path(path), detail=content if isinstance(content, str) else "",
                   whole=True)  # fmt: skip
    elif (name in EDIT_TOOLS or name in PATCH_TOOLS) and path:
        walker.add("write", walker.path(path), detail=_edit_text(arguments))
    elif name in SEARCH_TOOLS or name in LIST_TOOLS:
        _lookup_call(walker, name, path, arguments)
    elif name in NET_TOOLS:
        target = _str(arguments, ("url", "query", "q", "uri")) or name
        walker.add("network", target, detail=_dump(arguments))
    else:
        walker.add("exec", tool, detail=_dump(arguments))
    return walker.effects


def _lookup_call(
    walker: ShellWalker, name: str, path: str | None, arguments: Mapping[str, Any]
) -> None:
    """Grep / Glob / list tools: what they read or list, and the name patterns they search."""
    if name in SEARCH_TOOLS:
        root = walker.path(path or ".")
        walker.add("read", root, detail=_search_detail(arguments), tree=True)
        glob = _str(arguments, ("glob", "include"))
        if glob:
            walker.add("search", root, detail=f"{name} {glob}")
        return
    pattern = _str(arguments, ("pattern", "glob", "include"))
    base = path or _str(arguments, ("directory", "dir")) or "."
    target = posixpath.join(base, pattern) if pattern else base
    walker.add("list", walker.path(target), tree=pattern is None)
    if pattern:
        walker.add("search", walker.path(base), detail=f"{name} {pattern}")


def _cwd(state: RolloutState, arguments: Mapping[str, Any]) -> str | None:
    cwd = _str(arguments, CWD_KEYS)
    action = arguments.get("action")
    if cwd is None and isinstance(action, Mapping):
        cwd = _str(action, CWD_KEYS)
    return canonical(cwd, state.cwd, state.home) if cwd else None


def _shell_call(walker: ShellWalker, arguments: Mapping[str, Any]) -> None:
    command: Any = arguments.get("command", arguments.get("cmd", arguments.get("argv")))
    action = arguments.get("action")
    if command is None and isinstance(action, Mapping):
        command = action.get("command")
    if isinstance(command, list) and all(isinstance(a, str) for a in command):
        if (
            len(command) == 3
            and command[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
            and (command[1] in ("-c", "-lc"))
        ):
            walker.run(command[2])
        elif command:
            walker.argv(command, "argv")
        return
    if isinstance(command, str):
        walker.run(command)
        return
    walker.add("unparsed", "shell", detail=f"no command in {_dump(arguments)[:200]}")


def _patch_call(walker: ShellWalker, arguments: Mapping[str, Any]) -> None:
    text = _str(arguments, ("input", "patch", "patchText", "patch_text", "diff", "content"))
    if text is None:
        walker.add("unparsed", "patch", detail="patch call without patch text")
        return
    found = patch_paths(text)
    if not found:
        walker.add("unparsed", "patch", detail="patch text names no files")
    for kind, path in found:
        whole = kind == "create"
        walker.add("write" if whole else kind, walker.path(path), detail=text, whole=whole)


def _edit_text(arguments: Mapping[str, Any]) -> str:
    parts: list[str] = []
    for key in ("new_string", "newString", "new_str", "newText", "new_text", "replace", "content"):
        value = arguments.get(key)
        if isinstance(value, str):
            parts.append(value)
    edits = arguments.get("edits")
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, Mapping):
                parts.append(_edit_text(edit))
    return "\n".join(parts)


def _search_detail(arguments: Mapping[str, Any]) -> str:
    return " ".join(
        str(arguments[k]) for k in ("pattern", "query", "glob", "include") if k in arguments
    )


def _dump(arguments: Mapping[str, Any]) -> str:
    try:
        return orjson.dumps(arguments, default=str).decode()
    except TypeError:
        return str(arguments)
