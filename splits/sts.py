"""``trajforge export sts``: sessions as the Hub's Session Trace Simple Format (STS-Format).

One JSONL file per session, as the Hub's session-trace viewer renders it
(https://huggingface.co/docs/hub/session-traces-format): a header line ``{"type": "session",
"harness", "id", "name"}`` — the harness the session came from (pi, opencode, hermes,
claude-code, codex, ...), its id, and its first request as the title — then one ``{"type":
"message", "message": {...}}`` envelope a line. A user or assistant event is a message with its
``role`` and ``content`` (assistant messages carry the session's ``model`` when known); the
tool calls that follow an assistant message attach to it as ``toolCalls`` [{id, function
{name, arguments (a JSON string)}}] (a call with no assistant message just before it opens one
message with empty content); each tool result is a ``tool`` message with the ``toolCallId``
it answers (a result whose call the session does not hold, such as a harness's synthetic
read, has none). Events carry no timestamps or reasoning, so messages have none. Every text passes
through the scrubber first.

So that ``trajforge reconstruct`` reads an export back to the same events (the ``sts``
format), a ``trajforge`` key (extra metadata, which the spec allows and viewers ignore) keeps
what the core fields do not carry: on the header the session's cwd, model, harness version,
git info and start; on a message the fields trajforge normalised for its event (``event``:
tool kind, path, content, edits, command, exit code, error flag, ...) and its calls
(``calls``, by tool call id).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import orjson

from trajforge import __version__
from trajforge.records import Event, Session
from trajforge.scrub import Scrubber
from trajforge.splits.atif import ExportOutcome, export_sessions, file_name, turn_marks

TITLE_CHARS = 80
Json = dict[str, Any]


def _kept(event: Event, core: Json, scrub: Scrubber) -> Json:
    """The event's normalised fields the core STS fields (``core``, scrubbed) do not carry."""
    whole = scrub.value(event.model_dump(mode="json", exclude={"kind", "source"}))
    rest = event.model_dump(mode="json", exclude={"kind", "source", *core}, exclude_defaults=True)
    kept = {key: whole[key] for key in rest}
    kept.update({key: whole[key] for key in core if whole[key] != core[key]})
    return kept


class _Builder:
    def __init__(self, session: Session, scrub: Scrubber) -> None:
        self.model = session.header.model
        self.scrub = scrub
        self.messages: list[Json] = []
        self.calls: set[str] = set()

    def _message(self, role: str, event: Event | None) -> Json:
        text = self.scrub.text(event.text) if event is not None else ""
        message: Json = {"role": role, "content": text}
        if role == "assistant" and self.model:
            message["model"] = self.model
        kept = _kept(event, {"text": text}, self.scrub) if event is not None else {}
        if kept:
            message["trajforge"] = {"event": kept}
        self.messages.append(message)
        return message

    def add(self, index: int, event: Event) -> None:
        if event.kind == "user":
            self._message("user", event)
        elif event.kind == "assistant":
            self._message("assistant", event)
        elif event.kind == "tool_call":
            self._call(index, event)
        else:
            message = self._message("tool", event)
            if event.call_id in self.calls:  # a result without its call (a synthetic read) has none
                message["toolCallId"] = event.call_id

    def _call(self, index: int, event: Event) -> None:
        last = self.messages[-1] if self.messages else None
        message = last if last is not None and last["role"] == "assistant" else None
        message = message or self._message("assistant", None)
        call_id = event.call_id or f"call-{index}"
        self.calls.add(call_id)
        name = event.tool or event.tool_kind or "unknown"
        args = self.scrub.value(dict(event.arguments))
        message.setdefault("toolCalls", []).append(
            {"id": call_id, "function": {"name": name, "arguments": _json(args)}}
        )
        core = {"text": "", "tool": name, "call_id": call_id, "arguments": args}
        kept = _kept(event, core, self.scrub)
        if kept:
            mine = message.setdefault("trajforge", {})
            mine.setdefault("calls", {})[call_id] = kept


def _json(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _title(session: Session, scrub: Scrubber) -> str | None:
    request = next((e.text for e in session.events if e.kind == "user" and e.text.strip()), "")
    line = next((s.strip() for s in request.splitlines() if s.strip()), "")
    if not line:
        return None
    line = scrub.text(line)
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


def _header(session: Session, scrub: Scrubber) -> Json:
    header = session.header
    head: Json = {
        "type": "session",
        "harness": header.harness or "unknown",  # both required, neither may be empty
        "id": header.session_id or header.content_hash[:16],
    }
    title = _title(session, scrub)
    if title:
        head["name"] = title
    mine: Json = {
        "exported_by": f"trajforge {__version__}",
        "source_path": header.source_path,
        "source_sha256": header.content_hash,
    }
    for key in ("harness_version", "model", "started_at"):
        if getattr(header, key):
            mine[key] = getattr(header, key)
    if header.cwd:
        mine["cwd"] = scrub.text(header.cwd)
    if header.git is not None:
        mine["git"] = scrub.value(header.git.model_dump(mode="json", exclude_none=True))
    mine.update(turn_marks(session, scrub))
    head["trajforge"] = mine
    return head


def trace(session: Session, scrub: Scrubber) -> list[Json]:
    """The STS lines of one session: its header, then one message envelope per message."""
    builder = _Builder(session, scrub)
    for index, event in enumerate(session.events):
        builder.add(index, event)
    envelopes = [{"type": "message", "message": m} for m in builder.messages]
    return [_header(session, scrub), *envelopes]


def _write(session: Session, target: Path, scrub: Scrubber) -> str:
    name = file_name(session, ".jsonl")
    lines = [orjson.dumps(line, option=orjson.OPT_NON_STR_KEYS) for line in trace(session, scrub)]
    (target / name).write_bytes(b"\n".join(lines) + b"\n")
    return name


def export(paths: Sequence[Path], target: Path) -> Iterator[ExportOutcome]:
    """Write one STS JSONL file per session found in ``paths``; one outcome per input."""
    return export_sessions(paths, target, _write)
