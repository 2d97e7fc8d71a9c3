"""Classify triaged threads into task families (build, extend, repair, qa), saying why.

:mod:`.triage` first folds a session into threads and drops what is not a task; each kept
thread then becomes one build / extend / qa candidate (or a drop, when a qa thread is not a
genuine question), and every fail→pass pair of a check becomes a repair candidate.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field

from trajforge.reconstruct.changed_files import (
    changed_paths,
    docs_drop,
    edited_paths,
    is_source,
    is_test_file,
)
from trajforge.reconstruct.episodes import CheckRun, Episode, check_runs
from trajforge.reconstruct.paths import PathViolation, confine
from trajforge.reconstruct.qa import judge_qa
from trajforge.reconstruct.replay import Replay, Snapshot
from trajforge.reconstruct.triage import Drop, Thread, answer_of, clean, preview, threads_of
from trajforge.reconstruct.triage_live import (
    Roots,
    live_reason,
    service_only,
    session_roots,
    workspace_command,
)
from trajforge.reconstruct.triage_request import Known, host_paths
from trajforge.reconstruct.triage_steer import judged
from trajforge.reconstruct.triage_text import english
from trajforge.records import AnswerKey, CutOff, Event, Family, Reason

NEAR_EMPTY_FILES = 2
OUTPUT_TAIL_LINES = 30


@dataclass(frozen=True)
class Candidate:
    """A task candidate before it is written."""

    family: Family
    instruction: str
    first: int
    """First event of the episode."""
    last: int
    """Last event of the episode."""
    start: Snapshot
    """Workspace the agent starts from."""
    end: Snapshot | None
    """Completed workspace (None for qa)."""
    answer: str | None
    command: str | None
    """Check command that decides success, when one was recorded."""
    reasons: tuple[str, ...]
    tests: tuple[str, ...] = ()
    """Test files the agent wrote or changed in the episode."""
    probes: tuple[Snapshot, ...] = field(default=())
    """Workspaces where the agent's own check failed after it had started fixing."""
    shell_commands: tuple[str, ...] = ()
    """Mutating shell commands between start and end."""
    answer_key: AnswerKey | None = None
    """qa: the grounded facts an answer must state."""


@dataclass(frozen=True)
class Found:
    """A session's candidates and the episodes triage dropped."""

    candidates: list[Candidate]
    drops: list[Drop]
    merged: int
    """Acknowledgements, continuations and harness turns folded into threads."""


def run_command(run: CheckRun, root: str | None) -> str | None:
    """The check as it must run from the workspace root (``cd sub && ...``); None if outside."""
    if not run.cwd:
        return run.command
    cwd = run.cwd.rstrip("/")
    if root is not None and cwd == root.rstrip("/"):
        return run.command
    try:
        rel = confine(cwd, root)
    except PathViolation:
        return None
    return f"cd {shlex.quote(rel)} && {run.command}"


def _texts(state: Replay) -> Iterator[str]:
    """The last known content of every source file the session knew (its code's identifiers;
    not a lockfile's or a JSON document's keys)."""
    for path, versions in state.history.items():
        if not is_source(path):
            continue
        content = next((v.content for v in reversed(versions) if v.content), None)
        if content is not None:
            yield content


def candidates(
    events: Sequence[Event], state: Replay, cut_offs: Sequence[CutOff] = (),
    steers: Collection[int] = (),
) -> Found:  # fmt: skip
    """Every candidate a session yields (one per kept thread plus one per fail→pass pair);
    ``cut_offs``, ``steers``: the session's turns the harness recorded as cut off, and its
    messages delivered while a turn still ran."""
    if (why := service_only(events)) is not None:  # one row for the session, not one per turn
        asked = next((clean(e.text).text for e in events if e.kind == "user"), "")
        return Found([], [Drop(Reason.LIVE_STATE, 0, len(events) - 1, why, preview(asked))], 0)
    runs = check_runs(events)
    triaged = threads_of(events, cut_offs, steers)
    roots = session_roots(events, state.root)
    drops = [
        _changes_first(events, d, state, d.text) if d.reason == Reason.NOT_SELF_CONTAINED else d
        for d in triaged.drops
    ]
    found: list[Candidate] = []
    kept: list[tuple[Thread, str]] = []
    known = Known(state.history, lambda: _texts(state))
    for thread, drop, request in judged(events, triaged.threads, roots, known, _differ(state)):
        if drop is not None and (drop.reason == Reason.NOT_SELF_CONTAINED or thread.attachment):
            # what it changed decides before how it was asked (or what it was shown)
            drop = _changes_first(events, drop, state, thread.request)
        if drop is not None:
            drops.append(drop)
            continue
        kept.append((thread, request))
        made = _thread_candidate(events, thread, request, state, runs)
        if isinstance(made, Drop):
            drops.append(made)
        elif made is not None:
            found.append(made)
    repairs, repair_drops = _repairs(events, state, runs, kept, roots)
    return Found(found + repairs, drops + repair_drops, triaged.merged)


def _changes_first(events: Sequence[Event], drop: Drop, state: Replay, request: str) -> Drop:
    """The drop of a thread, or of a turn with no thread before it ("Continue please" after a
    pasted transcript), judged for what its span changed first: docs or config only is
    ``docs_only`` (a release: ``live_state``), whatever it was dropped for."""
    edited = edited_paths(events, drop.first, drop.last, state.root)
    return docs_drop(events, (drop.first, drop.last), request, state, edited) or drop


def _differ(state: Replay) -> Callable[[int, int], bool]:
    """Whether the workspace's files differ between two event indices."""

    def differ(first: int, last: int) -> bool:
        a, b = state.state_at(first), state.state_at(last)
        return (a.files, a.partial, a.missing) != (b.files, b.partial, b.missing)

    return differ


def _thread_candidate(
    events: Sequence[Event], thread: Thread, request: str, state: Replay, runs: Sequence[CheckRun]
) -> Candidate | Drop | None:
    episode = Episode(thread.first, thread.last, request, answer_of(events, thread))
    start = state.state_at(episode.first)
    mutated = [i for i in state.mutations if episode.first <= i <= episode.last]
    if not mutated:
        commands = _relative_commands(events, episode, state.root)
        return _qa_candidate(commands, episode, start, thread.request)
    return _episode_candidate(events, episode, start, state, runs)


def _relative_commands(events: Sequence[Event], episode: Episode, root: str | None) -> list[Event]:
    """The session with the episode's commands as they run from the workspace root: ``cd
    /Users/me/proj && grep …`` reads the workspace, not the machine, and re-runs in a task."""
    found = list(events)
    for index in range(episode.first, min(episode.last, len(found) - 1) + 1):
        event = found[index]
        if event.kind == "tool_call" and event.tool_kind == "shell" and event.command:
            command = workspace_command(event.command, root)
            if command != event.command:
                found[index] = event.model_copy(update={"command": command})
    return found


def _qa_candidate(
    events: Sequence[Event], episode: Episode, start: Snapshot, raw: str
) -> Candidate | Drop:
    if not english(episode.request):
        detail = (
            "no workspace file changed, and the request is not an English question (the "
            "question rules read English only: in another language it is taken for a request)"
            if "?" in episode.request  # "ok write markdown, including code, tables … pp"
            else "no workspace file changed, and the request asks no question"
        )
        return Drop(Reason.NO_DELIVERABLE, episode.first, episode.last, detail, raw[:160])
    verdict = judge_qa(
        events, episode.first, episode.last, episode.request, episode.answer, start.files
    )
    if verdict.key is None:
        assert verdict.reason is not None
        return Drop(verdict.reason, episode.first, episode.last, verdict.detail, raw[:160])
    facts = ", ".join(f"{f.kind} {f.value} ({f.grounded_in})" for f in verdict.key.required)
    return Candidate(
        "qa",
        episode.request,
        episode.first,
        episode.last,
        start,
        None,
        episode.answer,
        None,
        (
            "no file changes in the episode; the final answer is the deliverable",
            f"grounded facts the answer must state: {facts}",
        ),
        answer_key=verdict.key,
    )


def _episode_candidate(
    events: Sequence[Event], episode: Episode, start: Snapshot, state: Replay,
    runs: Sequence[CheckRun],
) -> Candidate | Drop:  # fmt: skip
    end = state.state_at(episode.last)
    created, modified = changed_paths(start, end)
    shell_cmds = tuple(state.shell_changed(episode.first, episode.last))
    if not created and not modified:
        return _unchanged(events, episode, state, end)
    span = (episode.first, episode.last)
    if (docs := docs_drop(events, span, episode.request, state)) is not None:
        return docs
    passing = [r for r in runs if episode.first <= r.result <= episode.last and r.passed]
    command = run_command(passing[-1], state.root) if passing else None
    existing = len(start.files) + len(start.partial) + len(start.missing)
    if existing <= NEAR_EMPTY_FILES and not modified:
        family: Family = "build"
        why = f"workspace started with {existing} known file(s); {len(created)} created"
    else:
        family = "extend"
        why = f"{len(modified)} existing file(s) changed, {len(created)} created"
    reasons = [why]
    reasons.append(f"last passing check: {command}" if command else "no passing check recorded")
    tests = tuple(p for p in created + modified if is_test_file(p))
    return Candidate(
        family,
        episode.request,
        episode.first,
        episode.last,
        start,
        end,
        None,
        command,
        tuple(reasons),
        tests=tests,
        shell_commands=shell_cmds,
    )


SEEN = ("base", "read", "commit", "formatted")
"""Origins of a file version that are observations (or a formatter's layout), not changes."""


def _unchanged(events: Sequence[Event], episode: Episode, state: Replay, end: Snapshot) -> Drop:
    """An episode that changed files, yet leaves none known to differ: a loss said out loud."""
    touched = {
        path
        for path, versions in state.history.items()
        if any(episode.first <= v.index <= episode.last and v.origin not in SEEN for v in versions)
    }
    unknown = sorted(touched & (end.partial | end.missing))
    if unknown:
        listed = ", ".join(unknown[:5]) + (", …" if len(unknown) > 5 else "")
        detail = f"its changes cannot be recovered: it changed files known only in part ({listed})"
        reason = Reason.WORKSPACE_INCOMPLETE
    elif touched:
        detail = f"its edits leave every file they touched as it was ({sorted(touched)[0]}, …)"
        reason = Reason.NO_DELIVERABLE
    else:
        ran = state.shell_changed(episode.first, episode.last)
        shown = f" (`{ran[0][:80]}`)" if ran else ""
        ended = "" if _answered(events, episode) else "; it ends before the assistant answered"
        said = "no workspace file is known to change: its commands may have, none is recorded"
        detail = f"{said}{shown}{ended}"
        reason = Reason.NO_DELIVERABLE
    return Drop(reason, episode.first, episode.last, detail, episode.request[:160])


def _answered(events: Sequence[Event], episode: Episode) -> bool:
    """The assistant said something after the episode's last tool call."""
    for event in reversed(events[episode.first : episode.last + 1]):
        if event.kind == "assistant" and event.text.strip():
            return True
        if event.kind in ("tool_call", "tool_result"):
            return False
    return False


def _context(kept: Sequence[tuple[Thread, str]], index: int) -> str:
    """The kept thread's request around event ``index`` ('' when its thread was dropped)."""
    for thread, request in kept:
        if thread.first <= index <= thread.last:
            return request
    return ""


def _repair_instruction(command: str, output: str, request: str) -> str:
    tail = "\n".join(output.rstrip().splitlines()[-OUTPUT_TAIL_LINES:])
    text = f"The check `{command}` fails:\n\n```\n{tail}\n```\n\nFix the code so that it passes."
    if request:
        text += f"\n\nContext, from the original request:\n{request}"
    return text


def _repairs(
    events: Sequence[Event], state: Replay, runs: Sequence[CheckRun],
    kept: Sequence[tuple[Thread, str]], roots: Roots,
) -> tuple[list[Candidate], list[Drop]]:  # fmt: skip
    """One repair per fail→pass pair of the same check with file changes in between."""
    found: list[Candidate] = []
    drops: list[Drop] = []
    open_fails: dict[str, list[CheckRun]] = {}
    for run in runs:
        fails = open_fails.setdefault(run.key, [])
        if not run.passed:
            fails.append(run)
            continue
        if not fails:
            continue
        open_fails[run.key] = []
        first = fails[0]
        edits = [i for i in state.mutations if first.result < i < run.call]
        command = run_command(run, state.root)
        if not edits or not command:
            continue
        live = live_reason(events, first.call, run.result, "", roots)
        if live is not None:
            drops.append(Drop(live[0], first.call, run.result, live[1], f"repair of `{run.key}`"))
            continue
        found.append(_repair(events, state, fails, run, command, _context(kept, first.call)))
    return found, drops


def _repair(
    events: Sequence[Event], state: Replay, fails: Sequence[CheckRun], run: CheckRun,
    command: str, context: str,
) -> Candidate:  # fmt: skip
    first = fails[0]
    edits = [i for i in state.mutations if first.result < i < run.call]
    reasons = (
        f"`{run.key}` failed at event {first.result} (exit != 0), "
        f"{len(edits)} change(s) followed, it passed at event {run.result}",
        f"{len(fails) - 1} intermediate failing run(s) kept as wrong-solution probes",
    )
    instruction = host_paths(_repair_instruction(command, first.output, context), state.root)
    return Candidate(
        "repair",
        instruction,
        first.call,
        run.result,
        state.state_at(first.result),
        state.state_at(run.result),
        None,
        command,
        reasons,
        probes=tuple(state.state_at(f.result) for f in fails[1:]),
        shell_commands=tuple(state.shell_changed(first.result, run.result)),
    )
