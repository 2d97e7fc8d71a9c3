"""Build a task environment once per hash: the project's own install, network at build time only.

Node: the manifest and lockfile are copied into ``<stage>/node/<root>/`` and the recipe's
install runs there (``npm ci``, or pnpm / yarn through corepack at the pinned version, every
lifecycle script skipped: the install must not run the project's code on this machine); pnpm
and yarn themselves are kept under ``tools/`` with a wrapper in ``bin/`` so a check that calls
them runs offline. Python: ``pip install --target <stage>/python/site`` of the recipe's
packages with the interpreter the sandbox runs (same ``major.minor``). Rust and Go: their
toolchain and registry are checked and named when missing; building them is not supported.

A failed install is ``environment_build_failed`` with the command and its last error line,
unless the registry turns out to be unreachable (then ``environment_unavailable``).
"""

from __future__ import annotations

import json
import logging
import os
import platform
import posixpath
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from trajforge.errors import TrajforgeError
from trajforge.reconstruct.node_project import BUN_PACKAGE
from trajforge.records import Environment, EnvironmentRecipe, Reason, sha256_hex
from trajforge.verifiers.environments import cache as store
from trajforge.verifiers.environments.session import WORKSPACE
from trajforge.verifiers.environments.substitute import substitute
from trajforge.verifiers.environments.toolchain import (
    missing_tool,
    reachable,
    registry_of,
    unavailable,
    unreachable,
    version,
    which,
)

log = logging.getLogger(__name__)

BUILD_TIMEOUT_S = 1200.0
"""Longest one install command may take (a cold download of a large lockfile)."""
NODE_CONFIG_FILES = (".npmrc", ".yarnrc", ".yarnrc.yml", "pnpm-workspace.yaml")
"""Files beside a package.json that change how its install resolves (copied with it)."""
NPM_FLAGS = ("--no-audit", "--no-fund", "--loglevel=error")
"""Flags added to npm installs: no advisories or funding requests (network, noise)."""
PNPM_FLAGS = ("--package-import-method=copy", "--reporter=append-only")
"""pnpm: copy files out of its store (no hard links into the shared download cache)."""
PIP_FLAGS = (
    "--no-input",
    "--disable-pip-version-check",
    "--no-warn-script-location",
    "--prefer-binary",
)


Built = tuple[dict[str, str], tuple[str, ...]]
"""What a builder made: program → version of what built it, and its substitutions (lines)."""


class EnvironmentProblem(TrajforgeError):
    """A task environment that cannot be had; the message starts with its closed reason."""

    def __init__(self, message: str, reason: Reason) -> None:
        super().__init__(message)
        self.reason = reason


def _unavailable(message: str) -> EnvironmentProblem:
    return EnvironmentProblem(message, Reason.ENVIRONMENT_UNAVAILABLE)


def ensure(
    env: Environment, files: Mapping[str, str], cache_root: Path | None = None
) -> tuple[store.BuiltEnvironment, bool]:
    """The built environment of ``env`` (built now unless cached): (record, was it cached)."""
    cache = store.root(cache_root)
    found = store.load(cache, env.hash)
    if found is None:
        blocked = blocker(env)
        if blocked is not None:
            raise _unavailable(blocked)
        _check_inputs(env, files)
        with store.locked(cache, env.hash):
            found = store.load(cache, env.hash)  # another builder may have finished it
            if found is None:
                return _build(env, files, cache), False
    store.touch(cache, env.hash)
    return found, True


def blocker(env: Environment) -> str | None:
    """Why ``env`` cannot be built here at all (a tool, a registry, an ecosystem), or None."""
    for recipe in env.recipes:
        if recipe.ecosystem in ("rust", "go"):
            tool = recipe.manager
            if which(tool) is None:
                return missing_tool(tool)
            if not reachable(registry_of(tool).host):
                return unreachable(tool)
            return unavailable(
                tool,
                f"trajforge does not build {recipe.ecosystem} environments yet",
                "export the task to Harbor (its Dockerfile runs the install) or give a "
                "task whose check needs no downloaded dependencies",
            )
        for program in recipe.toolchain:
            if program != "python3" and which(program) is None:
                return missing_tool(program)
    return None


def _check_inputs(env: Environment, files: Mapping[str, str]) -> None:
    """Every manifest and lockfile the hash covers is there with the same content."""
    for path, digest in env.inputs.items():
        text = files.get(path)
        if text is None or sha256_hex(text.encode("utf-8", "surrogateescape")) != digest:
            state = "missing" if text is None else "changed since the recipe was made"
            raise EnvironmentProblem(
                f"{Reason.ENVIRONMENT_BUILD_FAILED}: {path} is {state}; run trajforge "
                "reconstruct again to refresh the task's environment",
                Reason.ENVIRONMENT_BUILD_FAILED,
            )


def _build(env: Environment, files: Mapping[str, str], cache: Path) -> store.BuiltEnvironment:
    stage = Path(tempfile.mkdtemp(prefix=f".{env.hash}.", dir=cache))
    started = time.monotonic()
    try:
        tools: dict[str, str] = {}
        substituted: list[str] = []
        for recipe in env.recipes:
            log.info("building %s environment %s", recipe.ecosystem, env.hash[:12])
            made, swapped = BUILDERS[recipe.ecosystem](recipe, files, stage, cache)
            tools.update(made)
            substituted += swapped
        bins = stage / "bin"
        built = store.BuiltEnvironment(
            hash=env.hash,
            recipes=env.recipes,
            built_at=store.now_iso(),
            build_s=round(time.monotonic() - started, 3),
            size_bytes=store.size_of(stage),
            tools=tools,
            bin=tuple(sorted(p.name for p in bins.iterdir())) if bins.is_dir() else (),
            python_packages=store.installed(stage / "python" / "site"),
            substituted=tuple(substituted),
        )
        store.save(stage, built)
        stage.chmod(0o755)  # mkdtemp made it private; every sandbox uid must read it
        os.rename(stage, store.folder(cache, env.hash))
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return built


def _run(argv: list[str], cwd: Path, env: Mapping[str, str], manager: str) -> None:
    """Run one install command; EnvironmentProblem naming it when it fails."""
    shown = shlex.join(argv[:6]) + (" …" if len(argv) > 6 else "")
    try:
        done = subprocess.run(
            argv,
            cwd=cwd,
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise EnvironmentProblem(
            f"{Reason.ENVIRONMENT_BUILD_FAILED}: `{shown}` ran past {BUILD_TIMEOUT_S:.0f} s",
            Reason.ENVIRONMENT_BUILD_FAILED,
        ) from None
    with (cwd / ".trajforge-build.log").open("a") as handle:
        handle.write(f"$ {shlex.join(argv)}\n{done.stdout}{done.stderr}\n")
    if done.returncode == 0:
        return
    if not reachable(registry_of(manager).host):
        raise _unavailable(unreachable(manager))
    raise _failed(shown, done)


_BOILERPLATE = re.compile(r"complete log of this run|for more info|^npm (?:error|ERR!) code ")
"""npm's closing lines, which say nothing about the failure."""
_ELSEWHERE = (
    re.compile(r"request to (https?://([^/\s]+)\S*) failed, reason: getaddrinfo"),
    re.compile(r"command git\b[^\n]*?\s((?:ssh|https?|git)://(?:[^@/\s]+@)?([^/:\s]+)\S*)"),
)
"""A dependency fetched from a host that is not a package registry: a tarball URL, or a git
repository (``git+ssh://git@github.com/…``, which npm reads with ``git ls-remote``)."""


def _failed(shown: str, done: subprocess.CompletedProcess[str]) -> EnvironmentProblem:
    """Why an install failed, in its own most telling line (npm's closing "A complete log of
    this run…" is not one); a dependency from an unreachable host is environment_unavailable."""
    text = f"{done.stdout}\n{done.stderr}"
    elsewhere = next((m for p in _ELSEWHERE if (m := p.search(text)) is not None), None)
    if elsewhere is not None and not reachable(elsewhere.group(2)):
        return _unavailable(
            f"{Reason.ENVIRONMENT_UNAVAILABLE}: `{shown}` needs {elsewhere.group(1)}, and "
            f"{elsewhere.group(2)} cannot be reached from here (only the package registries "
            "can); fix: build where it can, or vendor that dependency into the lockfile's registry"
        )
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    telling = [ln for ln in errors if len(ln.split()) >= 5 and not _BOILERPLATE.search(ln)]
    detail = (telling or errors or lines or [""])[0 if telling else -1]
    return EnvironmentProblem(
        f"{Reason.ENVIRONMENT_BUILD_FAILED}: `{shown}` exited {done.returncode}: {detail[:300]}",
        Reason.ENVIRONMENT_BUILD_FAILED,
    )


def _tool_env(cache: Path) -> dict[str, str]:
    """The installers' environment: this machine's, with the shared download caches."""
    env = dict(os.environ)
    env.update(
        npm_config_cache=str(store.downloads(cache, "npm")),
        npm_config_update_notifier="false",
        COREPACK_HOME=str(store.downloads(cache, "corepack")),
        COREPACK_ENABLE_DOWNLOAD_PROMPT="0",
        COREPACK_NPM_REGISTRY=os.environ.get("COREPACK_NPM_REGISTRY", "https://registry.npmjs.org"),
        COREPACK_INTEGRITY_KEYS=os.environ.get("COREPACK_INTEGRITY_KEYS", "0"),
        YARN_CACHE_FOLDER=str(store.downloads(cache, "yarn")),
        YARN_NODE_LINKER="node-modules",
        YARN_ENABLE_TELEMETRY="0",
        YARN_ENABLE_GLOBAL_CACHE="false",
    )
    return env


def _node_argv(recipe: EnvironmentRecipe, cache: Path) -> list[str]:
    argv = shlex.split(recipe.install[0])
    if recipe.manager == "npm":
        return [*argv, *NPM_FLAGS]
    if recipe.manager == "pnpm":
        return [*argv, *PNPM_FLAGS, f"--store-dir={store.downloads(cache, 'pnpm-store')}"]
    return argv


def _link_bun(work: Path) -> None:
    """Bun's binary package on ``node_modules/.bin`` (every run's PATH), where the ``bun``
    package's postinstall would have put it had installs run scripts."""
    binary = work / "node_modules" / BUN_PACKAGE / "bin" / "bun"
    link = work / "node_modules" / ".bin" / "bun"
    if binary.is_file() and not link.exists():
        link.parent.mkdir(exist_ok=True)
        link.symlink_to(os.path.relpath(binary, link.parent))


def _build_node(
    recipe: EnvironmentRecipe, files: Mapping[str, str], stage: Path, cache: Path
) -> Built:
    work = stage / "node" / recipe.root
    work.mkdir(parents=True, exist_ok=True)
    base = f"{recipe.root}/" if recipe.root else ""
    config = (base + n for n in NODE_CONFIG_FILES)
    for rel in (recipe.manifest, *recipe.lockfiles, *config, *recipe.workspaces):
        if rel in files:  # members keep their folders: the install links them as workspaces
            target = work / rel[len(base) :]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(files[rel], encoding="utf-8", errors="surrogateescape")
    argv = _node_argv(recipe, cache)
    swapped: tuple[str, ...] = ()
    if argv[:2] == ["npm", "ci"]:  # a lockfile that npm install may respell
        manifests = [m[len(base) :] for m in (recipe.manifest, *recipe.workspaces)]
        swapped = substitute(work, manifests, _tool_env(cache))
        argv[1] = "install" if swapped else "ci"
    _run(argv, work, _tool_env(cache), recipe.manager)
    for extra in recipe.install[1:]:  # tools the hidden tests need (the tsx loader, bun)
        _run([*shlex.split(extra), *NPM_FLAGS], work, _tool_env(cache), recipe.manager)
    _link_bun(work)
    base_len = len(base)
    members = [posixpath.dirname(m[base_len:]) for m in recipe.workspaces]
    relink_workspaces(work, f"{WORKSPACE}/{recipe.root}".rstrip("/"), members)
    (work / ".trajforge-build.log").rename(stage / f"build-{recipe.manager}.log")
    tools = {"node": version("node"), "npm": version("npm")}
    if recipe.manager != "npm" and recipe.manager_version:
        _keep_manager(recipe.manager, recipe.manager_version, cache, stage)
        tools[recipe.manager] = recipe.manager_version
    return tools, swapped


def relink_workspaces(work: Path, live: str, members: Sequence[str] = ()) -> int:
    """Point the install's links to workspace members at where the members are in a sandbox
    (``live``: the workspace folder of the recipe's root), not at the manifests copied here:
    in the root's ``node_modules`` (npm, yarn) and in each member's (``members``, folders
    relative to ``work``: pnpm links a member's workspace dependencies there); how many were
    relinked."""
    count = 0
    root = work.resolve()
    for folder in ("", *members):
        modules = work / folder / "node_modules"
        for link in [*modules.glob("*"), *modules.glob("@*/*")] if modules.is_dir() else []:
            if not link.is_symlink():
                continue
            target = (link.parent / os.readlink(link)).resolve()
            if target.is_relative_to(root) and "node_modules" not in target.parts:
                link.unlink()
                link.symlink_to(f"{live}/{target.relative_to(root).as_posix()}")
                count += 1
    return count


def _keep_manager(manager: str, release: str, cache: Path, stage: Path) -> None:
    """Copy corepack's download of pnpm / yarn into ``tools/`` and put a wrapper in ``bin/``."""
    source = store.downloads(cache, "corepack") / "v1" / manager / release
    if not source.is_dir():
        log.warning("corepack kept no %s %s under %s", manager, release, source)
        return
    target = stage / "tools" / manager
    shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
    entry = _entry(target, manager)
    wrapper = stage / "bin" / manager
    wrapper.parent.mkdir(exist_ok=True)
    wrapper.write_text(f'#!/bin/sh\nexec node "$(dirname "$0")/../tools/{manager}/{entry}" "$@"\n')
    wrapper.chmod(0o755)


def _entry(folder: Path, manager: str) -> str:
    """The script a package manager's package runs as ``manager`` (its package.json bin)."""
    manifest = folder / "package.json"
    if manifest.is_file():
        data = json.loads(manifest.read_text())
        bins = data.get("bin")
        if isinstance(bins, str):
            return bins.removeprefix("./")
        if isinstance(bins, dict) and isinstance(bins.get(manager), str):
            return str(bins[manager]).removeprefix("./")
    return f"{manager}.js"  # yarn berry: one bundled file


def _build_python(
    recipe: EnvironmentRecipe, files: Mapping[str, str], stage: Path, cache: Path
) -> Built:
    have = f"{sys.version_info.major}.{sys.version_info.minor}"
    if recipe.python and recipe.python != have:
        raise _unavailable(
            unavailable(
                f"python{recipe.python}",
                f"the packages were resolved for Python {recipe.python}; trajforge runs on {have}",
                f"run trajforge (and its local sandbox) with Python {recipe.python}",
            )
        )
    site = stage / "python" / "site"
    site.mkdir(parents=True)
    argv = [sys.executable, "-m", "pip", "install", "--target", str(site), *PIP_FLAGS]
    argv += ["--cache-dir", str(store.downloads(cache, "pip")), *recipe.packages]
    _run(argv, stage, _tool_env(cache), "pip")
    (stage / ".trajforge-build.log").rename(stage / "build-pip.log")
    return {"python": platform.python_version(), "pip": version("pip").split(" from ")[0]}, ()


def _build_compiled(
    recipe: EnvironmentRecipe, files: Mapping[str, str], stage: Path, cache: Path
) -> Built:
    raise _unavailable(blocker(Environment(recipes=(recipe,), hash="-")) or "")


Builder = Callable[[EnvironmentRecipe, Mapping[str, str], Path, Path], Built]
BUILDERS: dict[str, Builder] = {
    "node": _build_node,
    "python": _build_python,
    "rust": _build_compiled,
    "go": _build_compiled,
}
