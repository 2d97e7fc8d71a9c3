"""Which lines of a Claude Code transcript are the conversation.

The lines form a DAG through ``parentUuid`` (``logicalParentUuid`` across a compaction
boundary); the conversation is the path from the last non-sidechain message back to the root
(:func:`main_path`). :func:`select` keeps that path's lines, the other lines of each streamed
API message and parallel tool results, and the prompts typed while the agent worked
(``queued_command`` attachments hanging off the path), and counts what it skipped.
"""

from __future__ import annotations

import bisect
from typing import Any

from trajforge.reconstruct.formats.claude_code_tools import queued_prompt, str_or_none
from trajforge.records import ParseWarning

Record = tuple[int, dict[str, Any]]
"""A transcript line: (1-based line number, its JSON object)."""


def uuid_of(record: dict[str, Any]) -> str | None:
    """The line's ``uuid`` (None: none)."""
    return str_or_none(record.get("uuid"))


def message_id(record: dict[str, Any]) -> str | None:
    """The API message's id a streamed line belongs to (None: none)."""
    return (
        str_or_none(record["message"].get("id"))
        if isinstance(record.get("message"), dict)
        else None
    )


def blocks_of(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The content blocks of a user / assistant line (a string is one text block)."""
    message = record.get("message")  # none on an attachment line
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def main_path(records: list[Record], source: str, warnings: list[ParseWarning]) -> set[str]:
    """uuids on the path from the last non-sidechain message back to the root.

    Hook progress and system records form chains of their own off a tool call, and the next
    message may hang off the end of such a chain; the conversation then went on from the last
    message written before it, so a message whose parent is not a message continues from that
    one (a real fork's parent is a message).
    """
    nodes: dict[str, Record] = {}
    for rec in reversed(records):  # the first line with a uuid wins
        nodes[uuid_of(rec[1]) or ""] = rec
    conv = [
        r
        for r in records
        if r[1]["type"] in ("user", "assistant") and not r[1].get("isSidechain") and uuid_of(r[1])
    ]
    lines = [line for line, _ in conv]
    on_path: set[str] = set()
    current = uuid_of(conv[-1][1]) if conv else None
    while current is not None and current not in on_path:
        on_path.add(current)
        line, node = nodes[current]
        parent = node.get("parentUuid") or node.get("logicalParentUuid")
        if not isinstance(parent, str):
            break
        if parent not in nodes:
            message = f"parentUuid {parent!r} not found: the conversation starts here"
            warnings.append(ParseWarning(file=source, line=line, message=message))
            break
        if nodes[parent][1]["type"] not in ("user", "assistant"):
            at = bisect.bisect_left(lines, line)  # the last message before this one
            parent = uuid_of(conv[at - 1][1]) if at > 0 else None
        current = parent
    return on_path


def select(records: list[Record], on_path: set[str] | None) -> tuple[list[Record], dict[str, int]]:
    """Path records plus streamed siblings and parallel tool results, in file order."""
    conv = [
        r for _, r in records if r["type"] in ("user", "assistant") and not r.get("isSidechain")
    ]
    chosen = {id(r) for r in conv if on_path is None or uuid_of(r) in on_path}
    msg_ids = {message_id(r) for r in conv if id(r) in chosen} - {None}
    chosen |= {id(r) for r in conv if r["type"] == "assistant" and message_id(r) in msg_ids}
    tool_ids = {
        b.get("id")
        for r in conv
        if id(r) in chosen and r["type"] == "assistant"
        for b in blocks_of(r)
        if b.get("type") == "tool_use"
    }
    for rec in conv:
        results = [b.get("tool_use_id") for b in blocks_of(rec) if b.get("type") == "tool_result"]
        if rec["type"] == "user" and results and all(r in tool_ids for r in results):
            chosen.add(id(rec))
    selected: list[Record] = []
    skipped: dict[str, int] = {}
    seen: set[str] = set()
    kept = {uuid_of(r) for r in conv if id(r) in chosen} - {None}
    for line, rec in records:
        if _typed_mid_turn(rec, kept, on_path is None):
            selected.append((line, rec))
        elif rec["type"] not in ("user", "assistant"):
            count(skipped, rec["type"])
        elif rec.get("isSidechain"):
            count(skipped, "sidechain")
        elif id(rec) not in chosen or (uuid_of(rec) or f"line{line}") in seen:
            count(skipped, "off_path")
        else:
            selected.append((line, rec))
            seen.add(uuid_of(rec) or f"line{line}")
    return selected, skipped


def _typed_mid_turn(rec: dict[str, Any], kept: set[str | None], linear: bool) -> bool:
    """A prompt typed while the agent worked, folded into a turn of the conversation kept (its
    parent is; a transcript without uuids is all one line)."""
    if queued_prompt(rec) is None or rec.get("isSidechain"):
        return False
    return linear or rec.get("parentUuid") in kept


def count(counts: dict[str, int], key: str) -> None:
    """One more skipped line of ``key``."""
    counts[key] = counts.get(key, 0) + 1
