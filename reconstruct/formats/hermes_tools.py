"""hermes-agent tools → normalised event fields (terminal, write_file, read_file, patch).

Shapes from hermes-agent 0.19.0 ``tools/terminal_tool.py`` and ``tools/file_tools.py``:
terminal ``{command, workdir?}`` → ``{"output", "exit_code", "error"}``; write_file
``{path, content}``; read_file ``{path, offset?, limit?}`` → ``{"content": "N|line...",
"truncated", ...}``; patch ``{mode: replace, path, old_string, new_string, replace_all?}`` or
``{mode: patch, patch: V4A text}``. Errors come back as ``{"error": ...}`` (``tool_error``), a
false ``success``, ``status: error`` or the loop's "Tool 'x' does not exist" text.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from trajforge.records import Edit, Event

_NOT_A_TOOL = re.compile(r"^Tool '.*' does not exist")


def reports_error(content: Any) -> bool:
    """True when a hermes tool output reports a failure."""
    if isinstance(content, dict):
        return (
            bool(content.get("error"))
            or content.get("success") is False
            or (content.get("status") == "error")
        )
    return isinstance(content, str) and bool(_NOT_A_TOOL.match(content))


def loads_loose(text: str) -> Any:
    """JSON, else a Python literal (old hermes datasets print dicts with single quotes)."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def as_object(value: Any) -> Any:
    """Tool output as hermes produced it: JSON strings decoded, anything else kept."""
    if isinstance(value, str) and value.lstrip().startswith(("{", "[")):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def message_text(content: Any) -> str:
    """Message content as text (string, or the text parts of a list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
    return ""


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def call_fields(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Event fields for a hermes tool call; ``problem`` is set when required args are missing."""
    path = _str(args.get("path"))
    if name == "terminal" and _str(args.get("command")) is not None:
        return {"tool_kind": "shell", "command": args["command"], "cwd": _str(args.get("workdir"))}
    if name == "write_file" and path is not None and _str(args.get("content")) is not None:
        return {"tool_kind": "write", "path": path, "content": args["content"]}
    if name == "read_file" and path is not None:
        return {"tool_kind": "read", "path": path, "offset": _int(args.get("offset"))}
    if name == "patch" and args.get("mode", "replace") == "patch" and _str(args.get("patch")):
        return {"tool_kind": "patch", "patch": args["patch"], "patch_format": "v4a"}
    old, new = _str(args.get("old_string")), _str(args.get("new_string"))
    if name == "patch" and path is not None and old is not None and new is not None:
        edit = Edit(old=old, new=new, replace_all=args.get("replace_all") is True)
        return {"tool_kind": "edit", "path": path, "edits": (edit,)}
    known = name in ("terminal", "write_file", "read_file", "patch")
    return {"tool_kind": "other", "problem": known}


_LINE_NUMBER = re.compile(r"^ *\d+\|")


def _strip_line_numbers(text: str) -> tuple[str, bool]:
    """read_file display (``N|line``) → file text; True when a long line was cut by hermes."""
    lines = [_LINE_NUMBER.sub("", line, count=1) for line in text.split("\n")]
    return "\n".join(lines), any(line.endswith("... [truncated]") for line in lines)


def result_fields(call: Event, content: Any, error: bool) -> dict[str, Any]:
    """Event fields for a tool result: output text, exit code, recovered file content.

    Sets ``is_error`` itself only where the output says more than ``error`` (shell exits).
    """
    data = content if isinstance(content, dict) else None
    if data is None:
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        return {"text": text}
    if call.tool_kind == "shell":
        return _shell_result(data, error)
    if call.tool_kind == "read" and isinstance(data.get("content"), str):
        shown = data["content"]
        fields: dict[str, Any] = {"text": shown, "path": call.path, "offset": call.offset}
        if not error and not data.get("is_binary") and not data.get("is_image"):
            body, cut = _strip_line_numbers(shown)
            ranged = (call.offset or 1) > 1 or bool(data.get("truncated"))
            fields.update(content=body, partial=ranged or cut)
        return fields
    message = _str(data.get("error")) if error else None
    return {"text": message or json.dumps(data, ensure_ascii=False)}


def _shell_result(data: dict[str, Any], error: bool) -> dict[str, Any]:
    """terminal output; exit code -1 is hermes's "never ran" (blocked, denied, failed to start)."""
    code = _int(data.get("exit_code"))
    never_ran = code == -1 or data.get("status") in ("blocked", "pending_approval", "disabled")
    output = _str(data.get("output")) or (
        str(data.get("error") or data.get("status")) if (error or never_ran) else ""
    )
    return {
        "text": output,
        "exit_code": None if never_ran else code,
        "is_error": error or never_ran or code not in (None, 0),
    }


STEER_OPEN = (
    "[OUT-OF-BAND USER MESSAGE — a direct message from the user, delivered mid-turn;"
    " not tool output]"
)
STEER_CLOSE = "[/OUT-OF-BAND USER MESSAGE]"
_STEER = re.compile(
    r"\s*" + re.escape(STEER_OPEN) + r"\n?(?P<text>.*?)\n?" + re.escape(STEER_CLOSE) + r"\s*$",
    re.S,
)
"""hermes's ``/steer``: a message the person sent while the agent worked, appended to the end
of the turn's last tool result between these markers (``format_steer_marker``)."""


def split_steer(content: Any) -> tuple[Any, str | None]:
    """A tool result's own content and the steer hermes appended to it (None: none). The
    content is a string (a JSON one decodes again once the steer is off) or text blocks."""
    if isinstance(content, str) and (m := _STEER.search(content)):
        return as_object(content[: m.start()]), m.group("text").strip() or None
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        last = content[-1].get("text")
        if isinstance(last, str) and (m := _STEER.match(last)) and m.start() == 0:
            return content[:-1], m.group("text").strip() or None
    return content, None
