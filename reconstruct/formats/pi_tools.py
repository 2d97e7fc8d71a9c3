"""pi tool calls and results → normalised Event fields (edits, exit codes, reads)."""

from __future__ import annotations

import re
from typing import Any

import orjson

from trajforge.reconstruct.formats.pi_records import edit, given
from trajforge.records import Edit

TAIL = 400  # the notices pi appends to tool output fit in the last few hundred characters
EXIT_RE = re.compile(r"Command exited with code (-?\d+)\s*\Z")
# read.ts: "[Showing lines A-B of N. Use offset=K to continue.]", "[R more lines in file. Use
# offset=K to continue.]"; until late 2025 "... (Some lines were truncated to N characters for
# display. R more lines not shown. Use offset=K to continue reading)", either part optional.
READ_NOTICE_RE = re.compile(
    r"\n\n(?:\[(?:Showing lines \d+-\d+ of \d+[^\]\n]*|\d+ more lines in file)"
    r"\. Use offset=\d+ to continue\.?\]"
    r"|\.\.\. \((?:Some lines were truncated to \d+ characters for display(?:\. )?)?"
    r"(?:\d+ more lines not shown\. Use offset=\d+ to continue reading)?\))\Z"
)
READ_UNREADABLE = ("[Line ", "Read image file [")  # over-long first line, image: no file text
_CALL = ("tool", "tool_kind", "call_id")
CALL_GIVEN = given(*_CALL)
"""``model_fields_set`` of a tool call of kind other (no replay fields)."""
SHELL_CALL_GIVEN = given(*_CALL, "command")
_SHELL_AT_CALL = given(*_CALL, "command", "cwd")
OPENCLAW_EXIT_RE = re.compile(r"\(Command exited with code (-?\d+)\)\s*\Z")
"""OpenClaw's ``exec`` keeps a command that exited non-zero a success and appends this."""
_READ_CALL = given(*_CALL, "path")
_READ_AT_CALL = given(*_CALL, "path", "offset")
_WRITE_CALL = given(*_CALL, "path", "content")
_EDIT_CALL = given(*_CALL, "path", "edits")
_PATCH_CALL = given(*_CALL, "patch", "patch_format")
RESULT_GIVEN = given(*_CALL, "text", "is_error")
"""``model_fields_set`` of a tool result with no fields of its kind (an error, other tools)."""
SHELL_RESULT_GIVEN = given(*_CALL, "text", "is_error", "exit_code")
_READ_RESULT = given(*_CALL, "text", "is_error", "content", "partial")
_UNREADABLE_RESULT = given(*_CALL, "text", "is_error", "partial")


def str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def texts(content: object) -> str:
    """Text of a message ``content`` (a string or a list of blocks); images are dropped."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    if len(content) == 1 and isinstance(content[0], dict):  # the usual case: one block
        text = content[0].get("text") if content[0].get("type") == "text" else None
        return text if isinstance(text, str) else ""
    return "\n".join(
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def normalise(fields: dict[str, Any], tool_kind: str, args: dict[str, Any]) -> set[str]:
    """Replay fields for pi's tools (read, write, edit, shell): read{path,offset,limit}
    write{path,content} edit{path,oldText,newText} or edit{path,edits:[{oldText,newText}]}
    bash{command,timeout}; OpenClaw's exec{command,workdir}, apply_patch{input} (a V4A patch,
    as Codex writes one) and the Claude-style names it accepts (``file_path``, ``old_string``,
    ``new_string``); returns the call's ``model_fields_set``."""
    if tool_kind == "patch":
        fields["patch"] = str_or_none(args.get("input", args.get("patch")))
        fields["patch_format"] = "v4a"
        return _PATCH_CALL
    if tool_kind == "shell":
        fields["command"] = str_or_none(args.get("command"))
        if (workdir := str_or_none(args.get("workdir"))) is not None:
            fields["cwd"] = workdir
            return _SHELL_AT_CALL
        return SHELL_CALL_GIVEN
    fields["path"] = str_or_none(args.get("path", args.get("file_path")))
    if tool_kind == "read":
        offset = args.get("offset")
        if isinstance(offset, int | float) and not isinstance(offset, bool):
            fields["offset"] = int(offset)
            return _READ_AT_CALL
        return _READ_CALL
    if tool_kind == "write":
        fields["content"] = str_or_none(args.get("content"))
        return _WRITE_CALL
    fields["edits"] = edits_of(args)
    return _EDIT_CALL


def edits_of(args: dict[str, Any]) -> tuple[Edit, ...]:
    """Both shapes, merged as pi's ``prepareEditArguments`` does (the legacy pair goes last)."""
    items = args.get("edits")
    if isinstance(items, str):  # some models send the array as a JSON string
        try:
            items = orjson.loads(items)
        except orjson.JSONDecodeError:
            items = None
    pairs = list(items) if isinstance(items, list) else []
    if "oldText" in args or "newText" in args or "old_string" in args or "new_string" in args:
        pairs.append(args)
    edits = []
    for pair in pairs:
        if not isinstance(pair, dict):
            return ()
        old = pair.get("oldText", pair.get("old_string"))
        new = pair.get("newText", pair.get("new_string"))
        if not isinstance(old, str) or not isinstance(new, str):
            return ()  # pi rejects the whole call, so nothing was changed
        edits.append(edit(old, new))
    return tuple(edits)


def exit_code_of(text: str, is_error: bool, details: object = None) -> int | None:
    """pi's bash fails a command that exits non-zero (its text ends with the code); OpenClaw's
    exec keeps it a success, says so in ``details`` and appends the code in parentheses, and
    leaves a command it sent to the background ``running`` (no code yet)."""
    if isinstance(details, dict) and "status" in details:
        code = details.get("exitCode")
        if isinstance(code, int) and not isinstance(code, bool):
            return code
        if details.get("status") in ("running", "failed"):
            return None
    if not is_error:
        match = OPENCLAW_EXIT_RE.search(text, max(0, len(text) - TAIL))
        return int(match.group(1)) if match else 0
    match = EXIT_RE.search(text, max(0, len(text) - TAIL))
    return int(match.group(1)) if match else None  # aborted / timed out: no exit code


def read_content(fields: dict[str, Any], args: dict[str, Any], details: object) -> set[str]:
    """Add the file text of a read result and whether it is only part of the file; returns
    the result's ``model_fields_set``."""
    text: str = fields["text"]
    if text.startswith(READ_UNREADABLE):
        fields["partial"] = True
        return _UNREADABLE_RESULT
    partial = args.get("offset") is not None or args.get("limit") is not None
    match = READ_NOTICE_RE.search(text, max(0, len(text) - TAIL))
    if match:
        text, partial = text[: match.start()], True
    truncation = details.get("truncation") if isinstance(details, dict) else None
    if isinstance(truncation, dict) and truncation.get("truncated") is True:
        partial = True
    fields["content"] = text
    fields["partial"] = partial
    return _READ_RESULT
