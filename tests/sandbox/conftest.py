"""Sandbox fixtures: a ``backend`` parameter (local, docker), workspaces and host guards."""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from trajforge.errors import UnknownName
from trajforge.protocols import Sandbox
from trajforge.registry import SANDBOXES, create
from trajforge.verifiers.sandbox.common import Snapshot, snapshot

BACKENDS = [pytest.param("local"), pytest.param("docker", marks=pytest.mark.docker)]


def load_backend(name: str) -> Sandbox:
    """The registered backend, or a loud skip saying why it cannot run here."""
    try:
        sandbox: Sandbox = create(SANDBOXES, name, "sandbox backend")
    except UnknownName as exc:
        pytest.skip(f"SKIPPED: sandbox backend {name!r} cannot be imported: {exc}")
    reason = sandbox.available()
    if reason is not None:
        pytest.skip(f"SKIPPED: sandbox backend {name!r} is not available here: {reason}")
    return sandbox


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """Each sandbox backend name; skips loudly where one cannot run."""
    name: str = request.param
    load_backend(name)
    return name


@pytest.fixture
def sandbox(backend: str) -> Sandbox:
    return load_backend(backend)


@pytest.fixture
def local_sandbox() -> Sandbox:
    return load_backend("local")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small Python project: a module, a passing test and a nested data file."""
    root = tmp_path / "workspace"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "test_calc.py").write_text(
        "from pkg.calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    )
    (root / "data").mkdir()
    (root / "data" / "notes.txt").write_text("hello\n")
    return root


@dataclass
class HostGuard:
    """What a sandboxed command must leave untouched on the host."""

    workdir: Path
    sentinel: Path
    marker: str
    workdir_before: Snapshot
    sentinel_sha: str

    def assert_unchanged(self) -> None:
        after = snapshot(self.workdir)
        assert {k: v.sha256 for k, v in after.files.items()} == {
            k: v.sha256 for k, v in self.workdir_before.files.items()
        }, "WORKDIR changed"
        assert self.sentinel.exists(), "host sentinel file was removed"
        assert _sha(self.sentinel) == self.sentinel_sha, "host sentinel file was modified"
        survivors = wait_no_survivors(self.marker)
        assert not survivors, f"processes survived the sandbox: {survivors}"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def survivors(marker: str) -> list[str]:
    """Command lines of host processes carrying ``marker`` (other than pytest itself)."""
    found = []
    for proc in psutil.process_iter(["cmdline", "pid"]):
        cmdline = " ".join(proc.info["cmdline"] or [])
        if marker in cmdline and proc.info["pid"] != psutil.Process().pid:
            found.append(f"{proc.info['pid']}: {cmdline[:120]}")
    return found


def wait_no_survivors(marker: str, grace_s: float = 3.0) -> list[str]:
    """Survivors still there after ``grace_s`` (the kernel reaps a killed namespace quickly)."""
    deadline = time.monotonic() + grace_s
    left = survivors(marker)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = survivors(marker)
    return left


@pytest.fixture
def host_guard(workspace: Path, tmp_path: Path) -> Iterator[HostGuard]:
    """A sentinel file outside the workspace plus a unique marker for leftover processes."""
    sentinel = tmp_path / "host-sentinel.txt"
    sentinel.write_text("host data that must not change\n")
    guard = HostGuard(
        workdir=workspace,
        sentinel=sentinel,
        marker=f"tfmark{uuid.uuid4().hex[:12]}",
        workdir_before=snapshot(workspace),
        sentinel_sha=_sha(sentinel),
    )
    yield guard
    guard.assert_unchanged()
