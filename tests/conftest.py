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


RAY_MODULES = frozenset({"tests/test_executors.py", "tests/scale/test_stages_on_executors.py"})
"""Modules that start a local Ray instance: run on one pytest-xdist worker, one after the other."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``-n N --dist loadgroup``, the default in pyproject) each module is
    one group, so its module and session fixtures are built once, on one worker; the Ray
    modules are one group between them."""
    for item in items:
        module = item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group("ray" if module in RAY_MODULES else module))
