"""Shared fixtures: the committed fixture sessions per harness."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Each worker (and every process its tests start) computes on one thread: two workers'
    # torch and tokenizer thread pools on two cores oversubscribe them (two tiny GRPO runs side
    # by side took 52 s each with the default threads, 34 s each with one; session 15).
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(_name, "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

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


LONGEST = (
    "tests/validate/test_real_typescript.py",
    "tests/validate/test_real_typescript_kept.py",
    "tests/validate/test_real_typescript_repairs.py",
    "tests/test_demo.py",
)
"""The longest modules (the real TypeScript tasks, split in three of 15 to 20 minutes each on
a loaded machine; the demo, 5), dispatched before the other slow ones: the last group to start
then ends close to the rest."""


def _group(item: pytest.Item) -> str:
    module = item.nodeid.split("::", 1)[0]
    return "ray" if module in RAY_MODULES else module


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``-n N --dist loadgroup``, the default in pyproject) each module is
    one group, so its module and session fixtures are built once, on one worker; the Ray
    modules are one group between them. ``tryfirst``: xdist's worker turns the marks into
    groups in its own hook of this name, which otherwise runs first and sees none (every
    module's tests were then spread over both workers, and its fixtures built on each).

    Groups holding a ``slow`` test are dispatched first (with ``--no-loadscope-reorder`` in
    pyproject, xdist hands groups out in collection order), so that no long module starts last
    while the other worker idles."""
    slow = set()
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_group(item)))
        if item.get_closest_marker("slow") is not None:
            slow.add(_group(item))
    first = {g: n for n, g in enumerate(LONGEST)}
    items.sort(key=lambda item: (_group(item) not in slow, first.get(_group(item), len(first))))
