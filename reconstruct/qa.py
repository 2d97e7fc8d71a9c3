"""Genuine qa candidates: a question, an answer stating facts, the facts grounded.

A thread that changed no file is a qa candidate only when (a) its request asks for
information, (b) its final answer states checkable facts rather than reporting actions, and
(c) those facts appear in the starting workspace or in the output of a command that can be
re-run on it. Otherwise it is dropped as ``no_deliverable``, ``conversation`` or
``live_state``. The grounded facts the question asks for become the task's answer key.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from trajforge.reconstruct import triage_rules_qa as rules
from trajforge.reconstruct import triage_rules_turns as turns
from trajforge.reconstruct.facts import Grounds, answer_key, focus_of
from trajforge.reconstruct.shell import is_mutating
from trajforge.reconstruct.triage_live import live_command, machine_reader
from trajforge.records import AnswerKey, Event, Reason

MACHINE_PATH = re.compile(
    r"(?:^|[\s'\"=(])(?:~/|~$|/Users/|/home/|/root\b|/etc/|/var/|/opt/|/Applications\b|"
    r"/Library\b|/System\b|/proc/|/sys/|[A-Z]:\\)"
)
"""Paths that name the machine, not the workspace: a command reading them is not re-runnable."""


@dataclass(frozen=True)
class QaVerdict:
    """The answer key of a genuine qa thread, or why it is not one."""

    key: AnswerKey | None
    reason: Reason | None = None
    detail: str = ""


def _outputs(events: Sequence[Event], first: int, last: int) -> tuple[dict[str, str], bool]:
    """Re-runnable shell commands of the range → output; and whether the machine was read."""
    calls: dict[str, str] = {}
    outputs: dict[str, str] = {}
    read_machine = False
    for event in events[first : last + 1]:
        if event.kind == "tool_call" and event.tool_kind == "shell" and event.call_id:
            calls[event.call_id] = event.command or ""
        elif event.kind == "tool_result" and event.call_id in calls:
            command = calls.pop(event.call_id or "")
            if machine_reader(command) or live_command(command) or MACHINE_PATH.search(command):
                read_machine = True
            elif not is_mutating(command) and not event.is_error:
                outputs[command] = event.text
    return outputs, read_machine


def _not_checkable(found: str) -> str:
    """What a NOT_CHECKABLE_REQUEST match asks: about the assistant or the session itself, or
    for advice, an opinion or a plan."""
    if rules.ABOUT_THE_ASSISTANT.fullmatch(found):
        return "asks about the assistant's own work or the session, not the workspace"
    return "asks for advice, opinion or a plan"


def _about_the_assistant(request: str) -> str | None:
    """Why a request that is no question by :data:`~.triage_rules_qa.QUESTION` still only
    converses: one of its questions asks after the assistant or the session ("so, i'm now in
    the new implementation, you still there?" and, before any reply, "wow, it works"); None
    when none does."""
    if "?" not in request:
        return None
    for m in rules.NOT_CHECKABLE_REQUEST.finditer(request):
        if rules.ABOUT_THE_ASSISTANT.fullmatch(m.group(0)):
            return f"{_not_checkable(m.group(0))} ({m.group(0)!r})"
    return None


def judge_qa(
    events: Sequence[Event], first: int, last: int, request: str, answer: str,
    files: dict[str, str],
) -> QaVerdict:  # fmt: skip
    """Whether a thread without file changes is a genuine question with a grounded answer."""
    if not answer:
        return QaVerdict(None, Reason.NO_DELIVERABLE, "no file changed and no final answer")
    if not rules.QUESTION.search(request):
        if (about := _about_the_assistant(request)) is not None:
            return QaVerdict(None, Reason.CONVERSATION, about)
        what = (  # "can we put more stuff into that? what about thinking levels etc.?"
            "asks for work or advice, not a fact about the workspace"
            if "?" in request
            else "not phrased as a question"
        )
        return QaVerdict(None, Reason.NO_DELIVERABLE, f"{what}, and no workspace file changed")
    follow = rules.FOLLOW_UP.match(request)
    if follow is None and len(request.split()) <= 2 * rules.FOLLOW_UP_WORDS:
        # "are you stupid? what about the tool and user bgs??": a short request that ends in
        # a follow-up has its subject in the previous turn too
        follow = rules.FOLLOW_UP.match(turns.SENTENCE_END.split(request.strip())[-1])
    if follow is not None and len((follow.group("rest") or "").split()) <= rules.FOLLOW_UP_WORDS:
        return QaVerdict(
            None,
            Reason.NOT_SELF_CONTAINED,
            "a follow-up question: its subject is the previous turn, not stated in it",
        )
    if (m := rules.NOT_CHECKABLE_REQUEST.search(request)) is not None:
        return QaVerdict(
            None, Reason.CONVERSATION, f"{_not_checkable(m.group(0))} ({m.group(0)!r})"
        )
    if (m := rules.CHAT_ANSWER.match(answer)) is not None:
        return QaVerdict(
            None, Reason.CONVERSATION, f"the answer converses ({m.group(0).strip()!r})"
        )
    if (m := rules.ACTION_ANSWER.match(answer)) is not None:
        return QaVerdict(
            None, Reason.CONVERSATION, f"the answer reports actions ({m.group(0).strip()!r})"
        )
    outputs, read_machine = _outputs(events, first, last)
    key = answer_key(request, answer, Grounds(files, outputs))
    denied = _denied(request, answer)
    if key is None and denied:
        key = _stated_as_denial(
            answer_key(request, f"No. {answer}", Grounds(files, outputs)), denied
        )
    if key is None or len(key.required) < rules.MIN_REQUIRED_FACTS:
        if read_machine:
            return QaVerdict(None, Reason.LIVE_STATE, "the answer rests on the machine's state")
        return QaVerdict(
            None,
            Reason.CONVERSATION,
            "the answer states no fact grounded in the workspace or a re-runnable command",
        )
    return _crux(key)


def _denied(question: str, answer: str) -> str | None:
    """The word a yes/no question asks about when its answer opens by denying it ("is the random
    number seeded?" → "`crypto.getRandomValues()` isn't seeded like a traditional PRNG"): its
    "no"; None when the answer does not."""
    m = rules.PREDICATE.search(question)
    if m is None or "polarity" not in focus_of(question):
        return None
    return m.group(1) if rules.first_sentence_denies(answer, m.group(1)) else None


def _stated_as_denial(key: AnswerKey | None, word: str) -> AnswerKey | None:
    """``key`` whose "no" the answer states by denying ``word`` (the checker reads it so)."""
    if key is None:
        return None
    required = tuple(
        f.model_copy(update={"denies": word}) if f.kind == "polarity" else f for f in key.required
    )
    return key.model_copy(update={"required": required})


def _crux(key: AnswerKey) -> QaVerdict:
    """The key, unless it cannot hold what the question asks: only plain words (`entries`),
    or only files the answer mentions when the question does not ask where."""
    asked = [f for f in key.required if f.kind != "polarity"]
    names = ", ".join(f.value for f in asked)
    if all(f.kind == "identifier" and rules.BARE_WORD.fullmatch(f.value) for f in asked):
        return QaVerdict(
            None, Reason.KEY_GUESSABLE, f"the key holds only plain words ({names}), no crux"
        )
    if "path" not in key.focus and all(f.kind == "path" for f in asked):
        return QaVerdict(
            None,
            Reason.KEY_GUESSABLE,
            f"the key is only files the answer mentions ({names}); the question does not ask where",
        )
    return QaVerdict(key)
