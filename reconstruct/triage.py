"""Triage: which episodes of a session are tasks at all.

A session's user turns are cleaned of what the harness wrapped around them; turns that are
only harness text, and acknowledgements or continuations ("ok", "continue", "try again"), are
folded into the thread they continue, so a thread is the person's request with its follow-ups
and all the work they led to. Each thread is then kept, or dropped with one
:class:`~trajforge.records.Reason` and a precise detail: :mod:`.triage_request` judges whether
the request stands alone, :mod:`.triage_live` whether the deliverable is live. Words are read
in any script (:mod:`.triage_text`). Every rule's words and thresholds live in
:mod:`.triage_rules` (the text), :mod:`.triage_rules_qa` (questions and answers) and
:mod:`.triage_rules_work` (tool calls and files).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from trajforge.reconstruct import triage_rules as rules
from trajforge.reconstruct import triage_rules_turns as turns
from trajforge.reconstruct.triage_envelope import gateway_prompt, unwrap
from trajforge.reconstruct.triage_live import (
    Left,
    Roots,
    cut_off,
    live_reason,
    moved_work,
    touched,
)
from trajforge.reconstruct.triage_request import Known, body, directs, resolve, untagged
from trajforge.reconstruct.triage_text import (
    english,
    hand_edit,
    is_question,
    speaker_tag,
    tokens,
    unspaced_ack,
    word_count,
)
from trajforge.records import CutOff, Event, Reason

PREVIEW = 160


@dataclass(frozen=True)
class Turn:
    """One user message, cleaned."""

    index: int
    """Event index."""
    raw: str
    """The text as recorded."""
    text: str
    """What the person wrote, harness wrappers cut out ('' when there was nothing else)."""
    attachment: bool
    """It refers to a file attached from outside the workspace."""


@dataclass
class Thread:
    """A request, its follow-ups and the work they led to."""

    first: int
    """Event index of the request."""
    last: int
    """Last event index of the thread."""
    request: str
    """The person's request (cleaned)."""
    follow_ups: list[str] = field(default_factory=list)
    """Later turns of the same thread that add to it (clarifications are not merged)."""
    merged: int = 0
    """Acknowledgements, continuations and harness turns folded in."""
    approvals: list[int] = field(default_factory=list)
    """Event indices of acks that approved an assistant proposal."""
    attachment: bool = False
    """A turn of it refers to an attached file."""
    asked: str = ""
    """The request with each reply after the assistant's question it answers (what a task
    states); '' when no turn replied to a question. ``request`` leaves replies out."""
    cut_off: str | None = None
    """How the harness recorded the thread's last turn as cut off (aborted, an API failure)
    when nothing the assistant said came after it; None when it finished."""
    by_hand: str | None = None
    """What a later turn of it says the person changed in the workspace themself ("i manually
    removed…", "i undid your changes"): edits no event recorded; None when none says so."""
    quotes: str | None = None
    """How the request quotes the assistant's last message back at it (a reply, not a
    request: ``not_self_contained`` unless it joins what it replies to); None when it does not."""

    @property
    def instruction(self) -> str:
        return self.asked or self.request

    def take(self, turn: Turn, last: int, *, merge: bool) -> int:
        """Fold a later turn in, the thread now ending at event ``last``; 1 when it counts as
        merged (an ack, a continuation, a reply), else 0 (part of the request itself)."""
        self.last = last
        self.attachment = self.attachment or turn.attachment
        self.by_hand = self.by_hand or hand_edit(turn.text)
        self.merged += int(merge)
        return int(merge)

    def add(self, text: str, asked: str = "") -> None:
        """A later turn that belongs to the request. A reply to ``asked`` leans on that
        question: the task states both, and the request is judged without it."""
        said = f'(Asked "{asked}", the reply: "{text}")' if asked else text
        self.asked = f"{self.instruction}\n\n{said}" if asked or self.asked else ""
        if not asked:
            self.request = f"{self.request}\n\n{text}"


@dataclass(frozen=True)
class Drop:
    """An episode that is not a task, and why."""

    reason: Reason
    """Closed reason."""
    first: int
    """First event index."""
    last: int
    """Last event index."""
    detail: str
    """What exactly triggered the reason."""
    text: str
    """The request (shortened), for the report."""
    leans: bool = False
    """``not_self_contained`` only because the turn leans on the one before it (it corrects,
    continues or points back to it): read after the request it follows, it may stand."""


@dataclass
class Triage:
    """A session's threads and the episodes dropped before they became candidates."""

    threads: list[Thread]
    drops: list[Drop]
    merged: int


def clean(text: str) -> Turn:
    """Cut harness wrappers out of one user message (index filled in by the caller)."""
    raw = text
    body = rules.CODEX_REQUEST.sub("", text)
    body = unwrap(rules.WRAPPED_BLOCKS.sub("", body))
    attachment = bool(rules.ATTACHMENT.search(body))
    body = rules.CHANNEL_CONTEXT.sub("", body)
    while True:
        if (m := rules.GATEWAY_PREFIX.match(body)) is not None:
            attachment = attachment or m.group("kind") != "action"
            body = body[m.end() :]
        elif not _injected(body) and (start := speaker_tag(body)) is not None:
            body = body[start:]  # "[Alice] fix the parser": a tag, not the request
        else:
            break
    body = body.strip()
    if _injected(body):
        body = _typed_after(body)
    if rules.SLASH_COMMAND.match(body):
        body = ""
    return Turn(-1, raw, body, attachment)


def _typed_after(body: str) -> str:
    """What the person typed after a harness transcript they pasted ("… ▣  Build · Big Pickle ·
    1m 14s\nContinue please continue this please"); '' for harness text alone."""
    ends = list(rules.TRANSCRIPT_END.finditer(body))
    if rules.INJECTED_MESSAGES.match(body) or not ends:
        return ""
    tail = body[ends[-1].end() :].strip()
    return "" if _injected(tail) else tail


def _injected(body: str) -> bool:
    if rules.INJECTED_MESSAGES.match(body):
        return True
    if len(rules.TRANSCRIPT_MARK.findall(body)) >= rules.TRANSCRIPT_MARKS:
        return True
    return len(rules.SUMMARY_SHAPE.findall(body)) >= rules.SUMMARY_HEADINGS


def is_ack(text: str) -> bool:
    """An acknowledgement, continuation or greeting: nothing a task could be made of.

    Words are read in any script; text in another language than English is an ack only when
    it is made of known acknowledgements (``OTHER_ACK_WORDS``, ``UNSPACED_ACKS``).
    """
    words = [w.lower() for w in tokens(text)]
    if not words:
        return True  # "2", "^", "...", "👍"
    if len(words) <= rules.ACK_MAX_WORDS and (_known_ack(words) or unspaced_ack(text)):
        return True
    if not english(text):
        return False
    last = re.split(r"(?<=[.!?\n])\s+", text.strip())[-1]
    return bool(rules.CONTINUATION_TAIL.match(last)) and len(words) <= 2 * rules.ACK_MAX_WORDS


def _known_ack(words: Sequence[str]) -> bool:
    return all(w in rules.ACK_WORDS or w in rules.OTHER_ACK_WORDS for w in words)


def _turns(events: Sequence[Event]) -> list[Turn]:
    turns = []
    for index, event in enumerate(events):
        if event.kind == "user" and event.text.strip():
            turn = clean(event.text)
            turns.append(Turn(index, turn.raw, turn.text, turn.attachment))
    return turns


def _unanswered(events: Sequence[Event], first: int, index: int) -> bool:
    """Nothing but the person's own messages between ``first`` and ``index``: a second message
    sent before any reply is part of the same request (a bug report, then "continue
    investigate, give me a root cause"), not a new turn that points back."""
    return all(e.kind == "user" for e in events[first + 1 : index])


def _last_assistant(events: Sequence[Event], first: int, last: int) -> str:
    for event in reversed(events[first : last + 1]):
        if event.kind == "assistant" and event.text.strip():
            return event.text.strip()
    return ""


def threads_of(
    events: Sequence[Event], cut_offs: Sequence[CutOff] = (), steers: Collection[int] = ()
) -> Triage:
    """Fold a session's turns into threads; harness-only turns without a thread are drops.
    ``cut_offs``: the session's turns the harness recorded as cut off; ``steers``: indices of
    user events delivered while the agent's turn still ran."""
    turns = _turns(events)
    threads: list[Thread] = []
    drops: list[Drop] = []
    merged, closed = 0, False
    for n, turn in enumerate(turns):
        last = turns[n + 1].index - 1 if n + 1 < len(turns) else len(events) - 1
        if (prompt := gateway_prompt(turn.raw, turn.text)) is not None:  # nobody asked for its work
            drops.append(Drop(Reason.HARNESS_INJECTED, turn.index, last, prompt, preview(turn.raw)))
            closed = True
            continue
        current = threads[-1] if threads and not closed else None
        if not turn.text or is_ack(turn.text):
            reason = Reason.HARNESS_INJECTED if not turn.text else Reason.NOT_SELF_CONTAINED
            if current is None:
                detail = "harness text" if not turn.text else "a continuation with nothing before"
                drops.append(Drop(reason, turn.index, last, detail, preview(turn.raw)))
                continue
            before = _last_assistant(events, current.first, turn.index)
            if turn.text and rules.PROPOSAL.search(before):
                current.approvals.append(turn.index)
            merged += current.take(turn, last, merge=True)
            continue
        if current is not None and (
            _unanswered(events, current.first, turn.index)
            or (turn.index in steers and rules.DEPENDENT_START.match(turn.text))
        ):
            current.add(turn.text)  # sent before any reply, or "then …" into the running turn
            current.take(turn, last, merge=False)
            continue
        if current is not None and (asked := _replied(events, current, turn)) is not None:
            current.add(turn.text, asked)
            merged += current.take(turn, last, merge=True)
            continue
        quoted = _quotes(turn.text, _last_assistant(events, 0, turn.index)) if threads else None
        by_hand = hand_edit(turn.text) if threads else None
        thread = Thread(
            turn.index, last, turn.text, attachment=turn.attachment, quotes=quoted, by_hand=by_hand
        )
        threads.append(thread)
        closed = False
    for thread in threads:
        thread.cut_off = cut_off(events, cut_offs, thread.first, thread.last)
    return Triage(threads, drops, merged)


def _replied(events: Sequence[Event], current: Thread, turn: Turn) -> str | None:
    """The assistant's question that a short turn answers before the thread did any work
    ("Should I proceed with these moves?" — "can leave it"), or None. The reply is part of
    the request, with the question it answers."""
    if word_count(turn.text) > turns.REPLY_MAX_WORDS or rules.ANCHOR.search(turn.text):
        return None  # long enough, or naming a file or code name, to be a request of its own
    if directs(body(turn.text)) or is_question(turn.text):
        return None  # "can you make a LICENSE file with the MIT license?": a request or question
    if touched(events, current.first, turn.index):
        return None
    before = _last_assistant(events, current.first, turn.index)
    if not rules.PROPOSAL.search(before):
        return None
    asked = [s for s in turns.SENTENCE_END.split(before) if s.rstrip().endswith("?")]
    return " ".join(" ".join(s.split()) for s in asked[-turns.REPLY_QUESTIONS :]) or None


def _quotes(text: str, before: str) -> str | None:
    """The request quotes the assistant's last message back at it (a reply, not a request)."""
    said = {_flat(line) for line in before.splitlines()}
    for line in text.splitlines():
        flat = _flat(line).lstrip("-+> ").strip()
        if len(flat) >= rules.QUOTE_CHARS and any(flat in s for s in said):
            return f"quotes the assistant's last message ({flat[:40]!r}…)"
    return None


def _flat(line: str) -> str:
    return " ".join(line.replace("`", "").replace("*", "").split())


def preview(text: str) -> str:
    """``text`` on one line, shortened to PREVIEW characters (a drop's text)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"


def answer_of(events: Sequence[Event], thread: Thread) -> str:
    """The thread's final assistant message ('' when there is none)."""
    return _last_assistant(events, thread.first, thread.last)


def harness_error(answer: str) -> str | None:
    """The failure a short final message reports, or None."""
    if len(answer) > rules.ERROR_ANSWER_CHARS:
        return None
    m = rules.HARNESS_ERRORS.search(answer)
    return m.group(0) if m else None


def _cut_short(events: Sequence[Event], thread: Thread, moved: bool) -> str | None:
    """Why a thread cut off before it changed a file or ran a command that may have is no
    task (what it said before the cut is no answer), or None. What it read on the way may
    have taught replay files it had not seen: that is no change."""
    if thread.cut_off is None or moved or touched(events, thread.first, thread.last):
        return None
    return f"the turn was cut off before it delivered anything: {thread.cut_off!r}"


def judge(
    events: Sequence[Event], thread: Thread, roots: Roots, known: Known,
    changed: Callable[[int, int], bool], later: bool,
) -> tuple[Drop | None, str]:  # fmt: skip
    """(the drop, or None) and the thread's self-contained request.

    ``roots``: the replayed workspace root and the folders the session moved to.
    ``changed(a, b)``: whether the workspace's files differ between two event indices.
    ``later``: not the session's first thread (a later turn that answers the assistant is
    steering, not a request).

    A thread that touched no file is judged for what it delivered before what its request
    lacks, where that is surer: one that ends in no answer delivered nothing, and a short
    turn that only names nothing (``vague``) asked for nothing it did (qa says which).
    """
    answer = answer_of(events, thread)
    resolved = resolve(thread.request, roots.main, known, later)
    shown = preview(thread.request)

    def drop(reason: Reason, detail: str, leans: bool = False) -> tuple[Drop, str]:
        return Drop(reason, thread.first, thread.last, detail, shown, leans), resolved.text

    if thread.quotes is not None:
        return drop(Reason.NOT_SELF_CONTAINED, thread.quotes)
    if (error := harness_error(answer)) is not None:
        return drop(Reason.HARNESS_ERROR, f"the episode ends in a harness failure: {error!r}")
    if thread.attachment:
        return drop(Reason.LIVE_STATE, "refers to a file attached from outside the workspace")
    edits = changed(thread.first, thread.last)
    moved = moved_work(events, thread.first, thread.last, roots)
    if (cut := _cut_short(events, thread, moved is not None)) is not None:
        return drop(Reason.HARNESS_ERROR, cut)
    left: Left = "changes" if edits or moved is not None else "answer" if answer else "nothing"
    live = live_reason(events, thread.first, thread.last, thread.request, roots, left)
    if live is not None:
        return drop(*live)
    if moved is not None:
        return drop(
            Reason.WORKSPACE_INCOMPLETE,
            f"changes {moved}, in a folder the session moved to; the replayed workspace is "
            f"{roots.main}",
        )
    if edits and thread.by_hand is not None:
        return drop(Reason.WORKSPACE_INCOMPLETE, f"the person says they changed files by hand "
                    f"({thread.by_hand!r}): no event recorded those edits")  # fmt: skip
    worked = edits or touched(events, thread.first, thread.last)
    asked = _answers_question(events, thread, later)
    problem = asked or resolved.problem
    if problem is not None and (worked or (answer and not resolved.vague)):
        return drop(Reason.NOT_SELF_CONTAINED, problem, asked is None and resolved.leans)
    if (unstated := _unstated(thread, body(resolved.text), edits, changed)) is not None:
        return drop(Reason.NOT_SELF_CONTAINED, unstated)
    if thread.asked:  # the task states the questions its replies answer
        return None, resolve(thread.asked, roots.main, known, later).text
    return None, resolved.text


def _answers_question(events: Sequence[Event], thread: Thread, later: bool) -> str | None:
    """A short later turn opening with "yes," / "no," right after the assistant asked something
    ("Should I add a `mdLinkUrl` token?" — "yes, in old pi link url as 666666"): its subject
    is the assistant's question, not stated in it."""
    m = turns.ANSWER_WORD.match(thread.request)
    if not later or m is None or word_count(thread.request) > rules.SHORT_REQUEST_WORDS:
        return None
    if not rules.PROPOSAL.search(_last_assistant(events, 0, thread.first)):
        return None
    return f"answers the assistant's question ({m.group(0).strip()!r}…)"


def _unstated(
    thread: Thread, request: str, edits: bool, changed: Callable[[int, int], bool]
) -> str | None:
    """Why the thread's changes are not what its request asks for, or None: the request is a
    question, or an ack approved work the assistant proposed."""
    request = untagged(request)
    if edits and is_question(request) and not directs(request) and not thread.asked:
        return "a question, not a request for the change made"  # unless it approved a proposal
    for index in thread.approvals:
        if changed(index, thread.last):
            return (
                f"an ack at event {index} approved work the assistant proposed; the request "
                "does not state it"
            )
    return None
