"""Escape suite: every attempt must be contained, reported, and leave the host unchanged.

Parametrized over the ``backend`` fixture (local, docker); docker skips loudly where no
engine or image is available.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from tests.sandbox.conftest import HostGuard, wait_no_survivors
from trajforge.protocols import Limits, Sandbox
from trajforge.verifiers.sandbox.common import snapshot

SECRET = "hf_trajforgeEscapeSuiteSecret0123456789"


def test_no_outbound_tcp_or_dns(sandbox: Sandbox, workspace: Path, host_guard: HostGuard) -> None:
    probe = (
        "import socket\n"
        "for host, port in (('1.1.1.1', 53), ('8.8.8.8', 443), ('151.101.0.223', 443)):\n"
        "    try:\n"
        "        socket.create_connection((host, port), timeout=2).close()\n"
        "        print('TCP-OPEN', host)\n"
        "    except OSError as exc:\n"
        "        print('tcp-blocked', host, type(exc).__name__)\n"
        "try:\n"
        "    print('DNS-RESOLVED', socket.getaddrinfo('pypi.org', 443))\n"
        "except OSError as exc:\n"
        "    print('dns-blocked', type(exc).__name__)\n"
    )
    with sandbox.session(workspace, Limits(timeout_s=20)) as session:
        result = session.run(["python3", "-c", probe])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.count("tcp-blocked") == 3, result.stdout
    assert "dns-blocked" in result.stdout
    assert "OPEN" not in result.stdout and "RESOLVED" not in result.stdout
    host_guard.assert_unchanged()


def test_cannot_write_outside_workspace(
    sandbox: Sandbox, workspace: Path, host_guard: HostGuard
) -> None:
    targets = [
        str(host_guard.sentinel),
        str(workspace.parent / "escaped.txt"),
        "/etc/trajforge-escaped",
        "/usr/trajforge-escaped",
        "/root/trajforge-escaped",
        "../escaped-relative.txt",
    ]
    script = "; ".join(f"echo pwned > {t} 2>/dev/null && echo WROTE {t}" for t in targets)
    with sandbox.session(workspace, Limits(timeout_s=10)) as session:
        result = session.run(script + "; true")
    assert result.exit_code == 0
    for path in ("/etc/trajforge-escaped", "/usr/trajforge-escaped", "/root/trajforge-escaped"):
        assert not Path(path).exists(), f"{path} was created on the host"
    assert not (workspace.parent / "escaped.txt").exists()
    assert not (workspace.parent / "escaped-relative.txt").exists()
    for path in ("/etc/trajforge-escaped", "/usr/trajforge-escaped"):
        assert f"WROTE {path}" not in result.stdout, "system directories must not be writable"
    host_guard.assert_unchanged()


def test_host_secrets_are_not_visible(
    sandbox: Sandbox, workspace: Path, host_guard: HostGuard, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = Path.home() / ".cache" / "huggingface" / "token"
    created = not token.exists()
    if created:
        token.parent.mkdir(parents=True, exist_ok=True)
        token.write_text(SECRET)
    secret = token.read_text().strip()
    for name in ("HF_TOKEN", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN"):
        monkeypatch.setenv(name, SECRET)
    extras = {"HF_TOKEN": SECRET, "MY_SERVICE_PASSWORD": SECRET, "PROJECT_FLAG": "visible"}
    script = f"cat ~/.cache/huggingface/token {token} 2>&1; env; ls -la {Path.home()} 2>&1"
    try:
        with sandbox.session(workspace, Limits(timeout_s=10)) as session:
            result = session.run(script, env=extras)
    finally:
        if created:
            token.unlink()
    output = result.stdout + result.stderr
    assert secret not in output and SECRET not in output
    assert "PROJECT_FLAG=visible" in result.stdout, "non-secret extras must pass through"
    assert "PYTHONHASHSEED=0" in result.stdout and "TZ=UTC" in result.stdout
    host_guard.assert_unchanged()


@pytest.mark.timeout(60)
def test_fork_bomb_is_contained(sandbox: Sandbox, workspace: Path, host_guard: HostGuard) -> None:
    shell_bomb = f": {host_guard.marker}; bomb() {{ bomb | bomb & }}; bomb; sleep 1"
    python_bomb = (
        "import os, time\n"
        "while True:\n"
        "    try:\n"
        "        os.fork()\n"
        "    except OSError:\n"
        "        time.sleep(0.01)\n"
    )
    with sandbox.session(workspace, Limits(timeout_s=3, pids=64)) as session:
        first = session.run(shell_bomb)
        second = session.run(["python3", "-c", python_bomb, host_guard.marker])
        after = session.run("echo still-usable")
    assert first.wall_s < 20
    assert second.timed_out and second.killed == "timeout"
    assert second.wall_s < 20
    assert after.exit_code == 0 and "still-usable" in after.stdout
    host_guard.assert_unchanged()


def test_memory_bomb_is_contained(sandbox: Sandbox, workspace: Path, host_guard: HostGuard) -> None:
    bomb = "blocks = []\nwhile True:\n    blocks.append(bytearray(16 * 1024 * 1024))\n"
    with sandbox.session(workspace, Limits(timeout_s=20, memory_mb=256)) as session:
        result = session.run(["python3", "-c", bomb, host_guard.marker])
    assert result.exit_code != 0
    assert result.killed == "memory", (result.killed, result.stderr[-500:])
    assert not result.timed_out
    host_guard.assert_unchanged()


def test_cpu_spin_is_killed_at_the_timeout(
    sandbox: Sandbox, workspace: Path, host_guard: HostGuard
) -> None:
    spin = "while True:\n    pass\n"
    with sandbox.session(workspace, Limits(timeout_s=30)) as session:
        result = session.run(["python3", "-c", spin, host_guard.marker], timeout=2)
    assert result.timed_out and result.killed == "timeout"
    assert result.exit_code != 0
    assert 1.5 < result.wall_s < 10
    host_guard.assert_unchanged()


def test_cpu_seconds_limit(sandbox: Sandbox, workspace: Path, host_guard: HostGuard) -> None:
    spin = "while True:\n    pass\n"
    with sandbox.session(workspace, Limits(timeout_s=20, cpu_s=1)) as session:
        result = session.run(["python3", "-c", spin, host_guard.marker])
    assert result.killed == "cpu", (result.killed, result.exit_code)
    assert result.wall_s < 15
    host_guard.assert_unchanged()


def test_disk_fill_hits_the_cap(sandbox: Sandbox, workspace: Path, host_guard: HostGuard) -> None:
    fill = (
        "import os\n"
        "for target in ('fill.bin', '/tmp/fill.bin'):\n"
        "    try:\n"
        "        with open(target, 'wb') as fh:\n"
        "            for _ in range(200):\n"
        "                fh.write(b'x' * (1 << 20)); fh.flush()\n"
        "        print('WROTE-ALL', target)\n"
        "    except OSError as exc:\n"
        "        print('stopped', target, exc.errno)\n"
        "    os.remove(target)\n"
    )
    limits = Limits(timeout_s=30, disk_mb=64, file_size_mb=512)
    with sandbox.session(workspace, limits) as session:
        result = session.run(["python3", "-c", fill])
        after = session.run("echo ok > after.txt && cat after.txt")
    assert "WROTE-ALL" not in result.stdout, result.stdout
    assert result.stdout.count("stopped") == 2, result.stdout + result.stderr
    assert after.exit_code == 0 and after.stdout.strip() == "ok"
    host_guard.assert_unchanged()


def test_file_size_limit(sandbox: Sandbox, workspace: Path, host_guard: HostGuard) -> None:
    with sandbox.session(workspace, Limits(timeout_s=20, file_size_mb=2)) as session:
        result = session.run("head -c 10000000 /dev/zero > big.bin; echo status=$?; ls -l big.bin")
    assert "status=0" not in result.stdout, result.stdout
    host_guard.assert_unchanged()


def test_huge_stdout_is_capped(sandbox: Sandbox, workspace: Path, host_guard: HostGuard) -> None:
    flood = "import sys\nfor _ in range(200):\n    sys.stdout.buffer.write(b'x' * (1 << 20))\n"
    with sandbox.session(workspace, Limits(timeout_s=60, output_bytes=100_000)) as session:
        result = session.run(["python3", "-c", flood, host_guard.marker])
    assert result.truncated
    assert len(result.stdout) < 100_000 + 200
    assert result.killed in ("output", None)
    assert result.wall_s < 30
    host_guard.assert_unchanged()


def test_daemon_does_not_survive(sandbox: Sandbox, workspace: Path, host_guard: HostGuard) -> None:
    daemon = (
        "import os, sys, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        time.sleep(300)\n"
        "    os._exit(0)\n"
        "print('parent done')\n"
    )
    with sandbox.session(workspace, Limits(timeout_s=20)) as session:
        result = session.run(["python3", "-c", daemon, host_guard.marker])
        assert result.exit_code == 0 and "parent done" in result.stdout
        assert result.wall_s < 10, "a daemon holding stdout must not keep the run alive"
        assert not wait_no_survivors(host_guard.marker), "daemon still running after the run"
    host_guard.assert_unchanged()


def test_killing_the_parent(sandbox: Sandbox, workspace: Path, host_guard: HostGuard) -> None:
    script = (
        f": {host_guard.marker}; kill -9 $PPID 2>/dev/null; kill -9 {os.getpid()} 2>/dev/null; "
        "kill -9 -1 2>/dev/null; echo survived"
    )
    with sandbox.session(workspace, Limits(timeout_s=10)) as session:
        session.run(script)
        after = session.run("echo still-usable")
    assert after.exit_code == 0 and "still-usable" in after.stdout
    host_guard.assert_unchanged()


def test_symlinks_to_host_files(
    sandbox: Sandbox,
    workspace: Path,
    host_guard: HostGuard,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    (workspace / "abs-link").symlink_to(host_guard.sentinel)
    (workspace / "rel-link").symlink_to(Path("..") / host_guard.sentinel.name)
    (workspace / "inside-link").symlink_to("data/notes.txt")
    host_guard.workdir_before = snapshot(workspace)
    script = (
        "cat abs-link rel-link 2>&1; echo overwrite > abs-link 2>&1; "
        f"ln -s {host_guard.sentinel} made-link; cat inside-link"
    )
    out = tmp_path / "copied-out"
    with caplog.at_level(logging.WARNING), sandbox.session(workspace) as session:
        result = session.run(script)
        session.copy_out(out)
    assert "host data" not in result.stdout + result.stderr
    assert "hello" in result.stdout, "symlinks inside the workspace keep working"
    dropped = caplog.text
    assert "abs-link" in dropped and "rel-link" in dropped, "dropped symlinks must be reported"
    assert not (out / "made-link").exists() and not (out / "made-link").is_symlink()
    assert (out / "inside-link").is_symlink()
    assert (out / "inside-link").read_text() == "hello\n"
    host_guard.assert_unchanged()
