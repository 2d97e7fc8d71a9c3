"""An interruption splits a request from its work: join them again.

A person who presses Esc while the agent is still reading (pi records the turn as
``aborted``) and types where to look instead leaves two turns: the request, cut off before it
touched anything, and the steer that carries all the work but cannot stand alone ("that's not
the system prompt. see main.ts", "like, can't we make this even better? … a showSelector()").
Judged apart, the first is ``harness_error`` and the second ``not_self_contained``, and a real
change is lost. Judged as one thread, the request states the subject and the steer the
correction. A steer that stands alone (it is kept, or dropped for another reason) is a new
request, and the cut-off one stays a drop.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

from trajforge.reconstruct.triage import Drop, Thread, judge, touched
from trajforge.reconstruct.triage_live import Roots
from trajforge.reconstruct.triage_request import Known
from trajforge.records import Event, Reason


def judged(
    events: Sequence[Event], threads: Sequence[Thread], roots: Roots, known: Known,
    changed: Callable[[int, int], bool],
) -> Iterator[tuple[Thread, Drop | None, str]]:  # fmt: skip
    """Each thread with its drop (or None) and its self-contained request (see
    :func:`~trajforge.reconstruct.triage.judge`); a request cut off before it touched anything
    and a turn right after it that cannot stand alone (judged as if it had finished: it may
    be cut off in turn, and steered again) come out as one thread."""
    n = 0
    while n < len(threads):
        thread = threads[n]
        drop, request = judge(events, thread, roots, known, changed, later=n > 0)
        heads = n == 0 or _settled(events, threads[n - 1])
        while (
            heads
            and drop is not None
            and n + 1 < len(threads)
            and _interrupted(events, thread, drop)
        ):
            then = threads[n + 1]
            leans, _ = judge(events, replace(then, cut_off=None), roots, known, changed, True)
            if leans is None or leans.reason != Reason.NOT_SELF_CONTAINED:
                break
            thread = steered(thread, then)
            drop, request = judge(events, thread, roots, known, changed, later=n > 0)
            n += 1
        yield thread, drop, request
        n += 1


def _settled(events: Sequence[Event], before: Thread) -> bool:
    """The thread before a request changed files: the request does not build on a plan or an
    answer it left (the proto schema an assistant proposed, then "can we not use id fields?")
    nor steer it once more after it was cut off."""
    return touched(events, before.first, before.last)


def _interrupted(events: Sequence[Event], thread: Thread, drop: Drop) -> bool:
    """Dropped because the harness cut the turn off before it changed anything."""
    if drop.reason != Reason.HARNESS_ERROR or thread.cut_off is None:
        return False
    return not touched(events, thread.first, thread.last)


def steered(first: Thread, then: Thread) -> Thread:
    """One thread of a cut-off request and the turn that steered it (in that order)."""
    asked = ""
    if then.asked:
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
        cut_off=then.cut_off,
    )
