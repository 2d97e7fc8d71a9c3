"""Every registered implementation satisfies its Protocol and answers to its registry name (the
guard's one detector, which no name selects, is checked in tests/guard/test_detector.py)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from trajforge.errors import UnknownName
from trajforge.protocols import EnvironmentFolder, Executor, Format, Harness, Sandbox, Teacher
from trajforge.registry import (
    EXECUTORS,
    FORMATS,
    HARNESSES,
    SANDBOXES,
    TEACHERS,
    create,
    resolve,
)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_formats_conform(name: str) -> None:
    fmt = create(FORMATS, name, "format")
    assert isinstance(fmt, Format)
    assert fmt.name == name


@pytest.mark.parametrize("name", sorted(SANDBOXES))
def test_sandboxes_conform(name: str) -> None:
    sandbox = create(SANDBOXES, name, "sandbox")
    assert isinstance(sandbox, Sandbox)
    assert sandbox.name == name
    reason = sandbox.available()
    assert reason is None or (isinstance(reason, str) and reason)


@pytest.mark.parametrize("name", sorted(SANDBOXES))
def test_sandboxes_mount_an_environment(name: str, tmp_path: Path) -> None:
    """Every backend shows a built environment folder to its runs, read-only, where it says."""
    sandbox = create(SANDBOXES, name, "sandbox")
    if (reason := sandbox.available()) is not None:
        pytest.skip(f"SANDBOX {name} UNAVAILABLE, its mount is not checked: {reason}")
    env = tmp_path / "env"
    env.mkdir()
    (env / "marker.txt").write_text(f"mounted for {name}\n")
    key = hashlib.sha256(f"conformance {name}".encode()).hexdigest()
    mounted = sandbox.with_environment(EnvironmentFolder(folder=env, key=key))
    assert isinstance(mounted.sandbox, Sandbox) and mounted.sandbox.name == name
    assert mounted.label and mounted.root.startswith("/")
    (work := tmp_path / "work").mkdir()
    with mounted.sandbox.session(work) as box:
        seen = box.run(f"cat {mounted.root}/marker.txt", timeout=60)
        wrote = box.run(f"echo x > {mounted.root}/marker.txt", timeout=60)
    assert seen.exit_code == 0 and seen.stdout == f"mounted for {name}\n"
    assert wrote.exit_code != 0  # read-only inside
    assert (env / "marker.txt").read_text() == f"mounted for {name}\n"


@pytest.mark.parametrize("name", sorted(HARNESSES))
def test_harnesses_conform(name: str) -> None:
    harness = create(HARNESSES, name, "harness")
    assert isinstance(harness, Harness)  # the one harness seam: run through any Runner
    assert harness.name == name
    paths, reason = harness.sandbox_paths()
    assert all(isinstance(p, Path) for p in paths) and (reason is None or reason)


@pytest.mark.parametrize("name", sorted(EXECUTORS))
def test_executors_conform(name: str) -> None:
    """Checked on the class: making a Ray executor would start a cluster."""
    try:
        cls = resolve(EXECUTORS, name, "executor")
    except UnknownName as exc:
        pytest.skip(f"SKIPPED: executor {name!r} cannot be imported here: {exc}")
    methods = ("available", "map", "close")  # Executor's methods
    assert all(callable(getattr(cls, m, None)) for m in methods)
    if name == "local":
        assert isinstance(cls(), Executor)


@pytest.mark.parametrize("name", sorted(TEACHERS))
def test_teachers_conform(name: str, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Made the way ``--teacher`` makes them (openai: a client on a dummy endpoint; nothing is
    asked): each satisfies Teacher and is named as the cache key will name it."""
    from trajforge.verifiers.teacher.teachers import make_teacher
    from trajforge.verifiers.validate.config import ValidateConfig

    spec = "mined" if name == "mined" else f"{name}:some-model"
    with pytest.MonkeyPatch.context() as env:
        env.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        env.setenv("OPENAI_API_KEY", "sk-conformance")
        teacher = make_teacher(spec, ValidateConfig(), tmp_path)
    assert isinstance(teacher, Teacher) and teacher.name == spec
    assert isinstance(teacher, resolve(TEACHERS, name, "teacher"))


def test_unknown_name_lists_known_ones() -> None:
    with pytest.raises(UnknownName, match="known: atif, claude-code, codex, hermes, opencode, pi"):
        resolve(FORMATS, "cursor", "format")


def test_formats_do_not_claim_each_other(fixture_sessions: dict[str, list]) -> None:
    """Each fixture is sniffed by exactly its own format."""
    from trajforge.reconstruct.inputs import read_head

    formats = [create(FORMATS, n, "format") for n in FORMATS]
    for harness, paths in fixture_sessions.items():
        for path in paths:
            head = read_head(path)
            claims = [f.name for f in formats if f.sniff(path, head)]
            assert claims == [harness], f"{path}: claimed by {claims}"


def test_every_family_is_checked_by_code_or_by_an_answer() -> None:
    """A new family must say how it is checked: by running code, or against an answer."""
    from trajforge.records import ANSWER_FAMILIES, CODE_FAMILIES, FAMILIES

    assert not set(CODE_FAMILIES) & set(ANSWER_FAMILIES)
    assert set(CODE_FAMILIES) | set(ANSWER_FAMILIES) == set(FAMILIES)
