"""Docker backend specifics against a real engine: container reuse and removal, reset,
copy-out, the container's locks, the image recipe and ``trajforge sandbox build-image``.

The escape suite (``test_escape.py``) covers containment for both backends. These tests skip
only when no Docker engine can be reached (loudly); a missing image is built first.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from trajforge.errors import SandboxError
from trajforge.protocols import Limits, Sandbox
from trajforge.verifiers.sandbox import image as image_mod
from trajforge.verifiers.sandbox.docker import DockerSandbox
from trajforge.verifiers.sandbox.docker_exec import LABEL, OWNER_LABEL, reap_leftovers

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def client() -> Any:
    """A client of a running engine, or a loud skip when none can be reached."""
    import docker

    try:
        engine = docker.from_env(timeout=30)
        engine.ping()
    except docker.errors.DockerException as exc:
        pytest.skip(f"SKIPPED: no Docker engine reachable ({exc}); run .ci/docker-setup.sh as root")
    return engine


@pytest.fixture(scope="module")
def docker_sandbox(client: Any) -> DockerSandbox:
    """The backend with its image present (built here if missing: needs root + debootstrap)."""
    if image_mod.image_state(client) is not None:
        image_mod.build_image()
    sandbox = DockerSandbox()
    assert sandbox.available() is None
    return sandbox


def _exists(client: Any, container_id: str) -> bool:
    import docker

    try:
        client.containers.get(container_id)
    except docker.errors.NotFound:
        return False
    return True


def test_backend_satisfies_the_protocol() -> None:
    assert isinstance(DockerSandbox(), Sandbox)
    assert DockerSandbox.name == "docker"


def test_session_reuses_one_container_and_removes_it(
    client: Any, docker_sandbox: DockerSandbox, workspace: Path
) -> None:
    with docker_sandbox.session(workspace, Limits(timeout_s=20)) as session:
        container_id = session.container_id
        assert container_id is not None and _exists(client, container_id)
        first = session.run("echo one > one.txt; hostname")
        second = session.run(["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"])
        assert session.container_id == container_id
    assert first.exit_code == 0 and first.stdout.strip() == "sandbox"
    assert first.files.added == ("one.txt",)
    assert second.exit_code == 0, second.stdout + second.stderr
    assert "1 passed" in second.stdout
    assert not _exists(client, container_id)
    session.close()  # idempotent


def test_container_removed_when_the_block_raises(
    client: Any, docker_sandbox: DockerSandbox, workspace: Path
) -> None:
    seen: list[str] = []
    with pytest.raises(RuntimeError, match="boom"), docker_sandbox.session(workspace) as session:
        seen.append(session.container_id or "")
        raise RuntimeError("boom")
    assert seen[0] and not _exists(client, seen[0])
    with pytest.raises(SandboxError, match="closed"):
        session.run("true")


def test_session_start_failure_leaves_no_container(
    client: Any, docker_sandbox: DockerSandbox, tmp_path: Path
) -> None:
    with pytest.raises(SandboxError, match="not a directory"):
        docker_sandbox.session(tmp_path / "missing")
    (tmp_path / "ws").mkdir()
    with pytest.raises(SandboxError, match="could not start"):
        DockerSandbox(image="trajforge-sandbox:1", cpus=-1.0).session(tmp_path / "ws")
    mine = {"label": f"{OWNER_LABEL}={os.uname().nodename}:{os.getpid()}"}
    assert client.containers.list(all=True, filters=mine) == []


def test_container_is_locked_down(
    client: Any, docker_sandbox: DockerSandbox, workspace: Path
) -> None:
    limits = Limits(memory_mb=300, pids=50, disk_mb=32)
    with docker_sandbox.session(workspace, limits) as session:
        host = client.api.inspect_container(session.container_id)["HostConfig"]
        who = session.run("id -u; touch /etc/x 2>&1; df -m /workspace | tail -1")
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["Memory"] == host["MemorySwap"] == 300 << 20
    assert host["PidsLimit"] >= 50 and host["Init"] is True
    uid = who.stdout.splitlines()[0]
    assert uid.isdigit() and int(uid) >= 100_000, "commands must not run as root"
    assert "Read-only file system" in who.stdout
    assert who.stdout.split()[-5] == "32", who.stdout  # tmpfs size in MB


def test_reset_swaps_the_workspace_in_the_same_container(
    docker_sandbox: DockerSandbox, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "only-here.txt").write_text("other\n")
    with docker_sandbox.session(workspace) as session:
        container_id = session.container_id
        changed = session.run("rm test_calc.py; echo x >> pkg/calc.py; echo new > new.txt")
        session.reset()
        restored = session.run("ls; cat pkg/calc.py")
        session.reset(other)
        swapped = session.run("ls -A")
        assert session.container_id == container_id
    assert changed.files.added == ("new.txt",)
    assert changed.files.modified == ("pkg/calc.py",)
    assert changed.files.deleted == ("test_calc.py",)
    assert "test_calc.py" in restored.stdout and "new.txt" not in restored.stdout
    assert "x\n" not in restored.stdout
    assert restored.files == type(restored.files)(), "a reset run starts from the reset state"
    assert swapped.stdout.split() == ["only-here.txt"]


def test_copy_out(docker_sandbox: DockerSandbox, workspace: Path, tmp_path: Path) -> None:
    with docker_sandbox.session(workspace) as session:
        session.run("mkdir -p out/deep && echo made > out/deep/f.txt && ln -s out/deep/f.txt ln")
        dest = tmp_path / "copied"
        session.copy_out(dest)
        with pytest.raises(SandboxError, match="already exists"):
            session.copy_out(dest)
    assert (dest / "out" / "deep" / "f.txt").read_text() == "made\n"
    assert (dest / "ln").is_symlink() and (dest / "ln").read_text() == "made\n"
    assert (dest / "pkg" / "calc.py").read_text() == (workspace / "pkg" / "calc.py").read_text()
    assert not (workspace / "out").exists(), "WORKDIR itself is never modified"


def test_timeout_override_and_exit_codes(docker_sandbox: DockerSandbox, workspace: Path) -> None:
    with docker_sandbox.session(workspace, Limits(timeout_s=30)) as session:
        slow = session.run("sleep 20", timeout=1)
        failed = session.run(["sh", "-c", "echo err >&2; exit 3"])
        missing = session.run(["no-such-program"])
    assert slow.timed_out and slow.killed == "timeout" and slow.wall_s < 5
    assert failed.exit_code == 3 and failed.stderr == "err\n"
    assert missing.exit_code is None and "no-such-program" in missing.stderr


def test_reused_runs_are_cheap(docker_sandbox: DockerSandbox, workspace: Path) -> None:
    with docker_sandbox.session(workspace) as session:
        session.run("true")
        started = time.monotonic()
        for _ in range(5):
            session.run("true")
        per_run = (time.monotonic() - started) / 5
    assert per_run < 1.0, f"{per_run:.3f} s per reused run"


def test_image_carries_the_recipe_label(client: Any, docker_sandbox: DockerSandbox) -> None:
    image = client.images.get(image_mod.IMAGE_TAG)
    assert image.labels[image_mod.RECIPE_LABEL] == image_mod.recipe_hash()
    assert image.attrs["Config"]["User"] == "65534:65534"
    assert DockerSandbox(image="trajforge-sandbox:no-such-tag").available() == (
        "image trajforge-sandbox:no-such-tag is missing"
    )


def test_build_image_cli_is_idempotent(docker_sandbox: DockerSandbox) -> None:
    argv = [sys.executable, "-m", "trajforge.cli.main", "sandbox", "build-image", "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["built"] is False and result["tag"] == image_mod.IMAGE_TAG
    assert result["recipe"] == image_mod.recipe_hash()
    assert "up to date" in done.stderr


def test_unreachable_engine_is_reported(tmp_path: Path) -> None:
    env = {**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/no.sock"}
    code = "from trajforge.verifiers.sandbox.docker import DockerSandbox; "
    code += "print(DockerSandbox().available())"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert "unreachable" in done.stdout and "dockerd" in done.stdout
    argv = [sys.executable, "-m", "trajforge.cli.main", "sandbox", "build-image"]
    failed = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    assert failed.returncode == 2 and "Traceback" not in failed.stderr
    assert "unreachable" in failed.stderr


@pytest.fixture
def orphan(client: Any, docker_sandbox: DockerSandbox) -> Iterator[str]:
    dead = subprocess.Popen(["true"])
    dead.wait()
    labels = {LABEL: "1", OWNER_LABEL: f"{os.uname().nodename}:{dead.pid}"}
    container = client.containers.create(image_mod.IMAGE_TAG, ["true"], labels=labels)
    yield container.id
    if _exists(client, container.id):
        container.remove(force=True)


def test_reap_leftovers_removes_orphans_only(
    client: Any, docker_sandbox: DockerSandbox, workspace: Path, orphan: str
) -> None:
    with docker_sandbox.session(workspace) as session:
        removed = reap_leftovers(client)
        assert session.container_id not in removed
        assert _exists(client, session.container_id or "")
    # another test process starting a sandbox on this engine reaps leftovers too and may have
    # removed the orphan first; either way it is gone and the live session's container was not
    assert not _exists(client, orphan)
    if orphan not in removed:
        print(f"the orphan {orphan[:12]} was reaped by another process on this engine")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("deb http://mirror.example/debian bookworm main\n", "http://mirror.example/debian"),
        (
            "deb http://security.debian.org/debian-security bookworm-security main\n"
            "deb [arch=amd64] http://ftp.example/debian/ bookworm main\n",
            "http://ftp.example/debian/",
        ),
        (
            "Types: deb\nURIs: https://deb.nodesource.com/node_20.x\nSuites: nodistro\n\n"
            "Types: deb\n# comment\nURIs: http://deb.debian.org/debian\n"
            "Suites: bookworm bookworm-updates\n",
            "http://deb.debian.org/debian",
        ),
        ("deb http://archive.ubuntu.com/ubuntu jammy main\n", image_mod.DEFAULT_MIRROR),
    ],
)
def test_apt_mirror(tmp_path: Path, text: str, expected: str) -> None:
    sources = tmp_path / "sources.list"
    sources.write_text(text)
    assert image_mod.apt_mirror([sources, tmp_path / "missing.list"]) == expected
