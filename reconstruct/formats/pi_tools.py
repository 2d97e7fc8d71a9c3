"""pi tool calls and results → normalised fields (edits, exit codes, reads); fast records."""

from __future__ import annotations

import re
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel

from trajforge.records import Edit, Event, SourcePos

TAIL = 400  # the notices pi appends to tool output fit in the last few hundred characters
EXIT_RE = re.compile(r"Command exited with code (-?\d+)\s*\Z")
READ_NOTICE_RE = re.compile(
    r"\n\n(?:\[(?:Showing lines \d+-\d+ of \d+[^\]\n]*|\d+ more lines in file)"
    r"\. Use offset=\d+ to continue\.?\]"
    r"|\.\.\. \((?:Some lines were truncated to \d+ characters for display(?:\. )?)?"
    r"(?:\d+ more lines not shown\. Use offset=\d+ to continue reading)?\))\Z"
)
READ_UNREADABLE = ("[Line ", "Read image file [")  # over-long first line, image: no file text
M = TypeVar("M", bound=BaseModel)
_TEMPLATES: dict[type[BaseModel], dict[str, Any]] = {
    cls: {
        name: None if info.is_required() else info.get_default(call_default_factory=True)
        for name, info in cls.model_fields.items()
    }
    for cls in (Event, SourcePos, Edit)
}
_new = object.__new__
_set_dict = object.__setattr__
# BaseModel's own slots, set through their descriptors (BaseModel.__setattr__ refuses: frozen)
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def construct(cls: type[M], fields: dict[str, Any]) -> M:
    """``cls.model_construct(**fields)`` minus its per-call default lookup (~20 us per Event;
    this takes 0.6 us), for values this module type-checked: the assignments
    ``model_construct`` ends with. Shared defaults are immutable but ``Event.arguments``
    (``emit`` sets it); tests re-validate all."""
    model = _new(cls)
    _set_dict(model, "__dict__", {**_TEMPLATES[cls], **fields})
    _set_fields_set(model, set(fields))
    _set_extra(model, None)
    _set_private(model, None)
    return model


def source_pos(file: str, line: int) -> SourcePos:
    """``SourcePos(file=file, line=line)`` for a str and an int, built as :func:`construct`
    does without its defaults merge (one per line of a session file)."""
    pos = _new(SourcePos)
    _set_dict(pos, "__dict__", {"file": file, "line": line})
    _set_fields_set(pos, {"file", "line"})
    _set_extra(pos, None)
    _set_private(pos, None)
    return pos


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


def normalise(fields: dict[str, Any], tool_kind: str, args: dict[str, Any]) -> None:
    """Replay fields for pi's tools: read{path,offset,limit} write{path,content}
    edit{path,oldText,newText} or edit{path,edits:[{oldText,newText}]} bash{command,timeout}."""
    if tool_kind == "shell":
        fields["command"] = str_or_none(args.get("command"))
        return
    fields["path"] = str_or_none(args.get("path"))
    offset = args.get("offset")
    if tool_kind == "read" and isinstance(offset, int | float) and not isinstance(offset, bool):
        fields["offset"] = int(offset)
    elif tool_kind == "write":
        fields["content"] = str_or_none(args.get("content"))
    elif tool_kind == "edit":
        fields["edits"] = edits_of(args)


def edits_of(args: dict[str, Any]) -> tuple[Edit, ...]:
    """Both shapes, merged as pi's ``prepareEditArguments`` does (the legacy pair goes last)."""
    items = args.get("edits")
    if isinstance(items, str):  # some models send the array as a JSON string
        try:
            items = orjson.loads(items)
        except orjson.JSONDecodeError:
            items = None
    pairs = list(items) if isinstance(items, list) else []
    if "oldText" in args or "newText" in args:
        pairs.append({"oldText": args.get("oldText"), "newText": args.get("newText")})
    edits = []
    for pair in pairs:
        old, new = (
            (pair.get("oldText"), pair.get("newText")) if isinstance(pair, dict) else (None, None)
        )
        if not isinstance(old, str) or not isinstance(new, str):
            return ()  # pi rejects the whole call, so nothing was changed
        edits.append(construct(Edit, {"old": old, "new": new}))
    return tuple(edits)


def exit_code_of(text: str, is_error: bool) -> int | None:
    if not is_error:
        return 0
    match = EXIT_RE.search(text, max(0, len(text) - TAIL))
    return int(match.group(1)) if match else None  # aborted / timed out: no exit code


def read_content(fields: dict[str, Any], args: dict[str, Any], details: object) -> None:
    """Add the file text of a read result and whether it is only part of the file."""
    text: str = fields["text"]
    if text.startswith(READ_UNREADABLE):
        fields["partial"] = True
        return
    partial = args.get("offset") is not None or args.get("limit") is not None
    match = READ_NOTICE_RE.search(text, max(0, len(text) - TAIL))
    if match:
        text, partial = text[: match.start()], True
    truncation = details.get("truncation") if isinstance(details, dict) else None
    if isinstance(truncation, dict) and truncation.get("truncated") is True:
        partial = True
    fields["content"] = text
    fields["partial"] = partial
