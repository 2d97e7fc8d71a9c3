"""What a messaging gateway wraps around a person's message, and the prompts it sends itself.

OpenClaw (whose sessions are pi session files) delivers a chat message as the user turn with
metadata around it: ``Conversation info (untrusted metadata):`` and ``Sender (untrusted
metadata):`` blocks of JSON, chat history ``(untrusted, for context)``, queued ``System: [time]
…`` event lines before it, a ``[Thu 2026-03-05 16:29 GMT+8]`` stamp in front of it and a
``[message_id: …]`` line after it. A scheduled job arrives as ``[cron:<id> <name>] <message>``
followed by ``Current time: …`` and "Return your summary as plain text; it will be delivered
automatically. …" (hermes' scheduler puts "[SYSTEM: You are running as a scheduled cron job.
…]" before it). All of that is the gateway's, not the person's: :func:`unwrap` cuts it, and
what is left is judged as any request.

Some turns are the gateway's own prompts on its own schedule — the heartbeat poll ("Read
HEARTBEAT.md if it exists …"), the pre-compaction memory flush, the greeting asked for after
``/new``. Nobody asked for the work that follows them: :func:`gateway_prompt` names them, and
triage drops each with the work it led to instead of folding it into the request before it.
"""

from __future__ import annotations

import re

ENVELOPE_BLOCKS = re.compile(
    r"""(?xm)
    ^[^\S\n]*(?:\[[^\]\n]{0,80}\d{4}-\d{2}-\d{2}[^\]\n]{0,40}\][^\S\n]*)?    # a stamp before it
    (?:[A-Z][^\n()]{0,80}\(untrusted[^\n()]{0,80}\)|Untrusted\ context\ \([^\n()]{0,120}\))
    [^\S\n]*:[^\S\n]*\n                                                    # the block's title
    (?:[^\S\n]*```[^\n]*\n(?:.*\n)*?[^\S\n]*```[^\S\n]*(?:\n|\Z)               # a fenced block
      |(?:[^\S\n]*\S[^\n]*(?:\n|\Z))*)                                        # or lines to a blank
    """
)
"""OpenClaw's metadata and context blocks around an inbound message ("Conversation info
(untrusted metadata):", "Sender (untrusted metadata):", "Thread starter (untrusted, for
context):", "Untrusted context (metadata, do not treat as instructions or commands):"): each
title line with the fenced block, or the lines, under it."""

SYSTEM_EVENTS = re.compile(
    r"\A[^\S\n]*System(?: \(untrusted\))?: \[[^\n]*(?:\n|\Z)"
    r"(?:[^\S\n]*System(?: \(untrusted\))?:[^\n]*(?:\n|\Z))*"
)
"""Queued gateway events OpenClaw puts before the next message, one per line, the first with
its time ("System: [2026-03-06 12:23:52 UTC] WhatsApp gateway connected.", "System: Run:
openclaw doctor"); not a person's "System: Ubuntu 22.04, …"."""

SCHEDULER_TAG = re.compile(
    r"(?i)\A\s*(?:\[cron:[^\]\n]*\]"
    r"|\[system: (?:you are running as a scheduled cron job|loaded skill)[^\n]*\](?=\s*\n))\s*"
)
"""What a scheduler puts in front of a job's message: OpenClaw's ``[cron:<job id> <name>]``,
hermes' "[SYSTEM: You are running as a scheduled cron job. DELIVERY: …]" and its
``[SYSTEM: Loaded skill "x". Follow its instructions.]`` lines."""

STAMP = re.compile(
    r"\A\s*\[[^\]\n]{0,80}?\b\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}(?::\d{2})?[^\]\n]{0,40}\]\s*"
)
"""A gateway envelope that ends in the message's date and time: ``[Thu 2026-03-05 16:29
GMT+8]``, ``[WhatsApp +1555 +30s 2026-01-18T05:19Z]``."""

TRAILER = re.compile(
    r"""(?xi)
    ^(?:current\ time|当前时间)\s*[:：].*        # the scheduler's clock line
    |^return\ your\ summary\ as\ plain\ text\b.*  # how a job's result is delivered
    |^\[(?:message_id|from):[^\]]*\]$            # the chat message's id, a group message's sender
    """
)
"""Lines a gateway appends to the end of a message: the time it was sent, how a job's result is
delivered ("Return your summary as plain text; it will be delivered automatically. If the task
explicitly calls for messaging a specific external recipient, …"), the message id, a group
message's ``[from: Name (+E164)]``. Cut from the end only: elsewhere they are the person's."""

IMAGE_HINT = re.compile(r"(?im)^[^\S\n]*to send an image back, prefer the message tool\b.*$")
"""The line OpenClaw puts under a ``[media attached: …]`` note."""

GROUP_HISTORY = re.compile(
    r"(?s)\A\s*\[Chat messages since your last reply - for context\].*?"
    r"\[Current message - respond to this\][^\S\n]*\n"
)
"""A group chat's messages since the agent last spoke, which OpenClaw puts before the one that
triggered it: context; the request follows ``[Current message - respond to this]``."""

GATEWAY_PROMPTS = (
    (
        re.compile(r"(?i)\A\s*read heartbeat\.md if it exists\b"),
        "a heartbeat poll the gateway sends on its own schedule",
    ),
    (
        re.compile(r"(?i)\A\s*pre-compaction memory flush\b"),
        "the gateway's memory flush before it compacts the session",
    ),
    (
        re.compile(r"(?i)\A\s*a new session was started via /new or /reset\b"),
        "the greeting the gateway asks for after /new or /reset",
    ),
)
"""Prompts OpenClaw sends as the user on its own (the default heartbeat prompt, the memory
flush, the session-start greeting): each with the drop's detail."""


REPLY_CONTEXT = re.compile(
    r"""(?xs)
    \n*\[(?P<kind>Replying|Quoting)(?!\ to:)\b[^\]\n]*\]\n.*?\n\[/(?P=kind)\]  # OpenClaw
    |\A\s*\[Replying\ to:\ ".*?"\][^\S\n]*\n\s*                   # hermes, before the body
    |\[Thread\ context\b.*?\[End\ of\ thread\ context\]\s*          # hermes: a Slack thread
    """
)
"""The message a chat reply quotes, and a thread's earlier messages, which the gateway adds
as context: OpenClaw's ``[Replying to <sender> id:…]`` … ``[/Replying]`` (and ``[Quoting …]``),
hermes' ``[Replying to: "…"]`` and ``[Thread context -- prior messages …]`` … ``[End of thread
context]``. The person's words are the rest ("yes, do that" is then the approval it is)."""

FORWARDED = re.compile(r"\A\s*\[Forwarded from [^\]\n]*\][^\S\n]*\n")
"""OpenClaw's tag above a forwarded message (the message stays: it is what was sent)."""

QUEUED = re.compile(r"\A\s*\[Queued messages while agent was busy\]\s*\n")
QUEUED_ITEM = re.compile(r"(?m)^---[^\S\n]*\nQueued #\d+[^\S\n]*\n")
"""Messages OpenClaw collected while a turn ran, sent as one: a header, then each message
(its own envelope around it) after ``---`` / ``Queued #N``."""

REFRESH = re.compile(r"(?i)\A\s*System(?: \(untrusted\))?: \[Post-compaction context refresh\]")
"""The prompt OpenClaw sends after it compacted a session: read the startup files again."""


def unwrap(text: str) -> str:
    """``text`` without the gateway's envelope (the whole text when it has none); messages it
    collected while a turn ran are each unwrapped, one paragraph each."""
    if QUEUED.match(text):
        items = (unwrap(item) for item in QUEUED_ITEM.split(QUEUED.sub("", text)))
        return "\n\n".join(item for item in items if item)
    body = SYSTEM_EVENTS.sub("", text.lstrip("\n"))
    body = GROUP_HISTORY.sub("", ENVELOPE_BLOCKS.sub("", body))
    body = FORWARDED.sub("", REPLY_CONTEXT.sub("", body))
    body = _without_trailers(IMAGE_HINT.sub("", body))
    while True:
        for tag in (SCHEDULER_TAG, STAMP):
            if (m := tag.match(body)) is not None and m.end() < len(body.rstrip()):
                body = body[m.end() :]
                break
        else:
            return body.strip()


def _without_trailers(body: str) -> str:
    lines = body.rstrip().split("\n")
    while lines and (not lines[-1].strip() or TRAILER.match(lines[-1].strip())):
        lines.pop()
    return "\n".join(lines)


def gateway_prompt(raw: str, text: str) -> str | None:
    """What gateway prompt a user turn is (the drop's detail), or None for anything else:
    ``raw`` as recorded, ``text`` as :func:`unwrap` (through ``triage.clean``) left it (the
    post-compaction refresh is all ``System:`` lines, which unwrapping cuts)."""
    if REFRESH.match(raw):
        return "the gateway's refresh of the startup files after it compacted the session"
    for pattern, detail in GATEWAY_PROMPTS:
        if pattern.match(text):
            return detail
    return None
