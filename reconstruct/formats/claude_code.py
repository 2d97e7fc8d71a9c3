"""Reader for Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

Every line is a JSON object with a ``type``: ``user`` / ``assistant`` lines carry ``uuid``,
``parentUuid``, ``sessionId``, ``cwd``, ``version``, ``gitBranch``, ``isSidechain`` and an
Anthropic ``message``; ``summary``, ``system``, ``file-history-snapshot``,
``queue-operation`` ... are bookkeeping. The lines form a DAG through ``parentUuid``
(``logicalParentUuid`` across a compaction boundary). The conversation is the path from the
last non-sidechain line back to the root; rewinds and edited prompts leave earlier branches
off that path, and ``isSidechain`` lines (Task sub-agents) are never on it.

One API message is streamed as several lines sharing ``message.id`` (thinking, text and each
``tool_use`` on its own line, chained through ``parentUuid``); they are merged, and parallel
``tool_result`` lines hanging off any of them are kept. A user line's ``toolUseResult``
holds the structured result: ``file.content`` for Read (raw text, no ``     N→`` prefixes)
and ``originalFile`` (the whole file before the change) for Edit / MultiEdit / Write, which
is emitted as a read-like ``tool_result`` just before the edit's ``tool_call``. A message
typed while the agent worked is folded into the running turn as a ``queued_command``
``attachment`` line (no ``user`` line is written): it is a user event, one of the steers.
Bash failures read ``Exit code N`` with ``is_error``; refusals (user rejection, permission
denial, hook block) are errors whose command never ran, so their exit code is unknown.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from trajforge.errors import FormatError
from trajforge.reconstruct.formats.claude_code_path import (
    Record,
    blocks_of,
    count,
    main_path,
    message_id,
    select,
    uuid_of,
)
from trajforge.reconstruct.formats.claude_code_tools import (
    edits_of,
    int_or_none,
    queued_prompt,
    read_content,
    result_text,
    shell_exit,
    str_or_none,
)
from trajforge.reconstruct.inputs import file_hash, iter_json_lines, json_line
from trajforge.records import (
    CutOff,
    Event,
    GitInfo,
    ParseWarning,
    Session,
    SessionHeader,
    SourcePos,
)

log = logging.getLogger(__name__)

HARNESS = "claude-code"
TOOL_KINDS = {
    "Read": "read",
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Bash": "shell",
}
BOOKKEEPING = frozenset(
    {
        "summary",
        "system",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "attachment",
        "custom-title",
        "tag",
        "agent-name",
    }
)
SKIPPED_USER_PREFIXES = ("<command-", "<local-command-", "Caveat: ")
INTERRUPTED = "[Request interrupted"
"""Claude Code's user-role note that the person stopped the turn ("[Request interrupted by
user]", "… for tool use]"): kept as a ``CutOff``, not as the person's words."""


class ClaudeCodeFormat:
    """Claude Code session transcripts (``.jsonl``, one per session)."""

    name = "claude-code"

    def sniff(self, path: Path, head: bytes) -> bool:
        """True when one of the first complete lines is a Claude Code transcript line."""
        for raw in head.split(b"\n")[:20]:
            record, _ = json_line(raw)
            if isinstance(record, dict) and _is_distinctive(record):
                return True
        return False

    def parse(self, path: Path) -> Iterator[Session | ParseWarning]:
        """The file's main conversation path as one Session; bad lines become warnings."""
        source = str(path)
        records: list[Record] = []
        warnings: list[ParseWarning] = []
        for line, value, error in iter_json_lines(path):
            if error is not None:  # damaged, or read with raw control characters
                warnings.append(ParseWarning(file=source, line=line, message=error))
                if value is None:
                    continue
            if isinstance(value, dict) and _is_claude(value):
                records.append((line, value))
            else:
                message = "JSON record is not a Claude Code transcript line"
                warnings.append(ParseWarning(file=source, line=line, message=message))
        if not records and not warnings:
            yield ParseWarning(file=source, line=1, message="empty file: no Claude Code lines")
            return
        if not records:
            first = warnings[0]
            raise FormatError(
                f"{path}: not a Claude Code transcript (line {first.line}: {first.message})"
            )
        yield _build_session(path, records, warnings)


def _is_claude(record: dict[str, Any]) -> bool:
    kind = record.get("type")
    if kind in ("user", "assistant"):
        return isinstance(record.get("message"), dict)
    return kind in BOOKKEEPING or (isinstance(kind, str) and "sessionId" in record)


def _is_distinctive(record: dict[str, Any]) -> bool:
    """A line only Claude Code writes (``system`` or ``progress`` alone are too generic)."""
    kind = record.get("type")
    if kind in ("user", "assistant"):
        return (
            isinstance(record.get("message"), dict) and "uuid" in record and "sessionId" in record
        )
    if kind == "summary":
        return "leafUuid" in record
    if kind == "file-history-snapshot":
        return "snapshot" in record and "messageId" in record
    return kind == "queue-operation" and "sessionId" in record


def _build_session(path: Path, records: list[Record], warnings: list[ParseWarning]) -> Session:
    source = str(path)
    has_uuids = any(uuid_of(r[1]) for r in records if r[1]["type"] in ("user", "assistant"))
    # without uuids no DAG was recorded and the file order is the conversation
    on_path = main_path(records, source, warnings) if has_uuids else None
    selected, skipped = select(records, on_path)
    builder = _EventBuilder(source, skipped)
    builder.originals = _originals(selected)
    for line, rec in selected:
        builder.record(line, rec)
    return Session.model_construct(
        header=_header(path, records, selected, builder.model),
        events=tuple(builder.events),
        warnings=tuple(warnings),
        skipped=builder.skipped,
        cut_offs=tuple(builder.cut_offs),
        steers=tuple(builder.steers),
    )


def _first_str(records: list[Record], key: str) -> str | None:
    return next((r[key] for _, r in records if isinstance(r.get(key), str) and r[key]), None)


def _header(
    path: Path, records: list[Record], selected: list[Record], model: str | None
) -> SessionHeader:
    ordered = selected or records
    digest = file_hash(path)
    branch = _first_str(ordered, "gitBranch")
    session_id = _first_str(list(reversed(ordered)), "sessionId")
    return SessionHeader(
        harness=HARNESS,
        session_id=session_id or path.stem or digest[:16],
        source_path=str(path),
        content_hash=digest,
        harness_version=_first_str(ordered, "version"),
        model=model,
        cwd=_first_str(ordered, "cwd"),
        git=GitInfo(branch=branch) if branch else None,
        started_at=_first_str(records, "timestamp"),
    )


def _originals(selected: list[Record]) -> dict[str, tuple[int, str]]:
    """tool_use id → (line, file content before the change) from ``toolUseResult``."""
    found: dict[str, tuple[int, str]] = {}
    for line, rec in selected:
        result = rec.get("toolUseResult")
        blocks = [b for b in blocks_of(rec) if b.get("type") == "tool_result"]
        if rec["type"] != "user" or len(blocks) != 1 or not isinstance(result, dict):
            continue
        original = result.get("originalFile")
        call_id = blocks[0].get("tool_use_id")
        if isinstance(original, str) and isinstance(call_id, str):
            found[call_id] = (line, original)
    return found


class _EventBuilder:
    """Turns the selected user / assistant lines into Events."""

    def __init__(self, source: str, skipped: dict[str, int]) -> None:
        self.source = source
        self.skipped = skipped
        self.events: list[Event] = []
        self.cut_offs: list[CutOff] = []
        self.model: str | None = None
        self.calls: dict[str, tuple[str, str, dict[str, Any]]] = {}
        self.originals: dict[str, tuple[int, str]] = {}
        self.seen_blocks: dict[str, set[str]] = {}
        self.last_text_msg: str | None = None
        self.steers: list[int] = []

    def emit(self, line: int, **fields: Any) -> None:
        self.events.append(Event(source=SourcePos(file=self.source, line=line), **fields))
        self.last_text_msg = None

    def record(self, line: int, rec: dict[str, Any]) -> None:
        if (typed := queued_prompt(rec)) is not None:  # delivered into the running turn
            self.steers.append(len(self.events))
            self.emit(line, kind="user", text=typed)
        elif rec["type"] == "assistant":
            self.assistant(line, rec)
        elif rec.get("isMeta") or rec.get("isCompactSummary"):
            count(self.skipped, "user:meta")
        else:
            self.user(line, rec)

    def assistant(self, line: int, rec: dict[str, Any]) -> None:
        message = rec["message"]
        model = message.get("model")
        if self.model is None and isinstance(model, str) and not model.startswith("<"):
            self.model = model
        msg_id = message_id(rec) or f"line:{line}"
        seen = self.seen_blocks.setdefault(msg_id, set())
        for block in blocks_of(rec):
            key = orjson.dumps(block, option=orjson.OPT_SORT_KEYS).decode()
            if key in seen:
                continue  # the same block written again by a later streamed line
            seen.add(key)
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                self.assistant_text(line, msg_id, block["text"])
            elif kind == "tool_use":
                self.tool_call(line, rec, block)
            else:
                count(self.skipped, f"block:{kind}")

    def assistant_text(self, line: int, msg_id: str, text: str) -> None:
        if not text.strip():
            return
        last = self.events[-1] if self.events else None
        if last is not None and self.last_text_msg == msg_id and last.kind == "assistant":
            self.events[-1] = last.model_copy(update={"text": f"{last.text}\n\n{text}"})
            return
        self.emit(line, kind="assistant", text=text)
        self.last_text_msg = msg_id

    def tool_call(self, line: int, rec: dict[str, Any], block: dict[str, Any]) -> None:
        name = str_or_none(block.get("name")) or "unknown"
        call_id = str_or_none(block.get("id")) or f"line{line}:{len(self.events)}"
        raw = block.get("input")
        args: dict[str, Any] = raw if isinstance(raw, dict) else {}
        kind = TOOL_KINDS.get(name, "other")
        self.calls[call_id] = (name, kind, args)
        fields: dict[str, Any] = {
            "tool": name,
            "tool_kind": kind,
            "call_id": call_id,
            "arguments": args,
        }
        file_path = str_or_none(args.get("file_path"))
        if kind in ("read", "write", "edit"):
            fields["path"] = file_path
        if kind == "read":
            fields["offset"] = int_or_none(args.get("offset"))
        elif kind == "write":
            fields["content"] = str_or_none(args.get("content"))
        elif kind == "edit":
            fields["edits"] = edits_of(args, name)
        elif kind == "shell":
            fields["command"] = str_or_none(args.get("command"))
            fields["cwd"] = str_or_none(rec.get("cwd"))
        if call_id in self.originals and kind in ("write", "edit"):
            orig_line, original = self.originals[call_id]
            self.emit(
                orig_line,
                kind="tool_result",
                tool=name,
                tool_kind="read",
                call_id=f"{call_id}:original",
                path=file_path,
                content=original,
            )
        self.emit(line, kind="tool_call", **fields)

    def user(self, line: int, rec: dict[str, Any]) -> None:
        texts: list[str] = []
        for block in blocks_of(rec):
            kind = block.get("type")
            if kind == "tool_result":
                self.tool_result(line, rec, block)
            elif kind == "text" and isinstance(block.get("text"), str):
                if block["text"].lstrip().startswith(INTERRUPTED):
                    failure = block["text"].strip().strip("[]")
                    self.cut_offs.append(CutOff(after=len(self.events) - 1, failure=failure))
                elif block["text"].lstrip().startswith(SKIPPED_USER_PREFIXES):
                    count(self.skipped, "user:command")
                else:
                    texts.append(block["text"])
            else:
                count(self.skipped, f"block:{kind}")
        if texts:
            self.emit(line, kind="user", text="\n".join(texts))

    def tool_result(self, line: int, rec: dict[str, Any], block: dict[str, Any]) -> None:
        call_id = str_or_none(block.get("tool_use_id"))
        name, kind, args = self.calls.get(call_id or "", (None, "other", {}))
        text = result_text(block.get("content"))
        is_error = bool(block.get("is_error"))
        result = rec.get("toolUseResult")
        fields: dict[str, Any] = {
            "tool": name,
            "tool_kind": kind,
            "call_id": call_id,
            "text": text,
            "is_error": is_error,
        }
        if kind in ("read", "write", "edit"):
            fields["path"] = str_or_none(args.get("file_path"))
        if kind == "shell":
            fields["exit_code"] = shell_exit(text, is_error, result)
        elif kind == "read" and not is_error:
            fields.update(read_content(text, args, result))
        self.emit(line, kind="tool_result", **fields)
