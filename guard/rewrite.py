"""Rewrite chat-completion responses so blocked tool calls never reach the harness.

Non-streaming: blocked calls are dropped from ``message.tool_calls`` and a notice is appended
to the message text. Streaming: tool-call deltas are held back until the choice finishes, then
the allowed calls are re-emitted whole (re-indexed) and each blocked call becomes a notice in a
content delta; when nothing is left to run, ``finish_reason`` becomes ``stop``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trajforge.protocols import GuardDecision

Json = dict[str, Any]
Decide = Callable[[str, str, str], GuardDecision]
"""(call id, tool name, raw JSON arguments) → decision."""


def notice(name: str, decision: GuardDecision) -> str:
    """The text the harness sees instead of a blocked call."""
    return (
        f"[trajforge guard] The tool call `{name}` was blocked and not executed "
        f"(rule {decision.rule}, bundle {decision.bundle}): {decision.reason}"
    )


def _split(calls: list[Json], decide: Decide) -> tuple[list[Json], list[str]]:
    allowed: list[Json] = []
    notices: list[str] = []
    for call in calls:
        fn = call.get("function") or {}
        name = str(fn.get("name", ""))
        decision = decide(str(call.get("id", "")), name, str(fn.get("arguments", "") or ""))
        if decision.decision == "block":
            notices.append(notice(name, decision))
        else:
            allowed.append(call)
    return allowed, notices


def rewrite_completion(body: Json, decide: Decide) -> Json:
    """A non-streaming completion with blocked tool calls replaced by notices."""
    for choice in body.get("choices") or []:
        message = choice.get("message") or {}
        calls = message.get("tool_calls")
        if not calls:
            continue
        allowed, notices = _split(calls, decide)
        if not notices:
            continue
        text = message.get("content") or ""
        message["content"] = "\n\n".join([t for t in (text, *notices) if t])
        if allowed:
            message["tool_calls"] = allowed
        else:
            message.pop("tool_calls", None)
            choice["finish_reason"] = "stop"
    return body


@dataclass
class _Pending:
    calls: dict[int, Json] = field(default_factory=dict)


@dataclass
class StreamRewriter:
    """Feed upstream SSE chunks in order; get the chunks to send on."""

    decide: Decide
    pending: dict[int, _Pending] = field(default_factory=dict)
    template: Json = field(default_factory=dict)

    def feed(self, chunk: Json) -> list[Json]:
        """Chunks to forward for one upstream chunk."""
        self.template = {k: v for k, v in chunk.items() if k not in ("choices", "usage")}
        out_choices: list[Json] = []
        extra: list[Json] = []
        for choice in chunk.get("choices") or []:
            index = int(choice.get("index", 0))
            delta = dict(choice.get("delta") or {})
            for part in delta.pop("tool_calls", None) or []:
                self._hold(index, part)
            finish = choice.get("finish_reason")
            if finish is not None and index in self.pending:
                flushed, all_blocked = self._flush(index)
                extra.extend(flushed)
                if all_blocked and finish == "tool_calls":
                    finish = "stop"
            if delta or finish is not None:
                out_choices.append({**choice, "delta": delta, "finish_reason": finish})
        result = [c for c in extra]
        if out_choices or "usage" in chunk:
            result.append({**chunk, "choices": out_choices})
        return result

    def finish(self) -> list[Json]:
        """Chunks for calls still held when the stream ends without a finish_reason."""
        out: list[Json] = []
        for index in list(self.pending):
            out.extend(self._flush(index)[0])
        return out

    def _hold(self, index: int, part: Json) -> None:
        calls = self.pending.setdefault(index, _Pending()).calls
        slot = calls.setdefault(
            int(part.get("index", 0)),
            {"id": "", "type": "function", "function": {"name": "", "arguments": ""}},
        )
        if part.get("id"):
            slot["id"] = part["id"]
        fn = part.get("function") or {}
        slot["function"]["name"] += fn.get("name") or ""
        slot["function"]["arguments"] += fn.get("arguments") or ""

    def _flush(self, index: int) -> tuple[list[Json], bool]:
        held = self.pending.pop(index)
        calls = [held.calls[i] for i in sorted(held.calls)]
        allowed, notices = _split(calls, self.decide)
        out: list[Json] = []
        for i, call in enumerate(allowed):
            delta = {"tool_calls": [{"index": i, **call}]}
            out.append(self._chunk(index, delta))
        if notices:
            out.append(self._chunk(index, {"content": "\n\n" + "\n\n".join(notices)}))
        return out, not allowed

    def _chunk(self, index: int, delta: Json) -> Json:
        return {
            **self.template,
            "choices": [{"index": index, "delta": delta, "finish_reason": None}],
        }
