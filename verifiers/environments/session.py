"""A sandbox whose every run sees the task's built environment, read-only, with no network.

:class:`EnvSandbox` wraps a backend (local: the environment folder exposed read-only at its
host path; docker: a derived image holding it under ``/opt/trajforge/env``). After every
``reset`` the session links each ``node_modules`` into the workspace (the workspace is a fresh
copy each time), and every run gets PATH (the environment's ``bin/``, ``node_modules/.bin``,
the node toolchain) and PYTHONPATH (the installed packages, then the project's ``src``).
"""

from __future__ import annotations

import logging
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from trajforge.closing import Closing
from trajforge.errors import SandboxError
from trajforge.protocols import (
    EnvironmentFolder,
    Limits,
    Mounted,
    RunResult,
    Sandbox,
    SandboxSession,
)
from trajforge.records import EnvironmentRecipe
from trajforge.verifiers.sandbox.common import SAFE_PATH
from trajforge.verifiers.sandbox.docker_exec import WORKSPACE

log = logging.getLogger(__name__)

RUN_ENV = {
    "npm_config_update_notifier": "false",
    "npm_config_audit": "false",
    "npm_config_fund": "false",
    "npm_config_offline": "true",
    "COREPACK_ENABLE_NETWORK": "0",
    "COREPACK_ENABLE_STRICT": "0",
}
"""Every run: npm and corepack never try the network (there is none; failing fast is clearer)."""


def base_path(backend: str) -> str:
    """PATH a backend gives its runs (the local one puts the running interpreter first)."""
    if backend == "local":
        dirs = [
            str(Path(sys.executable).parent),
            str(Path(sys.prefix) / "bin"),
            *SAFE_PATH.split(":"),
        ]
        return ":".join(dict.fromkeys(dirs))
    return SAFE_PATH


WRITABLE_CACHES = (".vite-temp", ".vite", ".cache")
"""Folders tools write inside ``node_modules`` (vite bundles a config into ``.vite-temp``)."""


def _linked_modules(target: str, link: str) -> list[str]:
    """A writable ``node_modules`` whose every entry links to the read-only environment's, plus
    the cache folders tools write there (a symlink to the whole folder made vitest fail to load
    any config: vite writes the bundled config into ``node_modules/.vite-temp``)."""
    src, dst = shlex.quote(target), shlex.quote(link)
    caches = " ".join(shlex.quote(f"{link}/{name}") for name in WRITABLE_CACHES)
    return [
        f"rm -rf {dst}",
        f"mkdir -p {dst}",
        f"find {src} -mindepth 1 -maxdepth 1 -exec ln -s -t {dst} {{}} +",
        f"mkdir -p {caches}",
    ]


BUILD_FAILED = "trajforge: build step failed:"


def _build_line(step: str) -> str:
    """A compile step (``cd MEMBER && COMPILER …``), run from the workspace; its failure (also
    where the workspace lacks the member: an empty one, a control) is reported, never fatal —
    the checks that import what it builds then fail, and are blamed on the environment."""
    failed = shlex.quote(f"{BUILD_FAILED} {step}")
    return f"cd {WORKSPACE} && {{ ({step}) >&2 || echo {failed} >&2; }}"


class EnvSandbox:
    """A backend plus one environment: what every session links and sets."""

    def __init__(
        self,
        inner: Sandbox,
        recipes: Sequence[EnvironmentRecipe],
        env_root: str,
        extra_path: Sequence[str] = (),
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.image = inner.image
        self.recipes = tuple(recipes)
        self.env_root = env_root.rstrip("/")
        """Where the environment folder is inside the sandbox."""
        self.extra_path = tuple(extra_path)
        """Toolchain folders inside the sandbox put on PATH (docker: the node toolchain)."""

    def available(self) -> str | None:
        return self.inner.available()

    def session(self, workspace: Path, limits: Limits | None = None) -> EnvSession:
        return EnvSession(self.inner.session(workspace, limits), self)

    def with_environment(self, env: EnvironmentFolder) -> Mounted:
        """The backend with ``env`` in place of this environment."""
        return self.inner.with_environment(env)

    def setup_script(self) -> str:
        """Shell run after each reset: link every recipe's node_modules into the workspace."""
        lines = ["set -e"]
        for recipe in self.recipes:
            if recipe.ecosystem != "node":
                continue
            folder = f"{WORKSPACE}/{recipe.root}".rstrip("/")
            link = f"{folder}/node_modules"
            target = f"{self.env_root}/node/{recipe.root}".rstrip("/") + "/node_modules"
            lines.append(f"mkdir -p {shlex.quote(folder)}")
            lines += _linked_modules(target, link)
            lines += self._member_links(recipe)
        for recipe in self.recipes:  # after every link: a member's compiler may be another's
            lines += [_build_line(step) for step in recipe.builds]
        return "\n".join(lines) if len(lines) > 1 else ""

    def _member_links(self, recipe: EnvironmentRecipe) -> list[str]:
        """Workspace members' own node_modules (what the install did not hoist), linked where
        the built environment has one and the workspace has the member (an empty workspace,
        a control, has none)."""
        lines = []
        for manifest in recipe.workspaces:
            member = manifest.rsplit("/", 1)[0]
            target = f"{self.env_root}/node/{member}/node_modules"
            folder = f"{WORKSPACE}/{member}"
            present = f"[ -d {shlex.quote(target)} ] && [ -d {shlex.quote(folder)} ]"
            writable = "; ".join(_linked_modules(target, f"{folder}/node_modules"))
            lines.append(f"if {present}; then {writable}; fi")
        return lines

    def run_env(self) -> dict[str, str]:
        """Variables every run gets."""
        paths = [f"{self.env_root}/bin", *self.extra_path]
        pythonpath: list[str] = []
        for recipe in self.recipes:
            if recipe.ecosystem == "node":
                folder = f"{WORKSPACE}/{recipe.root}".rstrip("/")
                paths.append(f"{folder}/node_modules/.bin")
            elif recipe.ecosystem == "python":
                pythonpath.append(f"{self.env_root}/python/site")
                pythonpath += [f"{WORKSPACE}/{p}" for p in recipe.pythonpath]
                paths.append(f"{self.env_root}/python/site/bin")
        env = dict(RUN_ENV)
        env["PATH"] = ":".join([*dict.fromkeys(paths), base_path(self.name)])
        if pythonpath:
            env["PYTHONPATH"] = ":".join(dict.fromkeys(pythonpath))
        return env


class EnvSession(Closing):
    """One live session of the wrapped backend with the environment in place."""

    def __init__(self, inner: SandboxSession, owner: EnvSandbox) -> None:
        self.inner = inner
        self.owner = owner
        self._env = owner.run_env()
        self._script = owner.setup_script()
        try:
            self._setup()
        except BaseException:
            inner.close()
            raise

    def _setup(self) -> None:
        if not self._script:
            return
        builds = any(r.builds for r in self.owner.recipes)
        timeout = 600 if builds else 60
        done = self.inner.run(["sh", "-c", self._script], timeout=timeout, env=self._env)
        if done.exit_code != 0:
            raise SandboxError(f"linking the task environment failed: {done.stderr.strip()}")
        if BUILD_FAILED in done.stderr:
            log.info("%s", done.stderr.strip()[-2000:])

    def run(
        self,
        command: Sequence[str] | str,
        *,
        timeout: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> RunResult:
        merged = {**self._env, **(env or {})}
        if env and "PATH" in env:
            merged["PATH"] = f"{self._env['PATH']}:{env['PATH']}"
        return self.inner.run(command, timeout=timeout, env=merged)

    def reset(self, workspace: Path | None = None) -> None:
        self.inner.reset(workspace)
        self._setup()

    def copy_out(self, dest: Path) -> None:
        self.inner.copy_out(dest)

    def close(self) -> None:
        self.inner.close()


def missing_programs(
    box: SandboxSession, programs: Sequence[str], env: Mapping[str, str]
) -> list[str]:
    """Which of ``programs`` the sandbox cannot find on its PATH."""
    if not programs:
        return []
    script = "; ".join(
        f"command -v {shlex.quote(p)} >/dev/null 2>&1 || echo {shlex.quote(p)}" for p in programs
    )
    done = box.run(["sh", "-c", script], timeout=30, env=env)
    return [line.strip() for line in done.stdout.splitlines() if line.strip()]
