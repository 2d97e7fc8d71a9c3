"""Apply unified diffs (``diff -u`` / ``git diff``, one or several files) to in-memory files.

Hunks are placed nearest the stated line (whitespace-tolerant), with up to two context lines
of fuzz at each end like GNU patch; miscounted ranges from model-written diffs are tolerated.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

from trajforge.reconstruct.patch_text import (
    FileOp,
    Overlay,
    PatchError,
    Reader,
    Text,
    preview,
    seek_near,
)

log = logging.getLogger(__name__)

_HUNK_HEADER = re.compile(r"^@@+ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@+")


@dataclass
class _UHunk:
    line: int
    old_start: int | None  # None: "@@" without ranges, search from the previous hunk
    old_count: int
    new_count: int
    body: list[tuple[str, str]] = field(default_factory=list)  # (tag, text)
    old_noeol: bool = False
    new_noeol: bool = False


@dataclass
class _UFile:
    line: int
    old: str | None = None  # None: /dev/null
    new: str | None = None
    git_paths: tuple[str, str] | None = None
    rename: bool = False
    created: bool = False
    deleted: bool = False
    hunks: list[_UHunk] = field(default_factory=list)
    headers: bool = False


def _header_path(raw: str) -> str | None:
    path = raw.split("\t")[0].strip()
    if path.startswith('"') and path.endswith('"') and len(path) > 1:
        path = re.sub(r'\\(["\\])', r"\1", path[1:-1])
    return None if path == "/dev/null" else path


def _is_file_header(lines: list[str], i: int) -> bool:
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def _parse_hunk(lines: list[str], i: int) -> tuple[_UHunk, int]:
    """Parse the hunk whose header is at ``lines[i]``; tolerate miscounted ranges."""
    m = _HUNK_HEADER.match(lines[i])
    if m:
        old_count = 1 if m.group(2) is None else int(m.group(2))
        new_count = 1 if m.group(4) is None else int(m.group(4))
        hunk = _UHunk(i + 1, int(m.group(1)), old_count, new_count)
    else:
        hunk = _UHunk(i + 1, None, -1, -1)
    seen_old = seen_new = 0
    i += 1
    while i < len(lines):
        line = lines[i]
        counted = seen_old >= hunk.old_count and seen_new >= hunk.new_count and m is not None
        if line.startswith("\\"):
            if hunk.body and hunk.body[-1][0] in " -":
                hunk.old_noeol = True
            if hunk.body and hunk.body[-1][0] in " +":
                hunk.new_noeol = True
        elif line.startswith(("@@", "diff ")) or _is_file_header(lines, i):
            break
        elif line[:1] in (" ", "-", "+") or (line == "" and not counted):
            tag = line[:1] or " "
            hunk.body.append((tag, line[1:]))
            seen_old += tag != "+"
            seen_new += tag != "-"
        else:
            break
        i += 1
    while hunk.body and hunk.body[-1] == (" ", "") and m is not None and seen_old > hunk.old_count:
        hunk.body.pop()  # blank lines after a complete hunk are separators, not context
        seen_old -= 1
    return hunk, i


def _git_header(line: str) -> tuple[str, str] | None:
    m = re.match(r'^diff --git ("?a/.*?"?) ("?b/.*"?)$', line)
    if not m:
        return None
    return _header_path(m.group(1)) or "", _header_path(m.group(2)) or ""


def _parse_unified(text: str) -> list[_UFile]:
    lines = text.replace("\r\n", "\n").split("\n")
    files: list[_UFile] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        cur = files[-1] if files else None
        if line.startswith("diff --git "):
            files.append(_UFile(i + 1, git_paths=_git_header(line)))
        elif _is_file_header(lines, i):
            if cur is None or cur.headers or cur.hunks:
                cur = _UFile(i + 1)
                files.append(cur)
            if not cur.rename:  # "rename from/to" already named the files, unprefixed
                cur.old, cur.new = _header_path(line[4:]), _header_path(lines[i + 1][4:])
            cur.headers = True
            i += 1
        elif line.startswith("@@"):
            if cur is None:
                cur = _UFile(i + 1)
                files.append(cur)
            hunk, i = _parse_hunk(lines, i)
            cur.hunks.append(hunk)
            continue
        elif cur is not None:
            _git_extended(cur, line)
        i += 1
    return files


def _git_extended(cur: _UFile, line: str) -> None:
    if line.startswith("rename from "):
        cur.old, cur.rename = line[12:].strip(), True
    elif line.startswith("rename to "):
        cur.new, cur.rename = line[10:].strip(), True
    elif line.startswith("new file mode"):
        cur.created = True
    elif line.startswith("deleted file mode"):
        cur.deleted = True
    elif line.startswith(("Binary files ", "GIT binary patch")):
        name = cur.new or cur.old or (cur.git_paths or ("?", "?"))[1]
        raise PatchError(f"{name}: binary diffs cannot be applied (diff line {cur.line})")


def _unified_paths(f: _UFile, path: str | None) -> tuple[str | None, str | None, bool]:
    """(old path, new path, is a rename); None stands for /dev/null."""
    old, new = f.old, f.new
    if not f.headers and not f.rename and f.git_paths:
        old, new = f.git_paths
        old, new = (None if f.created else old), (None if f.deleted else new)
    prefixed = (old or "a/").startswith("a/") and (new or "b/").startswith("b/")
    if prefixed and not f.rename:
        old, new = (old[2:] if old else None), (new[2:] if new else None)
    if path is not None:
        keep = not f.headers
        old = path if old is not None or keep else None
        new = path if new is not None or keep else None
    return old, new, old != new and (f.rename or prefixed)


def apply_unified(text: str, read: Reader, path: str | None = None) -> list[FileOp]:
    """Apply a unified diff (one or several files).

    ``path`` names the file when the diff has no ``---``/``+++`` headers, and overrides the
    header paths of a single-file diff (harness tools that take a path plus a diff).
    """
    parsed = _parse_unified(text)
    if not parsed:
        raise PatchError("not a unified diff: no '@@' hunk and no '---'/'+++' file header")
    files = Overlay(read)
    single = path if len(parsed) == 1 else None
    ops: list[FileOp] = []
    for f in parsed:
        if f.hunks or f.rename or f.created or f.deleted:  # skip mode-only changes
            ops.append(files.record(_apply_ufile(f, files, single)))
    return ops


def _apply_ufile(f: _UFile, files: Overlay, path: str | None) -> FileOp:
    old, new, rename = _unified_paths(f, path)
    if old is None and new is None:
        raise PatchError(f"diff line {f.line}: hunk without a file name (no '---'/'+++' header)")
    if old is None:
        body = [t for h in f.hunks for tag, t in h.body if tag != "-"]
        noeol = any(h.new_noeol for h in f.hunks)
        return FileOp(str(new), "add", Text(body, False, not noeol).render())
    if new is None:
        return FileOp(old, "delete", None)
    if rename:
        content = files.get(old, "move it")
        return FileOp(old, "move", _apply_uhunks(old, content, f.hunks), new)
    if old != new:  # "diff -u f.orig f": patch whichever of the two is known, like GNU patch
        try:
            files.get(new, "update it")
        except PatchError:
            new = old
    return FileOp(new, "update", _apply_uhunks(new, files.get(new, "update it"), f.hunks))


def _hunk_sides(body: list[tuple[str, str]], fuzz: int) -> tuple[int, list[str], list[str]]:
    """Drop up to ``fuzz`` context lines at each end; return (dropped at start, old, new)."""
    lead = next((k for k, (tag, _) in enumerate(body) if tag != " "), len(body))
    trail = next((k for k, (tag, _) in enumerate(reversed(body)) if tag != " "), len(body))
    cut_start, cut_end = min(fuzz, lead), min(fuzz, trail)
    core = body[cut_start : len(body) - cut_end]
    return cut_start, [t for tag, t in core if tag != "+"], [t for tag, t in core if tag != "-"]


def _apply_uhunks(path: str, content: str, hunks: list[_UHunk]) -> str:
    text = Text.parse(content)
    lines, offset, floor = text.lines, 0, 0
    for num, hunk in enumerate(hunks, 1):
        if hunk.old_start is None:
            expected = floor
        else:  # an empty old side names the line *after* which to insert
            expected = hunk.old_start - (1 if hunk.old_count else 0) + offset
        for fuzz in range(3):
            cut, old, new = _hunk_sides(hunk.body, fuzz)
            if old:
                at = seek_near(lines, old, expected + cut, floor)
            else:
                at = min(max(expected + cut, floor), len(lines))
            if at is not None:
                break
        if at is None:
            _, old, _ = _hunk_sides(hunk.body, 0)
            raise PatchError(
                f"{path}: hunk {num} (diff line {hunk.line}): lines not found "
                f"near line {expected + 1}:\n{preview(old)}"
            )
        if fuzz:
            log.debug("%s: hunk %d applied with fuzz %d", path, num, fuzz)
        lines[at : at + len(old)] = new
        offset = at - cut - (expected - offset) + len(new) - len(old)
        floor = at + len(new)
    if any(h.new_noeol for h in hunks):
        text.final_newline = False
    elif any(h.old_noeol for h in hunks):
        text.final_newline = True
    return text.render()
