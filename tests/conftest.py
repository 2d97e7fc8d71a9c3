"""Shared fixtures: the committed fixture sessions per harness."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "sessions"
SESSION_SUFFIXES = (".jsonl", ".json", ".gz", ".db")


def fixture_paths() -> dict[str, list[Path]]:
    """Session inputs per harness folder (files, plus opencode storage trees)."""
    found: dict[str, list[Path]] = {}
    for folder in sorted(p for p in FIXTURES.iterdir() if p.is_dir()):
        paths = [p for p in sorted(folder.iterdir()) if p.name.endswith(SESSION_SUFFIXES)]
        paths += [p for p in sorted(folder.iterdir()) if p.is_dir() and (p / "session").is_dir()]
        found[folder.name] = paths
    return found


@pytest.fixture(scope="session")
def fixture_sessions() -> dict[str, list[Path]]:
    return fixture_paths()
