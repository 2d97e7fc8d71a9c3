"""Which format reads an input: the formats a run tries and the first whose sniff accepts it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from trajforge.errors import FormatError
from trajforge.protocols import Format
from trajforge.reconstruct.inputs import read_head
from trajforge.registry import FORMATS, create


def detect(path: Path, formats: Sequence[Format]) -> Format:
    """The first format whose sniff accepts ``path``."""
    head = read_head(path)
    if not path.is_dir() and not head.strip():
        raise FormatError(f"{path}: empty file")
    for fmt in formats:
        if fmt.sniff(path, head):
            return fmt
    known = ", ".join(f.name for f in formats)
    raise FormatError(f"{path}: not a recognised trajectory (tried {known})")


def all_formats() -> list[Format]:
    return [create(FORMATS, name, "format") for name in FORMATS]


def formats_named(name: str) -> list[Format]:
    """The formats a run tries: all of them (``auto``) or the one named."""
    return all_formats() if name == "auto" else [create(FORMATS, name, "format")]
