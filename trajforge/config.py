"""Layered configuration helpers: defaults → TOML file → ``key=value`` overrides."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from trajforge.errors import TrajforgeError


def read_toml(path: Path, error: type[TrajforgeError], what: str = "file") -> dict[str, Any]:
    """Parse a TOML file; unreadable or invalid files raise ``error`` naming the path."""
    try:
        return tomllib.loads(path.read_text())
    except OSError as exc:
        raise error(f"{path}: cannot read the {what}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None
