"""Classify episodes into task families (build, extend, repair, qa), saying why."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field

from trajforge.reconstruct.episodes import CheckRun, Episode, check_runs, split_episodes
from trajforge.reconstruct.paths import PathViolation, confine
from trajforge.reconstruct.replay import Replay, Snapshot
from trajforge.records import Event, Family

NEAR_EMPTY_FILES = 2
OUTPUT_TAIL_LINES = 30
_TEST_FILE = re.compile(
    r"(^|/)(test_[^/]*\.py|[^/]*_test\.(py|go)|[^/]*\.(test|spec)\.[jt]sx?|tests?/[^/]+\.\w+)$"
)


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


def is_test_file(path: str) -> bool:
    """Heuristic: path names a test file."""
    return bool(_TEST_FILE.search(path))


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


def candidates(events: Sequence[Event], state: Replay) -> list[Candidate]:
    """Every candidate a session yields: one per episode plus one per fail→pass pair."""
    runs = check_runs(events)
    found: list[Candidate] = []
    for episode in split_episodes(events):
        made = _episode_candidate(episode, state, runs)
        if made is not None:
            found.append(made)
    found.extend(_repairs(events, state, runs))
    return found


def _changed(start: Snapshot, end: Snapshot) -> tuple[list[str], list[str]]:
    """(created, modified) paths between two snapshots."""
    existed = set(start.files) | start.partial | start.missing
    created = sorted(p for p in end.files if p not in existed)
    modified = sorted(p for p in end.files if p in existed and start.files.get(p) != end.files[p])
    return created, modified


def _episode_candidate(
    episode: Episode, state: Replay, runs: Sequence[CheckRun]
) -> Candidate | None:
    start = state.state_at(episode.first)
    end = state.state_at(episode.last)
    created, modified = _changed(start, end)
    mutated = [i for i in state.mutations if episode.first <= i <= episode.last]
    shell_cmds = tuple(state.shell_changed(episode.first, episode.last))
    if not mutated:
        if not episode.answer:
            return None
        return Candidate(
            "qa",
            episode.request,
            episode.first,
            episode.last,
            start,
            None,
            episode.answer,
            None,
            ("no file changes in the episode; the final answer is the deliverable",),
        )
    if not created and not modified:
        return None  # changes we could not reconstruct: nothing to verify against
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


def _request_before(events: Sequence[Event], index: int) -> str:
    for event in reversed(events[: index + 1]):
        if event.kind == "user" and event.text.strip():
            return event.text.strip()
    return ""


def _repair_instruction(command: str, output: str, request: str) -> str:
    tail = "\n".join(output.rstrip().splitlines()[-OUTPUT_TAIL_LINES:])
    text = f"The check `{command}` fails:\n\n```\n{tail}\n```\n\nFix the code so that it passes."
    if request:
        text += f"\n\nContext, from the original request:\n{request}"
    return text


def _repairs(events: Sequence[Event], state: Replay, runs: Sequence[CheckRun]) -> list[Candidate]:
    """One repair per fail→pass pair of the same check with file changes in between."""
    found = []
    open_fails: dict[str, list[CheckRun]] = {}
    for run in runs:
        fails = open_fails.setdefault(run.key, [])
        if not run.passed:
            fails.append(run)
            continue
        if not fails:
            continue
        first = fails[0]
        edits = [i for i in state.mutations if first.result < i < run.call]
        command = run_command(run, state.root)
        if edits and command:
            start = state.state_at(first.result)
            end = state.state_at(run.result)
            probes = tuple(state.state_at(f.result) for f in fails[1:])
            reasons = (
                f"`{run.key}` failed at event {first.result} (exit != 0), "
                f"{len(edits)} change(s) followed, it passed at event {run.result}",
                f"{len(fails) - 1} intermediate failing run(s) kept as wrong-solution probes",
            )
            found.append(
                Candidate(
                    "repair",
                    _repair_instruction(command, first.output, _request_before(events, first.call)),
                    first.call,
                    run.result,
                    start,
                    end,
                    None,
                    command,
                    reasons,
                    probes=probes,
                    shell_commands=tuple(state.shell_changed(first.result, run.result)),
                )
            )
        open_fails[run.key] = []
    return found
