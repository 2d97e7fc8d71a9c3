"""Apply harness patches to in-memory files: OpenAI V4A, unified diffs, search/replace edits.

Pure functions: callers pass ``read(path)`` (current content, or None when unknown) and get
back one :class:`FileOp` per touched file. V4A hunks are located the way Codex's
``apply_patch`` does (exact, then ignoring trailing whitespace, then ignoring surrounding
whitespace, then folding typographic punctuation; forward from the previous hunk; ``@@``
lines anchor the search), with a few leniencies for other harnesses (hermes ``@@ hint @@``
and ``*** Move File: a -> b``, unprefixed context lines, several stacked ``@@`` anchors).
Unified diffs are applied near the stated line with whitespace tolerance and a small fuzz.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from trajforge.reconstruct.patch_text import (
    Action,
    FileOp,
    Overlay,
    PatchError,
    Reader,
    Text,
    preview,
    seek,
    splice,
)
from trajforge.reconstruct.unified_diff import apply_unified
from trajforge.records import Edit

__all__ = [
    "FileOp",
    "PatchError",
    "V4AChunk",
    "V4AFile",
    "apply_edits",
    "apply_unified",
    "apply_v4a",
    "parse_v4a",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class V4AChunk:
    """One ``@@`` hunk of a V4A update: anchors, old lines, new lines."""

    anchors: tuple[str, ...]
    old: tuple[str, ...]
    new: tuple[str, ...]
    eof: bool = False


@dataclass(frozen=True)
class V4AFile:
    """One file section of a V4A patch."""

    action: Action
    path: str
    line: int
    """1-based line of the section header in the patch text."""
    content: str | None = None
    """Full content for ``add``."""
    move_to: str | None = None
    chunks: tuple[V4AChunk, ...] = ()


# ---------------------------------------------------------------- V4A parsing

_MARKER = re.compile(
    r"^\*\*\*\s*(begin patch|end patch|add file|delete file|update file|move file|move to"
    r"|end of file)\s*:?\s*(.*?)\s*$",
    re.IGNORECASE,
)
_UNIFIED_RANGE = re.compile(r"^-\d+(,\d+)?\s+\+\d+(,\d+)?$")


def _marker(line: str) -> tuple[str, str] | None:
    m = _MARKER.match(line)
    return (" ".join(m.group(1).lower().split()), m.group(2)) if m else None


def _body_lines(text: str) -> list[tuple[int, str]]:
    """Numbered lines between ``*** Begin Patch`` and ``*** End Patch`` (both optional)."""
    raw = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    numbered = list(enumerate(raw, 1))
    kinds = [(_marker(line.strip()) or ("", ""))[0] for _, line in numbered]
    begin = next((i for i, k in enumerate(kinds) if k == "begin patch"), None)
    if begin is None:  # tolerate a missing Begin line when the text starts with a file header
        first = next((i for i, (_, line) in enumerate(numbered) if line.strip()), None)
        if first is None or kinds[first] in ("", "end patch"):
            raise PatchError("not a V4A patch: no '*** Begin Patch' line")
        begin = first - 1
    end = next((i for i in range(len(kinds) - 1, begin, -1) if kinds[i] == "end patch"), None)
    if end is None:
        log.debug("V4A patch without '*** End Patch'; using the text to its end")
        end = len(numbered)
    return numbered[begin + 1 : end]


def parse_v4a(text: str) -> list[V4AFile]:
    """Parse an OpenAI/Codex ``apply_patch`` (V4A) patch into file sections."""
    lines = _body_lines(text)
    files: list[V4AFile] = []
    i = 0
    while i < len(lines):
        no, line = lines[i]
        if not line.strip():
            i += 1
            continue
        kind, arg = _marker(line.strip()) or ("", "")
        if kind not in ("add file", "delete file", "update file", "move file"):
            raise PatchError(
                f"patch line {no}: expected '*** Add File:', '*** Update File:' or "
                f"'*** Delete File:', got {line[:80]!r}"
            )
        if not arg:
            raise PatchError(f"patch line {no}: '*** {kind.title()}:' without a path")
        if kind == "add file":
            section, i = _parse_add(lines, i + 1, arg, no)
        elif kind == "update file":
            section, i = _parse_update(lines, i + 1, arg, no)
        else:
            section, i = _parse_simple(kind, arg, no), i + 1
        files.append(section)
    return files


def _parse_simple(kind: str, arg: str, no: int) -> V4AFile:
    if kind == "delete file":
        return V4AFile("delete", arg, no)
    src, sep, dst = arg.partition("->")
    if not sep or not src.strip() or not dst.strip():
        raise PatchError(f"patch line {no}: '*** Move File:' needs 'old/path -> new/path'")
    return V4AFile("move", src.strip(), no, move_to=dst.strip())


def _parse_add(lines: list[tuple[int, str]], i: int, path: str, no: int) -> tuple[V4AFile, int]:
    content: list[str] = []
    explicit = 0  # number of content lines up to the last '+' line
    while i < len(lines) and not lines[i][1].startswith("***"):
        lno, line = lines[i]
        if line.startswith("+"):
            content.append(line[1:])
            explicit = len(content)
        elif not line.strip():
            content.append("")
        else:
            raise PatchError(
                f"patch line {lno}: in '*** Add File: {path}' every line must "
                f"start with '+', got {line[:80]!r}"
            )
        i += 1
    content = content[:explicit]
    text = "".join(f"{x}\n" for x in content)
    return V4AFile("add", path, no, content=text), i


@dataclass
class _ChunkBuilder:
    anchors: list[str] = field(default_factory=list)
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    started: bool = False

    def has_lines(self) -> bool:
        return bool(self.old or self.new)

    def add(self, line: str) -> None:
        """One body line: ' ', '-', '+', a bare line (hermes: context), or a skipped line."""
        if line.startswith("\\") or (not line.strip() and not self.started):
            return  # "\ No newline at end of file"; blank lines between hunks
        self.started = True
        tag, body = (line[0], line[1:]) if line[:1] in (" ", "-", "+") else (" ", line)
        if tag != "+":
            self.old.append(body)
        if tag != "-":
            self.new.append(body)

    def build(self, eof: bool = False) -> V4AChunk:
        return V4AChunk(tuple(self.anchors), tuple(self.old), tuple(self.new), eof)


def _anchor(line: str) -> str | None:
    text = line[2:].strip()
    if text.endswith("@@"):  # hermes: "@@ def greet @@"; git: "@@ -1,2 +1,3 @@ def f():"
        text = text[:-2].strip()
    head, sep, tail = text.partition(" @@")
    if sep and _UNIFIED_RANGE.match(head.strip()):
        text = tail.strip()
    if _UNIFIED_RANGE.match(text):
        return None
    return text or None


def _parse_update(lines: list[tuple[int, str]], i: int, path: str, no: int) -> tuple[V4AFile, int]:
    move_to = None
    if i < len(lines) and (m := _marker(lines[i][1])) and m[0] == "move to":
        move_to, i = m[1], i + 1
    chunks: list[V4AChunk] = []
    cur = _ChunkBuilder()
    while i < len(lines):
        lno, line = lines[i]
        i += 1
        if line.startswith("***"):
            kind = (_marker(line) or ("", ""))[0]
            if kind != "end of file":
                i -= 1
                break
            if not cur.has_lines():
                raise PatchError(f"patch line {lno}: '*** End of File' after an empty hunk")
            chunks.append(cur.build(eof=True))
            cur = _ChunkBuilder()
        elif line.startswith("@@"):
            if cur.has_lines():
                chunks.append(cur.build())
                cur = _ChunkBuilder()
            cur.started = True
            if (anchor := _anchor(line)) is not None:
                cur.anchors.append(anchor)
        else:
            cur.add(line)
    if cur.has_lines():
        chunks.append(cur.build())
    elif cur.anchors:
        raise PatchError(f"{path}: hunk {len(chunks) + 1} has an '@@' anchor but no lines")
    if not chunks and move_to is None:
        raise PatchError(f"patch line {no}: '*** Update File: {path}' has no hunks")
    action: Action = "move" if move_to else "update"
    return V4AFile(action, path, no, move_to=move_to, chunks=tuple(chunks)), i


# ---------------------------------------------------------------- V4A application


def apply_v4a(text: str, read: Reader) -> list[FileOp]:
    """Apply a V4A patch; sections see the effect of earlier sections of the same patch."""
    files = Overlay(read)
    ops: list[FileOp] = []
    for section in parse_v4a(text):
        if section.action == "add":
            op = FileOp(section.path, "add", section.content)
        elif section.action == "delete":
            op = FileOp(section.path, "delete", None)
        else:
            original = files.get(section.path, "update it")
            content = _apply_chunks(section.path, original, section.chunks)
            op = FileOp(section.path, section.action, content, section.move_to)
        ops.append(files.record(op))
    return ops


def _seek_anchors(path: str, num: int, lines: list[str], chunk: V4AChunk, idx: int) -> int:
    for anchor in chunk.anchors:
        hit = seek(lines, [anchor], [idx])
        if hit is None:  # hermes hints may be part of a line ("def greet" for "def greet():")
            hit = next((i for i in range(idx, len(lines)) if anchor.strip() in lines[i]), None)
        if hit is None:
            if chunk.old:
                log.debug(
                    "%s: hunk %d: anchor %r not found; searching without it", path, num, anchor
                )
                return idx
            raise PatchError(f"{path}: hunk {num}: context '@@ {anchor}' not found")
        idx = hit + 1
    return idx


def _find_chunk(
    lines: list[str], chunk: V4AChunk, idx: int
) -> tuple[int | None, list[str], list[str]]:
    """Locate a hunk forward from ``idx``, then anywhere (hermes applies hunks in any order).

    Trailing blank context lines are retried without: they often stand for the final newline.
    """
    variants = [(list(chunk.old), list(chunk.new))]
    while variants[-1][0][-1:] == [""] and variants[-1][1][-1:] == [""]:
        old, new = variants[-1]
        variants.append((old[:-1], new[:-1]))
    for forward in (True, False):
        for old, new in variants:
            if not old:
                continue
            starts = [idx] if forward else [0]
            if chunk.eof:
                starts.insert(0, len(lines) - len(old))
            hit = seek(lines, old, starts)
            if hit is not None:
                return hit, old, new
    return None, variants[0][0], variants[0][1]


def _apply_chunks(path: str, content: str, chunks: Sequence[V4AChunk]) -> str:
    text = Text.parse(content)
    lines = text.lines
    repl: list[tuple[int, int, list[str]]] = []
    idx = 0
    for num, chunk in enumerate(chunks, 1):
        idx = _seek_anchors(path, num, lines, chunk, idx)
        if not chunk.old:  # pure addition: Codex appends at the end of the file
            repl.append((len(lines), 0, list(chunk.new)))
            continue
        hit, old, new = _find_chunk(lines, chunk, idx)
        if hit is None:
            raise PatchError(f"{path}: hunk {num}: expected lines not found:\n{preview(old)}")
        repl.append((hit, len(old), new))
        idx = hit + len(old)
    text.lines = splice(path, lines, repl)
    text.final_newline = True  # Codex always ends an updated file with a newline
    return text.render()


# ---------------------------------------------------------------- search/replace edits


def apply_edits(content: str, edits: Sequence[Edit]) -> str:
    """Apply search/replace edits in order; each ``old`` must occur once unless replace_all."""
    for num, edit in enumerate(edits, 1):
        old, new = edit.old, edit.new
        if old == "":
            if content:
                raise PatchError(f"edit {num}: empty old text on a non-empty file")
            content = new
            continue
        count = content.count(old)
        if count == 0 and "\r\n" in content and "\n" in old and "\r\n" not in old:
            old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
            count = content.count(old)
        shown = edit.old[:80]
        if count == 0:
            raise PatchError(f"edit {num}: old text not found: {shown!r}")
        if count > 1 and not edit.replace_all:
            raise PatchError(
                f"edit {num}: old text occurs {count} times (not replace_all): {shown!r}"
            )
        content = content.replace(old, new) if edit.replace_all else content.replace(old, new, 1)
    return content
