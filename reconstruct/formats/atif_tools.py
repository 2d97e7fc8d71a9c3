"""ATIF tool calls and observation results → normalised event fields.

ATIF records each harness's own tool names and arguments. trajforge's own export (splits/atif.py)
also keeps the fields it had normalised under the step's ``extra.trajforge`` and those are used
as they are; for other producers (Harbor's agents, Repo2RLEnv dumps) the kind of a call is told
from its arguments, which is how every harness we know of spells them:

- shell: ``command`` (text, or an argv list), ``cmd``, or terminus's ``keystrokes``;
- write: a path plus ``content`` / ``file_text``;
- edit: a path plus an old/new text pair (``old_string``/``new_string``, ``oldText``/``newText``,
  ``oldString``/``newString``, ``old_str``/``new_str``), or an ``edits`` list of them;
- patch: ``patch`` / ``input`` / ``patchText`` holding a V4A (``*** Begin Patch``) or unified diff;
- read: a path, and a tool named like read / view / cat;
- the text-editor tool (``str_replace_editor``: ``command`` view / create / str_replace).
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from typing import Any

from pydantic import ValidationError

from trajforge.records import CutOff, Edit, Event, ParseWarning, SourcePos


class EventLog:
    """One session being read from ATIF steps or STS messages: its events, each at its source
    line, warnings, skipped records and the calls by id."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.events: list[Event] = []
        self.warnings: list[ParseWarning] = []
        self.skipped: Counter[str] = Counter()
        self.calls: dict[str, Event] = {}

    def warn(self, line: int, message: str) -> None:
        self.warnings.append(ParseWarning(file=self.file, line=line, message=message))

    def add(self, line: int, **fields: Any) -> Event:
        event = Event(source=SourcePos(file=self.file, line=line), **fields)
        self.events.append(event)
        return event

    def add_known(self, line: int, known: Any, inferred: dict[str, Any], **core: Any) -> Event:
        """The event with the fields trajforge's export recorded (over ``core``, which says
        what the record is), else the inferred ones."""
        if isinstance(known, dict):
            mine = {k: v for k, v in known.items() if k not in ("kind", "source")}
            try:
                return self.add(line, **{**core, **mine})
            except (ValidationError, TypeError):
                self.warn(line, f"record {line}: unusable trajforge fields; inferred instead")
        return self.add(line, **{**core, **inferred})

    def add_call(
        self, line: int, name: str, call_id: str, args: dict[str, Any], known: Any, where: str = ""
    ) -> None:
        """A tool call, its kind told from its arguments (or as the export recorded it); a
        repeated call id is a warning (``where`` opens it) and the first call is kept."""
        if call_id in self.calls:
            self.warn(line, f"{where}tool call id {call_id!r} used twice; kept the first")
            return
        self.calls[call_id] = self.add_known(
            line,
            known,
            call_fields(name, args),
            kind="tool_call",
            tool=name,
            call_id=call_id,
            arguments=args,
        )


PATH_KEYS = ("path", "file_path", "filePath", "filename", "file")
EDIT_PAIRS = (
    ("old_string", "new_string"),
    ("oldText", "newText"),
    ("oldString", "newString"),
    ("old_str", "new_str"),
)
PATCH_KEYS = ("patch", "input", "patchText")
READ_NAMES = re.compile(r"read|view|cat", re.I)
EDITOR_COMMANDS = frozenset({"view", "create", "str_replace", "insert", "undo_edit"})
# Exit status as harnesses print it: pi "Command exited with code N" (last line), Claude Code
# "Exit code N" and Codex "Exit code: N" (first line), Codex's unified exec "Process exited
# with code N"; hermes prints JSON with "exit_code".
EXIT_PATTERNS = (
    re.compile(r"Command exited with code (-?\d+)\s*\Z"),
    re.compile(r"\AExit code:? (-?\d+)"),
    re.compile(r"^Process exited with code (-?\d+)$", re.M),
)
# Harnesses whose shell tool prints its exit status only when the command failed (Claude Code's
# "Exit code N", pi's "Command exited with code N"): no status and no error flag means exit 0.
# Others (terminus's terminal screens, ...) say nothing either way: the status stays unknown.
SILENT_ON_SUCCESS = frozenset({"claude-code", "pi"})
# Numbered file listings read tools return: Claude Code "   N→line" / "N<TAB>line", hermes
# "N|line", opencode "N: line" / "0000N| line". Only a listing numbered on every line is taken
# for the file's text; anything else leaves the file's content unknown.
NUMBERED = (
    re.compile(r"^\s*\d+(?:→|\t)(.*)$"),
    re.compile(r"^ *\d+\|(.*)$"),
    re.compile(r"^\d+(?:: |\| ?)(.*)$"),
)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _path(args: dict[str, Any]) -> str | None:
    return next((args[k] for k in PATH_KEYS if isinstance(args.get(k), str) and args[k]), None)


def _edits(items: list[Any]) -> tuple[Edit, ...]:
    found: list[Edit] = []
    for item in items:
        pair = next(
            (
                (item[o], item[n])
                for o, n in EDIT_PAIRS
                if isinstance(item, dict)
                and isinstance(item.get(o), str)
                and isinstance(item.get(n), str)
            ),
            None,
        )
        if pair is not None:
            every = item.get("replace_all") is True or item.get("replaceAll") is True
            found.append(Edit(old=pair[0], new=pair[1], replace_all=every))
    return tuple(found)


def _patch(args: dict[str, Any]) -> dict[str, Any] | None:
    for key in PATCH_KEYS:
        text = _str(args.get(key))
        if text and "*** Begin Patch" in text:
            return {"tool_kind": "patch", "patch": text, "patch_format": "v4a"}
        if text and text.lstrip().startswith(("--- ", "diff --git")) and "\n+++ " in text:
            return {"tool_kind": "patch", "patch": text, "patch_format": "unified"}
    return None


def _editor(args: dict[str, Any], path: str) -> dict[str, Any]:
    command = args["command"]
    if command == "view":
        return {"tool_kind": "read", "path": path}
    if command == "create" and isinstance(args.get("file_text"), str):
        return {"tool_kind": "write", "path": path, "content": args["file_text"]}
    edits = _edits([args]) if command == "str_replace" else ()
    return {"tool_kind": "edit", "path": path, "edits": edits} if edits else {"tool_kind": "other"}


def _shell(args: dict[str, Any]) -> dict[str, Any] | None:
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list) and all(isinstance(a, str) for a in command):
        command = shlex.join(command)
    if not isinstance(command, str):
        keys = _str(args.get("keystrokes"))
        command = keys.rstrip("\n") if keys and keys.strip() else None
    if not command:
        return None
    return {
        "tool_kind": "shell",
        "command": command,
        "cwd": _str(args.get("workdir") or args.get("cwd")),
    }


def call_fields(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """Event fields of a tool call told from its arguments."""
    path = _path(args)
    if path and args.get("command") in EDITOR_COMMANDS:
        return _editor(args, path)
    patch = _patch(args)
    if patch is not None:
        return patch
    listed = args.get("edits")
    edits = _edits(listed if isinstance(listed, list) else [args])
    if path and edits:
        return {"tool_kind": "edit", "path": path, "edits": edits}
    content = _str(args.get("content", args.get("file_text")))
    if path and content is not None:
        return {"tool_kind": "write", "path": path, "content": content}
    if path and READ_NAMES.search(name):
        offset = args.get("offset")
        return {
            "tool_kind": "read",
            "path": path,
            "offset": offset if isinstance(offset, int) else None,
        }
    return _shell(args) or {"tool_kind": "other"}


def exit_code(text: str, harness: str, is_error: bool) -> int | None:
    """The exit status a shell tool printed; 0 for a quiet success of a harness that only
    prints failures; None when unknown."""
    for pattern in EXIT_PATTERNS:
        match = pattern.search(text)
        if match:
            return int(match.group(1))
    if text.lstrip().startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        code = data.get("exit_code") if isinstance(data, dict) else None
        if isinstance(code, int) and not isinstance(code, bool):
            return code
    return 0 if harness in SILENT_ON_SUCCESS and not is_error else None


def numbered_text(text: str) -> str | None:
    """File text of a read tool's numbered listing, or None when it is not one."""
    lines = text.rstrip("\n").split("\n")
    for pattern in NUMBERED:
        matches = [pattern.match(line) for line in lines]
        if lines and all(matches):
            return "\n".join(m.group(1) for m in matches if m) + "\n"
    return None


def outcome_fields(call: Event, text: str, harness: str, error: bool, code: Any) -> dict[str, Any]:
    """A tool result's kind, error flag and what its text tells: a shell call's exit code (the
    one the producer recorded when it is an integer, else told from the text), a read's file
    content."""
    fields: dict[str, Any] = {"tool_kind": call.tool_kind, "is_error": error}
    if call.tool_kind == "shell":
        if not isinstance(code, int) or isinstance(code, bool):
            code = exit_code(text, harness, error)
        fields.update(exit_code=code, is_error=error or code not in (None, 0))
    elif call.tool_kind == "read" and not error:
        content = numbered_text(text)
        if content is not None:
            fields.update(path=call.path, content=content, partial=bool(call.offset))
    return fields


def cut_offs_of(marks: dict[str, Any], events: int) -> tuple[CutOff, ...]:
    """The ``cut_offs`` our exports keep (ATIF's root ``extra``, STS's ``trajforge`` header
    key: by event index); malformed entries are left out."""
    found = []
    for item in _list(marks.get("cut_offs")):
        entry = item if isinstance(item, dict) else {}
        after, failure = entry.get("after"), entry.get("failure")
        known = isinstance(after, int) and (after == -1 or _index(after, events))
        if known and isinstance(after, int) and isinstance(failure, str):
            found.append(CutOff(after=after, failure=failure))
    return tuple(found)


def steers_of(marks: dict[str, Any], events: int) -> tuple[int, ...]:
    """The ``steers`` our exports keep (event indices of messages delivered mid-turn)."""
    return tuple(i for i in _list(marks.get("steers")) if _index(i, events))


def _index(value: Any, events: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < events


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
