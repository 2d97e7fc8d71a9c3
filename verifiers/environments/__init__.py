"""Task environments: a coding task's dependencies and toolchain, built once, used offline.

:func:`for_task` is what validation, ``trajforge verify`` and the training reward call: it
builds (or finds in the cache) the environment the task's ``environment`` record describes,
checks that the sandbox can run every program the check needs, and returns the sandbox to run
the task in (the same backend, with the environment mounted read-only and linked into each
workspace). A task without an environment gets the sandbox it came with.

:func:`repo_reason` is the repository side of the same gate: a coding task whose session's
repository was not found (and whose workspace is therefore incomplete) or whose commit could
not be told is rejected before anything runs. See ``docs/environments.md``.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from trajforge.protocols import Limits, Sandbox
from trajforge.records import (
    ANSWER_FAMILIES,
    Environment,
    EnvironmentEvidence,
    Finding,
    Reason,
    Task,
    finding,
)
from trajforge.verifiers.environments import cache as store
from trajforge.verifiers.environments.build import EnvironmentProblem, ensure
from trajforge.verifiers.environments.session import EnvSandbox, missing_programs
from trajforge.verifiers.environments.toolchain import unavailable

__all__ = ["EnvironmentEvidence", "EnvironmentProblem", "Prepared", "for_task", "repo_reason"]

RUNTIME_FREE = frozenset({"python3", "corepack"})
"""Recipe toolchain entries the sandbox need not run itself (the runtime has python3; corepack
only fetches pnpm and yarn at build time, which then run from the environment's ``bin/``)."""
_PROBED: dict[tuple[str, str, tuple[str, ...]], tuple[str, ...]] = {}


@dataclass(frozen=True)
class Prepared:
    """The sandbox to run a task in and what was used to make it."""

    sandbox: Sandbox
    evidence: EnvironmentEvidence | None = None


def repo_reason(task: Task) -> Finding | None:
    """Why a coding task cannot stand on its recovered repository, or None.

    With ``--repos`` given and no checkout matching, a repair or extend task worked on files
    that existed before the session, in a project the session showed only in part: its
    workspace cannot be trusted to be the project (a check that fails there for a missing
    package.json says nothing about the verifier). A build task (new files from a near-empty
    start) stands on its own unless files are missing.
    """
    repo = task.source.repo
    if repo is None or task.family in ANSWER_FAMILIES:
        return None
    if repo.status == "ambiguous":
        return finding(Reason.COMMIT_AMBIGUOUS, f"{Reason.COMMIT_AMBIGUOUS}: {repo.detail}")
    if repo.status != "not_found":
        return None
    missing = [p for p in task.files.unknown if p not in task.files.shell_modified]
    if missing:
        return finding(
            Reason.REPO_NOT_FOUND,
            f"{Reason.REPO_NOT_FOUND}: {len(missing)} files the session touched could not be "
            f"recovered (e.g. {missing[0]}): {repo.detail}",
        )
    if task.family in ("repair", "extend"):  # it changed a project of which it saw a part
        return finding(
            Reason.REPO_NOT_FOUND,
            f"{Reason.REPO_NOT_FOUND}: the session changed existing files of a project whose "
            f"other files are unknown: {repo.detail}",
        )
    return None


def task_files(task_dir: Path, task: Task, env: Environment) -> dict[str, str]:
    """The manifests and lockfiles the environment was detected from (oracle, else workspace)."""
    files: dict[str, str] = {}
    for rel in env.inputs:
        for folder in (task.oracle, task.workspace):
            path = task_dir / folder / rel if folder else None
            if path is not None and path.is_file():
                files[rel] = path.read_text(encoding="utf-8", errors="surrogateescape")
                break
    return files


def for_task(
    task_dir: Path, task: Task, sandbox: Sandbox, cache_root: Path | None = None
) -> Prepared:
    """The sandbox for ``task`` with its environment in place; EnvironmentProblem when it
    cannot be had (the message starts with ``environment_unavailable`` / ``_build_failed``)."""
    env = task.environment
    if env is None or task.family in ANSWER_FAMILIES:
        return Prepared(sandbox)
    evidence = None
    wrapped: Sandbox = sandbox
    if env.recipes:
        built, cached = ensure(env, task_files(task_dir, task, env), cache_root)
        folder = store.folder(store.root(cache_root), env.hash)
        env_sandbox, location = _wrap(sandbox, built, folder)
        wrapped = env_sandbox
        evidence = EnvironmentEvidence(
            hash=env.hash,
            managers=tuple(r.manager for r in env.recipes),
            cached=cached,
            build_s=0.0 if cached else built.build_s,
            location=location,
            tools=built.tools,
            substituted=built.substituted,
        )
    _check_programs(wrapped, env)
    return Prepared(wrapped, evidence)


def _wrap(sandbox: Sandbox, built: store.BuiltEnvironment, folder: Path) -> tuple[EnvSandbox, str]:
    mounted = sandbox.with_environment(built.at(folder))
    return EnvSandbox(mounted.sandbox, built.recipes, mounted.root, mounted.path), mounted.label


def _check_programs(sandbox: Sandbox, env: Environment) -> None:
    """Every program the check needs runs inside ``sandbox``; else environment_unavailable."""
    wanted = [t for r in env.recipes for t in r.toolchain if t not in RUNTIME_FREE]
    wanted = list(dict.fromkeys([*wanted, *env.needs]))
    if not wanted:
        return
    key = (sandbox.name, sandbox.image, tuple(wanted))
    if key not in _PROBED:
        with (
            tempfile.TemporaryDirectory(prefix="trajforge-envprobe-") as tmp,
            sandbox.session(Path(tmp), Limits(timeout_s=60)) as box,
        ):
            _PROBED[key] = tuple(missing_programs(box, wanted, {}))
    missing = _PROBED[key]
    if missing:
        tool = missing[0]
        raise EnvironmentProblem(
            unavailable(
                tool,
                f"the task's check runs {tool}, which the {sandbox.name} sandbox does not have",
                _fix(tool, sandbox.name),
            ),
            Reason.ENVIRONMENT_UNAVAILABLE,
        )


def _fix(tool: str, backend: str) -> str:
    if backend == "docker":
        return f"run it with --sandbox local, or use a sandbox image that has {tool}"
    return (
        f"install {tool} under /usr/local/bin or /usr/bin on this machine (the local sandbox "
        "shows those, not folders under ~)"
    )
