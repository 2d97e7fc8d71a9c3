"""An interruption splits a request from its work: join them again.

A person who presses Esc while the agent is still reading (pi records the turn as
``aborted``) and types where to look instead leaves two turns: the request, cut off before it
touched anything, and the steer that carries all the work but cannot stand alone ("that's not
the system prompt. see main.ts", "like, can't we make this even better? … a showSelector()").
Judged apart, the first is ``harness_error`` and the second ``not_self_contained``, and a real
change is lost. Judged as one thread, the request states the subject and the steer the
correction. A steer that stands alone (it is kept, or dropped for another reason) is a new
request, and the cut-off one stays a drop. Likewise a correction after finished work ("no
conosle logs! setTheme should return an error …") joins the request whose work it corrects:
apart, it is ``not_self_contained`` and the request's task pins the state the person rejected.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from trajforge.reconstruct import triage_rules as rules
from trajforge.reconstruct.triage import Drop, Thread, answer_of, judge
from trajforge.reconstruct.triage_live import Roots, first_change, touched
from trajforge.reconstruct.triage_request import Known, body, untagged
from trajforge.reconstruct.triage_text import is_question
from trajforge.records import Event, Reason

PLANNED = (Reason.NO_DELIVERABLE, Reason.CONVERSATION)
"""Drops of a thread that asked for a plan or advice and got it, changing nothing."""

PLAN_CHARS = 400
"""An answer shorter than this is no plan a later turn could approve ("Hello!")."""


def judged(
    events: Sequence[Event], threads: Sequence[Thread], roots: Roots, known: Known,
    changed: Callable[[int, int], bool],
) -> Iterator[tuple[Thread, Drop | None, str]]:  # fmt: skip
    """Each thread with its drop (or None) and its self-contained request (see
    :func:`~trajforge.reconstruct.triage.judge`); a request cut off before it touched anything
    and a turn right after it that cannot stand alone (judged as if it had finished: it may
    be cut off in turn, and steered again) come out as one thread; so do a request for a plan
    and the reply that leans on it and led to the work (with any reply the person stopped
    before it did anything between them), and a kept request and the turns after
    it that correct or continue its work (:func:`_corrected`)."""
    n = 0
    while n < len(threads):
        thread = threads[n]
        drop, request = judge(events, thread, roots, known, changed, later=n > 0)
        heads = n == 0 or _settled(events, threads[n - 1])
        while heads and n + 1 < len(threads):
            answer = _left(events, thread, drop)
            if answer is None:
                break
            then = threads[n + 1]
            if answer and _interrupted(events, then):
                # a reply to the plan the person stopped before it did anything ("Can we not use
                # id fields …?" [aborted]): still the talk about the plan; the next turn may act
                thread = steered(thread, then, answer)
                drop, request = judge(events, thread, roots, known, changed, later=n > 0)
                n += 1
                continue
            alone = replace(then, cut_off=None, by_hand=None)  # judged for what it says
            leans, _ = judge(events, alone, roots, known, changed, True)
            if leans is None or leans.reason != Reason.NOT_SELF_CONTAINED:
                break
            if answer and not touched(events, then.first, then.last):
                break  # a plan is joined with the reply that led to the work, not a question
            thread = steered(thread, then, answer, _before_work(events, then))
            drop, request = judge(events, thread, roots, known, changed, later=n > 0)
            n += 1
        while drop is None and n + 1 < len(threads):
            joined = _corrected(events, thread, threads[n + 1], roots, known, changed)
            if joined is None:
                break
            then_drop, then_request = judge(events, joined, roots, known, changed, later=n > 0)
            if then_drop is not None:
                break  # the two read as one still do not make a task: each stands as judged
            thread, drop, request = joined, then_drop, then_request
            n += 1
        yield thread, drop, request
        n += 1


def _corrected(
    events: Sequence[Event], thread: Thread, then: Thread, roots: Roots, known: Known,
    changed: Callable[[int, int], bool],
) -> Thread | None:  # fmt: skip
    """``thread`` with ``then`` joined when ``then`` corrects or continues its work: both
    changed files, and ``then``, judged alone, cannot stand only because it leans on the turn
    before it ("no conosle logs! setTheme should return an error …", "well, i think it should
    be toolTitle and toolOutput?", "Undo those logger chantges. just import it …") and the
    agent finished it (:func:`_finished`). A question about the work,
    a turn naming the harness's tools, one pointing into the conversation ("where were we"), or
    one the agent answered with a plan or left mid-work is not joined; None when not joined."""
    if not touched(events, thread.first, thread.last) or not touched(events, then.first, then.last):
        return None
    if not _finished(events, then):
        return None
    alone, _ = judge(events, then, roots, known, changed, True)
    if alone is None or not alone.leans:
        return None
    # judged by the request it follows (which stands), stated with the correction after it
    stated = f"{thread.instruction}\n\n{then.asked or then.request}"
    return replace(steered(thread, then), request=thread.request, asked=stated)


def _finished(events: Sequence[Event], thread: Thread) -> bool:
    """The agent finished the thread's work: it ends on something the assistant said after
    its last call, and that is no proposal waiting for a reply. A correction the agent answered
    with a plan ("Want me to proceed with this structure?") or left mid-work (the person spoke
    again while its edits ran) has no end a task could pin."""
    last = next(
        (e for e in reversed(events[thread.first : thread.last + 1]) if e.kind != "user"), None
    )
    if last is None or last.kind != "assistant" or not last.text.strip():
        return False
    return rules.PROPOSAL.search(last.text.strip()) is None


def _interrupted(events: Sequence[Event], thread: Thread) -> bool:
    """The harness cut the thread off before it touched anything."""
    return thread.cut_off is not None and not touched(events, thread.first, thread.last)


def _settled(events: Sequence[Event], before: Thread) -> bool:
    """The thread before a request changed files: the request does not build on a plan or an
    answer it left (the proto schema an assistant proposed, then "can we not use id fields?")
    nor steer it once more after it was cut off."""
    return touched(events, before.first, before.last)


def _left(events: Sequence[Event], thread: Thread, drop: Drop | None) -> str | None:
    """What a thread that changed nothing left for the next turn to lean on: '' when the
    harness cut it off (the person stopped it to steer), the assistant's answer when it asked
    for a plan or advice and got one (dropped so, or not phrased as a question: a question
    may be a qa task of its own); None when it is no such thread."""
    if touched(events, thread.first, thread.last):
        return None
    if drop is not None and drop.reason == Reason.HARNESS_ERROR:
        return "" if thread.cut_off is not None else None
    asked = drop is None and not is_question(untagged(body(thread.request)))
    if thread.cut_off is None and (asked or (drop is not None and drop.reason in PLANNED)):
        answer = answer_of(events, thread)
        return answer if len(answer) >= PLAN_CHARS else None  # "hello" is no plan
    return None


def _before_work(events: Sequence[Event], thread: Thread) -> str:
    """What the assistant said in a thread before its first change (a plan revised after the
    reply: "Revised plan: | cli/args.ts | … | Let me proceed")."""
    end = first_change(events, thread.first, thread.last)
    span = events[thread.first + 1 : thread.last + 1 if end is None else end]
    return "\n\n".join(e.text.strip() for e in span if e.kind == "assistant" and e.text.strip())


def steered(first: Thread, then: Thread, answer: str = "", revised: str = "") -> Thread:
    """One thread of a request and the turn that steered it (in that order): a request cut
    off, or one that asked for a plan and got ``answer``, which the task states with the
    reply and what the assistant ``revised`` before the work."""
    asked = ""
    if answer:
        reply = then.asked or then.request
        plan = f"The assistant answered:\n\n{answer}\n\nThe reply:\n\n{reply}"
        if revised:
            plan += f"\n\nThe assistant, before the work:\n\n{revised}"
        asked = f"{first.instruction}\n\n{plan}"
    elif then.asked:
        asked = f"{first.instruction}\n\n{then.asked}"
    elif first.asked:
        asked = f"{first.asked}\n\n{then.request}"
    return Thread(
        first=first.first,
        last=then.last,
        request=f"{first.request}\n\n{then.request}",
        follow_ups=[*first.follow_ups, then.request, *then.follow_ups],
        merged=first.merged + then.merged,
        approvals=[*first.approvals, *then.approvals],
        attachment=first.attachment or then.attachment,
        asked=asked,
        quotes=first.quotes,
        cut_off=then.cut_off,
        by_hand=first.by_hand or then.by_hand,
    )
