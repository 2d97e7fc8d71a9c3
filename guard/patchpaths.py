"""Files a patch touches: V4A (``*** Update File:``) and unified diffs (``+++ b/path``)."""

from __future__ import annotations

import re

from trajforge.guard.effects import EffectKind

_UNIFIED_NEW = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.MULTILINE)
_UNIFIED_OLD = re.compile(r"^--- (?:a/)?(\S+)", re.MULTILINE)
_V4A_HEADER = re.compile(
    r"^\*\*\*\s*(add|delete|update|move) file:\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE
)


def patch_paths(text: str) -> list[tuple[EffectKind, str]]:
    """(effect kind, path) for every file a patch writes or deletes; [] for non-patches.

    ``create`` stands for a write that adds a new file (V4A ``Add File``, diff from /dev/null).
    """
    if "*** " in text:
        from trajforge.reconstruct.patches import PatchError, parse_v4a  # only for V4A patches

        try:
            found: list[tuple[EffectKind, str]] = []
            for section in parse_v4a(text):
                if section.action == "delete":
                    found.append(("delete", section.path))
                elif section.action == "move" and section.move_to:
                    found += [("delete", section.path), ("write", section.move_to)]
                else:
                    found.append(("create" if section.action == "add" else "write", section.path))  # type: ignore[arg-type]
            return found
        except PatchError:
            return _v4a_headers(text)
    return _unified(text)


def _v4a_headers(text: str) -> list[tuple[EffectKind, str]]:
    found: list[tuple[EffectKind, str]] = []
    for m in _V4A_HEADER.finditer(text):
        action, arg = m.group(1).lower(), m.group(2)
        if action == "move":
            src, _, dst = arg.partition("->")
            found += [("delete", src.strip()), ("write", dst.strip())]
        else:
            kind = {"delete": "delete", "add": "create"}.get(action, "write")
            found.append((kind, arg))  # type: ignore[arg-type]
    return found


def _unified(text: str) -> list[tuple[EffectKind, str]]:
    found: list[tuple[EffectKind, str]] = []
    olds = _UNIFIED_OLD.findall(text)
    for i, new in enumerate(_UNIFIED_NEW.findall(text)):
        if new == "/dev/null" and i < len(olds):
            found.append(("delete", olds[i]))
        elif new != "/dev/null":
            created = i < len(olds) and olds[i] == "/dev/null"
            found.append(("create" if created else "write", new))  # type: ignore[arg-type]
    return found
