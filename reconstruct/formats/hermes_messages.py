"""hermes OpenAI-style message lists → Sessions: session snapshots, gateway transcripts, exports.

Shapes from hermes-agent (Nous Research), all holding the messages the agent built
(``{"role": "user" | "assistant" | "tool", "content", "tool_calls": [{"id", "type": "function",
"function": {"name", "arguments": JSON text}}], "tool_call_id"}``):

- session snapshots ``~/.hermes/sessions/session_<id>.json``: ``{"session_id", "model",
  "session_start", "system_prompt", "messages"}`` (run_agent.py ``_save_session_log``);
- gateway transcripts ``~/.hermes/sessions/<session_id>.jsonl`` (gateway/session.py
  ``append_to_transcript`` before state.db replaced them): a first ``{"role": "session_meta",
  "tools", "model", "platform", "timestamp"}`` line for a fresh session, then each message as
  ``{**msg, "timestamp"}`` (ISO text; epoch seconds in later versions). A transcript rewritten by
  /retry, /undo or /compress starts with a message instead. No session id inside: the file name;
  no working directory: learned from file-tool results (``resolved_path``);
- ``hermes sessions export`` JSONL (hermes_cli/main.py → ``SessionDB.export_all``): one session
  row per line, ``{"id", "source", "model", "system_prompt", "started_at" (epoch seconds), ...,
  "messages": [message rows with "role", "content", "tool_calls" (decoded), "tool_call_id",
  "tool_name", "timestamp", ...]}``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from trajforge.reconstruct.formats.hermes_conversation import Builder, is_harness_notice
from trajforge.reconstruct.formats.hermes_tools import as_object, message_text
from trajforge.reconstruct.inputs import json_line, read_all
from trajforge.records import Session, SessionHeader, sha256_hex

CWD_LINE = re.compile(r"^Current working directory: (.+)$", re.M)
# The gateway writes json.dumps(message) and every agent message starts with "role"; the first
# line is session_meta, or (rewritten transcript) the user's first message.
GATEWAY_START = re.compile(rb'^\s*\{\s*"role"\s*:\s*"(?:session_meta|user)"\s*,')
# A sessions-table row: its first columns are id then source; system_prompt follows model.
EXPORT_START = re.compile(rb'^\s*\{\s*"id"\s*:\s*"[^"]*"\s*,\s*"source"\s*:\s*"')


def is_gateway(head: bytes) -> bool:
    """True for a gateway transcript: session_meta first, or a first message with a timestamp."""
    match = GATEWAY_START.match(head)
    if match is None:
        return False
    first = head.split(b"\n", 1)[0]
    return b'"session_meta"' in first[: match.end()] or b'"timestamp"' in first


def is_export(head: bytes) -> bool:
    """True for ``hermes sessions export`` output (a session row with its system prompt)."""
    return bool(EXPORT_START.match(head)) and b'"system_prompt"' in head


def _iso(value: Any) -> str | None:
    """ISO text as given, epoch seconds (state.db, later gateways) as UTC ISO."""
    if isinstance(value, str) and value:
        return value
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return datetime.fromtimestamp(value, UTC).isoformat()
    return None


def _assistant_message(build: Builder, msg: dict[str, Any], pos: int, label: str) -> None:
    build.message("assistant", message_text(msg.get("content")), pos)
    for k, call in enumerate(msg.get("tool_calls") or []):
        fn = call.get("function") if isinstance(call, dict) else None
        name = fn.get("name") if isinstance(fn, dict) else None
        args = as_object(fn.get("arguments", {})) if isinstance(fn, dict) else None
        if not isinstance(name, str) or not isinstance(args, dict):
            build.skipped["unreadable_tool_call"] += 1
            build.warn(f"{label}: unreadable tool call {k}", pos)
            continue
        call_id = call.get("id")
        given = call_id if isinstance(call_id, str) and call_id else f"hermes-{label}-{k}"
        build.call(name, args, given, pos)


def chat_message(build: Builder, msg: Any, pos: int, label: str) -> None:
    """One message at source position ``pos`` (``label`` names it in warnings)."""
    role = msg.get("role") if isinstance(msg, dict) else None
    if not isinstance(msg, dict) or not isinstance(role, str):
        build.skipped["malformed_message"] += 1
        build.warn(f"{label}: not a chat message", pos)
    elif role == "user" and is_harness_notice(message_text(msg.get("content"))):
        build.skipped["harness_notice"] += 1
    elif role == "user":
        build.message("user", message_text(msg.get("content")), pos)
    elif role == "assistant":
        _assistant_message(build, msg, pos, label)
    elif role == "tool":
        call_id = msg.get("tool_call_id")
        name = msg.get("tool_name") or msg.get("name")
        build.result(
            call_id if isinstance(call_id, str) else "",
            name if isinstance(name, str) else None,
            as_object(msg.get("content")),
            pos,
        )
    else:
        build.skipped[role] += 1


def snapshot_session(
    data: dict[str, Any], file: str, raw: bytes, line: int | None = None
) -> Session:
    """A snapshot document (events at their message index) or an export row at ``line``."""
    build = Builder(file, line or 1)
    for index, msg in enumerate(data["messages"], start=1):
        chat_message(build, msg, line or index, f"message {index}")
    prompt = data.get("system_prompt")
    found = CWD_LINE.search(prompt) if isinstance(prompt, str) else None
    digest = sha256_hex(raw)
    sid = data.get("session_id") or data.get("id")
    model = data.get("model")
    header = SessionHeader(
        harness="hermes",
        session_id=sid if isinstance(sid, str) and sid else digest[:16],
        source_path=file,
        content_hash=digest,
        model=model if isinstance(model, str) and model else None,
        cwd=found.group(1).strip() if found else build.cwd,
        started_at=_iso(data.get("session_start") or data.get("started_at")),
    )
    return build.session(header)


def gateway_session(path: Path) -> Session:
    """A gateway transcript: one session, its events at their line numbers."""
    raw = read_all(path)
    file = str(path)
    build = Builder(file, 1)
    meta: dict[str, Any] = {}
    first_stamp: Any = None
    for lineno, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        msg, problem = json_line(line)
        if problem is not None:  # damaged, or read with raw control characters
            build.warn(problem, lineno)
            if msg is None:
                continue
        if isinstance(msg, dict) and msg.get("role") == "session_meta":
            meta = meta or msg
            build.skipped["session_meta"] += 1
            continue
        if first_stamp is None and isinstance(msg, dict):
            first_stamp = msg.get("timestamp")
        chat_message(build, msg, lineno, f"line {lineno}")
    model = meta.get("model")
    name = path.name.removesuffix(".gz").removesuffix(".jsonl")
    header = SessionHeader(
        harness="hermes",
        session_id=name or sha256_hex(raw)[:16],
        source_path=file,
        content_hash=sha256_hex(raw),
        model=model if isinstance(model, str) and model else None,
        cwd=build.cwd,
        started_at=_iso(meta.get("timestamp") or first_stamp),
    )
    return build.session(header)
