"""One session that its harness wrote in two shapes, read once.

hermes's gateway writes each session twice into ``~/.hermes/sessions``: the snapshot
``session_<id>.json`` and the transcript ``<id>.jsonl``. Read as two inputs, the same work
becomes two sets of episodes (duplicate triage drops, duplicate candidates). A format whose
harness does this implements :class:`TwoShapes`; before any input is read, :func:`same_sessions`
finds the inputs of a run that hold the same session and picks the one to read — the richest
shape, then the larger file, then the first input — and the pipeline counts each other one as
the same session instead of reading it.

Finding them is cheap: file names first (no I/O), then the first bytes of only those inputs
whose names pair up.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from trajforge.errors import FormatError
from trajforge.protocols import Format
from trajforge.reconstruct.inputs import read_head

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Shape:
    """How one input holds its session."""

    session_id: str
    """The session's id, as the harness gave it."""
    name: str
    """The shape, in words (``session snapshot``)."""
    rank: int
    """Higher for the shape that holds more of the session."""


@runtime_checkable
class TwoShapes(Protocol):
    """A format whose harness writes one session as two files."""

    name: str

    def twin_key(self, path: Path) -> str | None:
        """The session id ``path``'s name says it holds, when its name is one of the shapes
        (no I/O); inputs whose keys differ are never the same session."""
        ...

    def shape(self, path: Path, head: bytes) -> Shape | None:
        """The shape and session id of ``path`` (first bytes ``head``); None: not one of them."""
        ...


def same_sessions(inputs: Sequence[Path], formats: Sequence[Format]) -> dict[int, Path]:
    """Index of each input that holds a session another input also holds → the input that is
    read instead. ``formats`` are those the run tries, in order."""
    same: dict[int, Path] = {}
    for fmt in formats:
        if not isinstance(fmt, TwoShapes):
            continue
        keys: defaultdict[str, list[int]] = defaultdict(list)
        for index, path in enumerate(inputs):
            key = fmt.twin_key(path) if index not in same else None
            if key:
                keys[key].append(index)
        for group in keys.values():
            if len(group) > 1:
                same.update(_pick(fmt, formats, [(i, inputs[i]) for i in group]))
    return same


def _pick(
    fmt: TwoShapes, formats: Sequence[Format], group: list[tuple[int, Path]]
) -> dict[int, Path]:
    """Inputs of one name key that hold the same session → the one read instead of each."""
    by_session: defaultdict[str, list[tuple[int, Path, Shape]]] = defaultdict(list)
    for index, path in group:
        shape = _shape_of(fmt, formats, path)
        if shape is not None:
            by_session[shape.session_id].append((index, path, shape))
    same: dict[int, Path] = {}
    for session_id, held in by_session.items():
        if len(held) < 2:
            continue
        kept = max(held, key=lambda h: (h[2].rank, _size(h[1]), -h[0]))
        for index, path, shape in held:
            if index != kept[0]:
                same[index] = kept[1]
                log.info(
                    "%s session %s is in two inputs: reading %s (%s), not %s (%s)",
                    fmt.name,
                    session_id,
                    kept[1],
                    kept[2].name,
                    path,
                    shape.name,
                )
    return same


def _shape_of(fmt: TwoShapes, formats: Sequence[Format], path: Path) -> Shape | None:
    """``path``'s shape, when the run would read it as ``fmt`` (the first format to sniff it)."""
    try:
        head = read_head(path)
        reader = next((f for f in formats if f.sniff(path, head)), None)
        return fmt.shape(path, head) if reader is fmt else None
    except (FormatError, OSError, ValueError):  # read, and reported, as any other input
        log.debug("%s: no shape", path, exc_info=True)
        return None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
