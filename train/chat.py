"""Chat messages between OpenAI wire format and a model's chat template.

Harnesses send OpenAI messages (content as text or a list of parts, tool-call arguments as JSON
text); chat templates want plain text content and argument objects. Model text is parsed back
into an assistant message with ``tool_calls`` (Qwen2 style: ``<tool_call>{json}</tool_call>``).
"""

from __future__ import annotations

import json
import re
from typing import Any

TOOL_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)


def text_of(content: Any) -> str:
    """Plain text of an OpenAI message content (a string or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return "".join(str(p) for p in parts)
    return str(content)


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            return raw
    return raw


def for_template(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages a chat template can render: text content, developer → system, parsed args."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = "system" if message.get("role") == "developer" else message.get("role", "user")
        item: dict[str, Any] = {"role": role, "content": text_of(message.get("content"))}
        calls = message.get("tool_calls") or []
        if calls:
            item["tool_calls"] = [
                {
                    "id": c.get("id", ""),
                    "type": "function",
                    "function": {
                        "name": c.get("function", {}).get("name", ""),
                        "arguments": _arguments(c.get("function", {}).get("arguments")),
                    },
                }
                for c in calls
            ]
        if message.get("tool_call_id"):
            item["tool_call_id"] = message["tool_call_id"]
        out.append(item)
    return out


def parse_reply(text: str, call_prefix: str) -> dict[str, Any]:
    """An assistant message from model text: tool calls pulled out, the rest as content."""
    calls: list[dict[str, Any]] = []
    for i, match in enumerate(TOOL_CALL.finditer(text)):
        try:
            data = json.loads(match.group(1))
        except json.JSONDecodeError:
            continue
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            continue
        args = data.get("arguments", {})
        calls.append(
            {
                "id": f"{call_prefix}_{i}",
                "type": "function",
                "function": {"name": data["name"], "arguments": json.dumps(args)},
            }
        )
    content = TOOL_CALL.sub("", text).strip() if calls else text
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = calls
    elif message["content"] is None:
        message["content"] = ""
    return message
