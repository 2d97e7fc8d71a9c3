"""Path confinement: every path a session touches becomes a safe relative path, or a violation."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from trajforge.records import Event


class PathViolation(ValueError):
    """A path that points outside the session's workspace."""


def session_root(cwd: str | None, events: Iterable[Event]) -> str | None:
    """The directory relative paths are resolved against.

    The recorded cwd when there is one; otherwise the deepest directory shared by every absolute
    path the session touched (None when it touched none).
    """
    if cwd:
        return posixpath.normpath(cwd.replace("\\", "/"))
    dirs = [
        posixpath.dirname(posixpath.normpath(e.path))
        for e in events
        if e.path and e.path.startswith("/")
    ]
    if not dirs:
        return None
    common = posixpath.commonpath(dirs)
    return common if common != "/" else None


def confine(path: str, root: str | None) -> str:
    """Return ``path`` relative to ``root``, normalised; raise PathViolation when it escapes.

    Escapes: ``..`` above the root, absolute paths outside it, ``~`` home paths, empty paths,
    and NUL bytes.
    """
    raw = _drive(path.strip().replace("\\", "/"))
    if not raw or "\x00" in raw:
        raise PathViolation(f"invalid path {path!r}")
    if raw.startswith("~"):
        raise PathViolation(f"home path {path!r} is outside the workspace")
    if raw.startswith("/") or DRIVE.match(raw):
        norm = posixpath.normpath(raw)
        base = _drive(root.replace("\\", "/")) if root else None
        if base is None or not (norm == base or norm.startswith(base.rstrip("/") + "/")):
            raise PathViolation(f"absolute path {path!r} is outside the workspace {root!r}")
        rel = posixpath.relpath(norm, base)
    else:
        rel = posixpath.normpath(raw)
    if rel in (".", "") or rel == ".." or rel.startswith("../"):
        raise PathViolation(f"path {path!r} escapes the workspace")
    return rel


DRIVE = re.compile(r"^[A-Za-z]:/")
"""A Windows absolute path, separators made ``/`` (``C:/Users/me/.agents/…``): absolute, not
a relative path that happens to start with ``C:``."""


def _drive(path: str) -> str:
    """The drive letter upper-cased (``c:/repos`` and ``C:/repos`` are one folder)."""
    return path[0].upper() + path[1:] if DRIVE.match(path) else path


HOME = re.compile(r"^(/Users/[^/]+|/home/[^/]+|/root)(?:/|$)")


def home_of(root: str | None) -> str | None:
    """The home folder a workspace root lies in (``/Users/me``, ``/home/me``, ``/root``): what
    the session's ``~`` stands for; None when the root is elsewhere."""
    m = HOME.match(root or "")
    return m.group(1) if m else None


def home_spelling(root: str | None) -> str | None:
    """The root as ``~/…`` (``/Users/me/proj`` → ``~/proj``), where it lies in a home folder:
    how a shell prompt or a command names the workspace; None elsewhere."""
    home = home_of(root)
    if root is None or home is None or not root.startswith(home + "/"):
        return None
    return "~" + root[len(home) :]
