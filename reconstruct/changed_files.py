"""What an episode changed, and what kind of file each is.

Source files make coding tasks; documentation, configuration, lockfiles and assets do not
(``docs_only``). The changes between two replayed snapshots (created, modified, deleted), the
files an episode's edit calls named when replay could not follow them, and the drop of an
episode whose changes are all docs or config.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from trajforge.reconstruct import triage_rules_work as work
from trajforge.reconstruct.paths import PathViolation, confine
from trajforge.reconstruct.replay import Replay, Snapshot
from trajforge.reconstruct.triage import Drop
from trajforge.reconstruct.triage_live import released
from trajforge.records import CHANGE_KINDS, Event, Reason

_TEST_FILE = re.compile(
    r"(^|/)(test_[^/]*\.py|[^/]*_test\.(py|go)|[^/]*\.(test|spec)\.[jt]sx?|tests?/[^/]+\.\w+)$"
)


def is_test_file(path: str) -> bool:
    """Heuristic: path names a test file."""
    return bool(_TEST_FILE.search(path))


def is_source(path: str) -> bool:
    """The file is source in a programming language (or a build file that is a program: a
    Makefile, a Dockerfile), not documentation, configuration, a lockfile or an asset."""
    name = posixpath.basename(path).lower()
    stem, suffix = posixpath.splitext(name)
    if name in work.CODE_NAMES or stem in work.CODE_NAMES or suffix == ".dockerfile":
        return True
    if name in work.DOC_NAMES or name.split(".")[0].split("-")[0] in work.DOC_NAMES:
        return False
    if name.startswith(".env") or suffix in work.DOC_SUFFIXES or suffix in work.CONFIG_SUFFIXES:
        return False
    return not (name.startswith(".") and not suffix)  # .bashrc, .prettierrc: settings


def docs_only(paths: Sequence[str]) -> bool:
    """Changed files, none of them source: the episode is not a coding task."""
    return bool(paths) and not any(is_source(p) for p in paths)


def changed_paths(start: Snapshot, end: Snapshot) -> tuple[list[str], list[str]]:
    """(created, modified) paths between two snapshots."""
    existed = set(start.files) | start.partial | start.missing
    created = sorted(p for p in end.files if p not in existed)
    modified = sorted(p for p in end.files if p in existed and start.files.get(p) != end.files[p])
    return created, modified


def docs_drop(
    events: Sequence[Event], span: tuple[int, int], request: str, state: Replay,
    edited: Sequence[str] = (),
) -> Drop | None:  # fmt: skip
    """The docs_only drop of an episode whose changes are all documentation or configuration
    (``edited``: the files its edit calls named, for when replay could not follow them). One
    that also published a release (a version bump and its changelog, then ``npm publish``)
    delivered the release: ``live_state``."""
    first, last = span
    start, end = state.state_at(first), state.state_at(last)
    created, modified = changed_paths(start, end)
    changed = created + modified + deleted_paths(start, end) or list(edited)
    if not docs_only(changed):
        return None
    listed = ", ".join(changed[:5]) + (", …" if len(changed) > 5 else "")
    detail = f"changes only documentation or configuration ({listed})"
    if (release := released(events, first, last)) is not None:
        detail = f"publishes a release ({release}); {detail}"
        return Drop(Reason.LIVE_STATE, first, last, detail, request[:160])
    return Drop(Reason.DOCS_ONLY, first, last, detail, request[:160])


def edited_paths(events: Sequence[Event], first: int, last: int, root: str | None) -> list[str]:
    """Workspace files the episode's write / edit / patch calls named."""
    found: list[str] = []
    for event in events[first : last + 1]:
        if event.kind == "tool_call" and event.tool_kind in CHANGE_KINDS:
            try:
                found.append(confine(event.path or "", root))
            except PathViolation:
                continue
    return sorted(set(found) - {""})


def deleted_paths(start: Snapshot, end: Snapshot) -> list[str]:
    existed = set(start.files) | start.partial | start.missing
    return sorted(existed - set(end.files) - end.partial - end.missing)
