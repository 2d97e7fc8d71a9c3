"""Claude Code tool results → normalised fields: exit codes, read content, edits."""

from __future__ import annotations

import re
from typing import Any

from trajforge.records import (
    Edit,
)

REMINDER_RE = re.compile(r"\s*<system-reminder>.*?</system-reminder>\s*", re.DOTALL)
EXIT_RE = re.compile(r"\AExit code (-?\d+)")
LINE_PREFIX_RE = re.compile(r"\A\s*\d+(?:→|\t)(.*)\Z", re.DOTALL)
EMPTY_FILE_NOTE = "the file exists but the contents are empty"


def result_text(content: object) -> str:
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    return "\n".join(
        str(b["text"])
        for b in blocks
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def strip_line_numbers(text: str) -> str | None:
    """File text from Read output (``     N→line`` or ``     N<TAB>line``), or None."""
    text = REMINDER_RE.sub("\n", text).strip("\n")
    if EMPTY_FILE_NOTE in text or not text:
        return ""
    lines: list[str] = []
    for raw in text.split("\n"):
        match = LINE_PREFIX_RE.match(raw)
        if match is None:
            return None
        lines.append(match.group(1))
    return "\n".join(lines) + "\n"


def str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def edits_of(args: dict[str, Any], name: str) -> tuple[Edit, ...]:
    raw = args.get("edits") if name == "MultiEdit" else [args]
    if not isinstance(raw, list):
        return ()
    return tuple(
        Edit(old=e["old_string"], new=e["new_string"], replace_all=bool(e.get("replace_all")))
        for e in raw
        if isinstance(e, dict)
        and isinstance(e.get("old_string"), str)
        and isinstance(e.get("new_string"), str)
    )


def shell_exit(text: str, is_error: bool, result: object) -> int | None:
    """``Exit code N`` on failures; 0 for a plain success; None when it never ran or was cut."""
    match = EXIT_RE.match(text)
    if match:
        return int(match.group(1))
    if is_error or (isinstance(result, dict) and result.get("interrupted")):
        return None  # refused by the user / permissions / a hook, timed out or interrupted
    return 0


def read_content(text: str, args: dict[str, Any], result: object) -> dict[str, Any]:
    """``content`` and ``partial`` for a Read result."""
    ranged = args.get("offset") is not None or args.get("limit") is not None
    file = result.get("file") if isinstance(result, dict) else None
    if isinstance(file, dict) and isinstance(file.get("content"), str):
        start, num, total = (
            int_or_none(file.get(k)) for k in ("startLine", "numLines", "totalLines")
        )
        cut = (start or 1) > 1 or (num is not None and total is not None and num < total)
        return {"content": file["content"], "partial": cut or (ranged and total is None)}
    content = strip_line_numbers(text)
    if content is None:
        return {}
    return {"content": content, "partial": ranged}


def queued_prompt(record: dict[str, Any]) -> str | None:
    """What the person typed while the agent worked, when ``record`` is that: Claude Code folds
    such a message into the running turn as a ``queued_command`` attachment (its text in
    ``prompt``, a string or text blocks) and writes no ``user`` line for it. None for any other
    line, and for queued commands that are not a person's prompt (a task notification, a
    message from another session, meta text)."""
    attachment = record.get("attachment")
    if record.get("type") != "attachment" or not isinstance(attachment, dict):
        return None
    if attachment.get("type") != "queued_command" or attachment.get("isMeta"):
        return None
    origin = attachment.get("origin")
    kind = origin.get("kind", "human") if isinstance(origin, dict) else "human"
    if attachment.get("commandMode", "prompt") != "prompt" or kind != "human":
        return None
    prompt = attachment.get("prompt")
    if isinstance(prompt, list):
        parts = [b.get("text") if isinstance(b, dict) else b for b in prompt]
        prompt = "\n".join(p for p in parts if isinstance(p, str))
    return prompt if isinstance(prompt, str) and prompt.strip() else None
