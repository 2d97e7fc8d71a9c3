"""The shared sandbox helpers, the local backend's sessions and ``trajforge sandbox run``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from trajforge.errors import SandboxError
from trajforge.protocols import FileChanges, Sandbox, SandboxSession
from trajforge.verifiers.sandbox.common import (
    CappedBuffer,
    clean_env,
    copy_workspace,
    diff_snapshots,
    is_secret_env,
    normalize_argv,
    snapshot,
)

# --- common helpers --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("HF_TOKEN", True),
        ("hf_token", True),
        ("OPENAI_API_KEY", True),
        ("AWS_REGION", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True),
        ("AZURE_CLIENT_ID", True),
        ("GH_TOKEN", True),
        ("NPM_TOKEN", True),
        ("STRIPE_SECRET", True),
        ("DB_PASSWORD", True),
        ("PATH", False),
        ("PYTEST_ADDOPTS", False),
        ("LANG", False),
        ("TOKENIZERS_PARALLELISM", False),
    ],
)
def test_secret_patterns(name: str, secret: bool) -> None:
    assert is_secret_env(name) is secret


def test_clean_env_pins_values_and_drops_secret_extras() -> None:
    env = clean_env("/home/sandbox", {"HF_TOKEN": "x", "MY_KEY": "y", "FLAG": "1", "TZ": "X"})
    assert env["HOME"] == "/home/sandbox" and env["PYTHONHASHSEED"] == "0"
    assert env["LANG"] == env["LC_ALL"] == "C.UTF-8" and env["TERM"] == "dumb"
    assert "HF_TOKEN" not in env and "MY_KEY" not in env
    assert env["FLAG"] == "1"
    assert env["TZ"] == "X", "explicit caller extras override the pinned defaults"


def test_normalize_argv() -> None:
    assert normalize_argv("echo hi && ls") == ("sh", "-c", "echo hi && ls")
    assert normalize_argv(["python3", "-V"]) == ("python3", "-V")
    with pytest.raises(SandboxError):
        normalize_argv([])
    with pytest.raises(SandboxError):
        normalize_argv("  ")


def test_snapshot_diff_and_racy_rehash(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one")
    (tmp_path / "gone.txt").write_text("bye")
    (tmp_path / "link").symlink_to("a.txt")
    before = snapshot(tmp_path)
    assert set(before.files) == {"a.txt", "gone.txt", "link"}
    (tmp_path / "a.txt").write_text("two")  # same size, written right after the snapshot
    (tmp_path / "gone.txt").unlink()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "new.txt").write_text("new")
    after = snapshot(tmp_path, previous=before)
    assert diff_snapshots(before, after) == FileChanges(
        added=("sub/new.txt",), modified=("a.txt",), deleted=("gone.txt",)
    )


def test_copy_workspace_drops_links_that_leave(tmp_path: Path) -> None:
    src, dest = tmp_path / "src", tmp_path / "dest"
    (src / "d").mkdir(parents=True)
    dest.mkdir()
    (tmp_path / "outside.txt").write_text("host")
    (src / "d" / "f.txt").write_text("inside")
    (src / "up").symlink_to("../outside.txt")
    (src / "abs-out").symlink_to(tmp_path / "outside.txt")
    (src / "abs-in").symlink_to(src / "d" / "f.txt")
    (src / "d" / "rel-in").symlink_to("../d/f.txt")
    (src / "d" / "sneaky").symlink_to("../../outside.txt")
    report = copy_workspace(src, dest)
    assert sorted(report.dropped_symlinks) == ["abs-out", "d/sneaky", "up"]
    assert os.readlink(dest / "abs-in") == "d/f.txt", "absolute in-tree links become relative"
    assert (dest / "d" / "rel-in").read_text() == "inside"
    assert not (dest / "up").exists() and not (dest / "up").is_symlink()


def test_capped_buffer() -> None:
    buf = CappedBuffer(cap=5)
    buf.feed(b"abc")
    buf.feed(b"defgh")
    assert bytes(buf.data) == b"abcde" and buf.seen == 8 and buf.truncated
    assert buf.text().startswith("abcde") and "3 more bytes" in buf.text()


# --- local sessions --------------------------------------------------------------------


def test_registry_backend_satisfies_protocol(local_sandbox: Sandbox, workspace: Path) -> None:
    assert isinstance(local_sandbox, Sandbox) and local_sandbox.name == "local"
    with local_sandbox.session(workspace) as session:
        checked: SandboxSession = session
        assert checked.run("true").exit_code == 0


def test_run_reports_exit_output_and_changes(local_sandbox: Sandbox, workspace: Path) -> None:
    before = snapshot(workspace)
    script = (
        "echo out; echo err >&2; echo x >> pkg/calc.py; rm data/notes.txt; touch new.txt; exit 3"
    )
    with local_sandbox.session(workspace) as session:
        result = session.run(script)
        second = session.run("ls new.txt data")
    assert result.exit_code == 3 and result.stdout == "out\n" and result.stderr == "err\n"
    assert result.files == FileChanges(
        added=("new.txt",), modified=("pkg/calc.py",), deleted=("data/notes.txt",)
    )
    assert result.backend == "local" and result.command == ("sh", "-c", script)
    assert result.wall_s > 0 and not result.truncated and result.killed is None
    assert second.exit_code == 0 and second.files == FileChanges(), "state persists in a session"
    assert snapshot(workspace).files.keys() == before.files.keys(), "WORKDIR is never modified"
    assert (workspace / "pkg" / "calc.py").read_text().count("\n") == 2


def test_environment_is_clean_and_pinned(
    local_sandbox: Sandbox, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAJFORGE_LEAK_CHECK", "leaked")
    probe = (
        "import os, sys, time, locale; print(dict(os.environ)); print(os.getuid(), os.getcwd());"
        "print(time.tzname, hash('abc'), sys.flags.dont_write_bytecode)"
    )
    with local_sandbox.session(workspace) as session:
        first = session.run(["python3", "-c", probe])
        second = session.run(["python3", "-c", probe])
    assert first.exit_code == 0, first.stderr
    assert "leaked" not in first.stdout
    assert "'HOME': '/home/sandbox'" in first.stdout and "'TZ': 'UTC'" in first.stdout
    assert "/workspace" in first.stdout and "('UTC', 'UTC')" in first.stdout
    assert first.stdout == second.stdout, "PYTHONHASHSEED pins hash()"
    uid = int(first.stdout.splitlines()[1].split()[0])
    assert uid != 0, "commands never run as root"


def test_pytest_runs_inside(local_sandbox: Sandbox, workspace: Path) -> None:
    with local_sandbox.session(workspace) as session:
        result = session.run(["python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"])
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "1 passed" in result.stdout
    assert result.files == FileChanges(), "no __pycache__ is written"


def test_reset_copy_out_and_swap(local_sandbox: Sandbox, workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "only-here.txt").write_text("other\n")
    with local_sandbox.session(workspace) as session:
        session.run("echo changed > data/notes.txt; echo t > /tmp/scratch")
        session.copy_out(tmp_path / "out1")
        session.reset()
        restored = session.run("cat data/notes.txt; ls /tmp")
        session.reset(other)
        swapped = session.run("ls")
        with pytest.raises(SandboxError):
            session.copy_out(tmp_path / "out1")
    assert (tmp_path / "out1" / "data" / "notes.txt").read_text() == "changed\n"
    # /tmp is emptied but for the folder of an interpreter that lives there (a venv under /tmp)
    kept = sorted(
        {Path(p).parts[2] for p in (sys.prefix, sys.base_prefix) if p.startswith("/tmp/")}
    )
    expected = "".join(f"{name}\n" for name in ["hello", *kept])
    assert restored.stdout == expected, "reset restores the workspace and empties /tmp"
    assert swapped.stdout == "only-here.txt\n"


def test_close_is_idempotent_and_leaves_nothing(local_sandbox: Sandbox, workspace: Path) -> None:
    session = local_sandbox.session(workspace)
    holder = session.holder_pid  # type: ignore[attr-defined]
    session.run("sleep 0.1")
    session.close()
    session.close()
    assert not psutil.pid_exists(holder) or psutil.Process(holder).status() == "zombie"
    with pytest.raises(SandboxError):
        session.run("true")


def test_session_reuse_is_cheap(local_sandbox: Sandbox, workspace: Path) -> None:
    with local_sandbox.session(workspace) as session:
        session.run("true")
        start = time.monotonic()
        for _ in range(10):
            assert session.run(["true"]).exit_code == 0
        per_run = (time.monotonic() - start) / 10
    assert per_run < 0.1, f"{per_run * 1000:.1f} ms per run"


def test_bad_workspace_is_a_clear_error(local_sandbox: Sandbox, tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="not a directory"):
        local_sandbox.session(tmp_path / "missing")


# --- CLI -------------------------------------------------------------------------------


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trajforge.cli.main", "sandbox", "run", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_prints_result_and_exits_zero(workspace: Path) -> None:
    done = cli(str(workspace), "--", "sh", "-c", "echo [bold]hi[/bold]; touch made.txt; exit 4")
    assert done.returncode == 0, done.stderr
    assert "exit code: 4" in done.stdout and "[bold]hi[/bold]" in done.stdout
    assert "+ made.txt" in done.stdout
    assert not (workspace / "made.txt").exists()


def test_cli_json(workspace: Path) -> None:
    done = cli("--json", "--timeout", "1", str(workspace), "--", "sleep", "5")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["timed_out"] is True and result["killed"] == "timeout"
    assert result["backend"] == "local"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "missing WORKDIR"),
        (("/nonexistent-dir", "--", "true"), "not a directory"),
        (("--backend", "nope", ".", "--", "true"), "unknown sandbox backend"),
    ],
)
def test_cli_bad_usage_exits_2(args: tuple[str, ...], message: str) -> None:
    done = cli(*args)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr
