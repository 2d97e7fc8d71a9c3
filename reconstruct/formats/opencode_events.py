"""Normalise opencode session records (messages and parts) into trajforge events.

Tools follow opencode's ``src/tool/*.ts``: read output is ``<path>..</path><type>file</type>
<content>`` with ``N: `` line prefixes (older versions: ``<file>`` and ``00001| ``) and a
closing ``(End of file - total N lines)`` or a ``Use offset=N`` notice; bash records its exit
status in ``state.metadata.exit`` (a non-zero exit is still status ``completed``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from trajforge.records import CutOff, Edit, Event, ParseWarning, Session, SessionHeader, SourcePos

HARNESS = "opencode"
TOOL_KINDS = {
    "read": "read",
    "write": "write",
    "edit": "edit",
    "multiedit": "edit",
    "patch": "patch",
    "apply_patch": "patch",
    "bash": "shell",
}
READ_LINE = re.compile(r"(\d+)(?:: |\| ?|:$)(.*)")
LINE_CUT = re.compile(r"\.\.\. \(line truncated to \d+ chars\)\Z")
READ_BODY = re.compile(r"<(content|file)>\n?(.*)\n</\1>", re.DOTALL)
READ_MORE = ("(Showing lines", "(Output capped", "(File has more lines")
Json = dict[str, Any]


@dataclass
class RawMessage:
    info: Json
    parts: list[tuple[SourcePos, Json]] = field(default_factory=list)


@dataclass
class RawSession:
    info: Json
    source: str
    content_hash: str = ""
    messages: list[RawMessage] = field(default_factory=list)
    warnings: list[ParseWarning] = field(default_factory=list)


def created_ms(info: Json) -> int:
    """Creation time in epoch milliseconds (0 when unknown)."""
    created = _dict(info.get("time")).get("created")
    return int(created) if isinstance(created, int | float) else 0


def _completed_ms(info: Json) -> int:
    """When an assistant message finished (0: unknown): a user message created before then was
    queued while the agent worked, and opencode's loop went on with it."""
    done = _dict(info.get("time")).get("completed")
    return int(done) if isinstance(done, int | float) else 0


def build_session(raw: RawSession) -> Session:
    """Normalise a session's messages and parts into events."""
    events: list[Event] = []
    cut_offs: list[CutOff] = []
    steers: list[int] = []
    skipped: Counter[str] = Counter()
    running_until = 0  # when the last assistant message completed (ms; 0: unknown)
    for message in raw.messages:
        role = message.info.get("role")
        if role == "user":
            texts = _user_events(message, skipped)
            if texts and 0 < created_ms(message.info) < running_until:  # sent while it worked
                steers.append(len(events))
            running_until = 0
            events.extend(texts)
        elif role == "assistant" and message.info.get("summary") is not True:
            running_until = _completed_ms(message.info)
            events.extend(_assistant_events(message, skipped))
            if (failure := _failure(message.info.get("error"))) is not None:
                cut_offs.append(CutOff(after=len(events) - 1, failure=failure))
        else:
            skipped["summary-message" if role == "assistant" else f"message:{role}"] += 1
    return Session(
        header=_header(raw),
        events=tuple(events),
        warnings=tuple(raw.warnings),
        skipped=dict(skipped),
        cut_offs=tuple(cut_offs),
        steers=tuple(steers),
    )


def _header(raw: RawSession) -> SessionHeader:
    info = raw.info
    created = created_ms(info)
    return SessionHeader(
        harness=HARNESS,
        session_id=str(info.get("id") or raw.content_hash[:16]),
        source_path=raw.source,
        content_hash=raw.content_hash,
        harness_version=_str(info.get("version")),
        model=_model(raw),
        cwd=_str(info.get("directory")),
        started_at=datetime.fromtimestamp(created / 1000, tz=UTC).isoformat() if created else None,
    )


def _dict(value: Any) -> Json:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _model(raw: RawSession) -> str | None:
    model = raw.info.get("model")
    candidates: list[tuple[Any, Any]] = []
    if isinstance(model, dict):
        candidates.append((model.get("providerID"), model.get("id") or model.get("modelID")))
    for message in raw.messages:
        info = message.info
        nested = _dict(info.get("model"))
        candidates.append((info.get("providerID"), info.get("modelID")))
        candidates.append((nested.get("providerID"), nested.get("modelID")))
    for provider, model_id in candidates:
        if isinstance(model_id, str) and model_id:
            return f"{provider}/{model_id}" if isinstance(provider, str) and provider else model_id
    return None


def _user_events(message: RawMessage, skipped: Counter[str]) -> list[Event]:
    texts: list[tuple[SourcePos, str]] = []
    for pos, part in message.parts:
        kind = part.get("type")
        if kind == "text" and not part.get("synthetic") and not part.get("ignored"):
            texts.append((pos, str(part.get("text", ""))))
        else:
            skipped["synthetic-text" if kind == "text" else str(kind)] += 1
    if not texts:
        return []
    return [Event(kind="user", source=texts[0][0], text="\n".join(t for _, t in texts))]


def _assistant_events(message: RawMessage, skipped: Counter[str]) -> list[Event]:
    events: list[Event] = []
    for pos, part in message.parts:
        kind = part.get("type")
        if kind == "text" and not part.get("synthetic"):
            events.append(Event(kind="assistant", source=pos, text=str(part.get("text", ""))))
        elif kind == "tool" and isinstance(part.get("state"), dict):
            events.extend(tool_events(part, pos))
        else:
            skipped[str(kind)] += 1
    return events


def _failure(error: object) -> str | None:
    """opencode's ``info.error`` of a cut-off message (``{"name": "MessageAbortedError",
    "data": {"message": "The operation was aborted."}}``) as ``name: message``."""
    if not isinstance(error, dict):
        return None
    name, said = _str(error.get("name")), _str(_dict(error.get("data")).get("message"))
    return ": ".join(part for part in (name, said) if part) or None


def tool_events(part: Json, pos: SourcePos) -> list[Event]:
    """The tool_call event of a tool part, plus its tool_result once it has finished."""
    tool = str(part.get("tool", ""))
    state = part["state"]
    args = _dict(state.get("input"))
    kind = TOOL_KINDS.get(tool, "other")
    call_id = str(part.get("callID") or part.get("id") or f"opencode-{pos.line}")
    common: Json = {"source": pos, "tool": tool, "tool_kind": kind, "call_id": call_id}
    events = [Event(kind="tool_call", arguments=args, **common, **_normalised(tool, args))]
    status = state.get("status")
    if status == "completed":
        events.append(_result(tool, state, args, common))
    elif status == "error":
        events.append(
            Event(
                kind="tool_result",
                text=str(state.get("error", "")),
                is_error=True,
                path=_str(args.get("filePath")),
                **common,
            )
        )
    return events


def _normalised(tool: str, args: Json) -> Json:
    path = _str(args.get("filePath"))
    if tool == "read":
        offset = args.get("offset")
        return {"path": path, "offset": int(offset) if isinstance(offset, int | float) else None}
    if tool == "write":
        return {
            "path": path,
            "content": args.get("content") if isinstance(args.get("content"), str) else None,
        }
    if tool == "edit":
        return {"path": path, "edits": _edits([args])}
    if tool == "multiedit":
        edits = args.get("edits")
        return {"path": path, "edits": _edits(edits if isinstance(edits, list) else [])}
    if tool in ("patch", "apply_patch"):
        text = args.get("patchText") or args.get("patch") or ""
        text = text if isinstance(text, str) else ""
        fmt = "v4a" if text.lstrip().startswith("*** Begin Patch") else "unified"
        return {"patch": text, "patch_format": fmt}
    if tool == "bash":
        return {"command": _str(args.get("command")), "cwd": _str(args.get("workdir"))}
    return {}


def _edits(items: list[Any]) -> tuple[Edit, ...]:
    return tuple(
        Edit(old=e["oldString"], new=e["newString"], replace_all=bool(e.get("replaceAll")))
        for e in items
        if isinstance(e, dict)
        and isinstance(e.get("oldString"), str)
        and isinstance(e.get("newString"), str)
    )


def _result(tool: str, state: Json, args: Json, common: Json) -> Event:
    output = str(state.get("output", ""))
    metadata = _dict(state.get("metadata"))
    if tool == "bash":
        code = metadata.get("exit")
        exit_code = code if isinstance(code, int) and not isinstance(code, bool) else None
        return Event(kind="tool_result", text=output, exit_code=exit_code, **common)
    if tool == "read":
        content, partial = read_content(output)
        partial = partial or metadata.get("truncated") is True
        ranged = args.get("offset") not in (None, 1) or args.get("limit") is not None
        return Event(
            kind="tool_result",
            text=output,
            path=_str(args.get("filePath")),
            content=content,
            partial=partial or (content is not None and ranged),
            **common,
        )
    return Event(kind="tool_result", text=output, path=_str(args.get("filePath")), **common)


def read_content(output: str) -> tuple[str | None, bool]:
    """File text of a read tool output without line numbers, and whether it is partial.

    None when the output is not a file listing (a directory, an image, an error text).
    Versions up to 1.1 split the file on newlines (a final newline shows as a last, empty
    numbered line); later ones read lines, so the final newline is implied.
    """
    body = READ_BODY.search(output)
    if body is None:
        return None, False
    lines = body.group(2).split("\n")
    partial = False
    while lines and (lines[-1] == "" or lines[-1].startswith("(")):
        footer = lines.pop()
        partial = partial or footer.startswith(READ_MORE)
    text_lines: list[str] = []
    for line in lines:
        match = READ_LINE.fullmatch(line)
        if match is None:
            return None, False
        partial = partial or LINE_CUT.search(match.group(2)) is not None
        text_lines.append(match.group(2))
    content = "\n".join(text_lines)
    if text_lines and text_lines[-1] != "":
        content += "\n"
    return content, partial
