"""A coding task's environment recipe, detected from its files and the session's commands.

Node: every folder with a ``package.json`` and a lockfile (and the top folder's package.json
without one) → ``npm ci`` / ``pnpm install --frozen-lockfile`` / ``yarn install --immutable``
(pnpm and yarn through corepack, at the version ``packageManager`` pins); an npm TypeScript
package with no test runner of its own also gets the pinned ``tsx`` loader, which its hidden
tests run under (``node --import tsx --test``). Python: the top
folder's pyproject.toml / setup.cfg / requirement files, plus what the session installed with
``pip install NAME`` → those packages installed for the sandbox's Python. Rust and Go
manifests are recipes too (their registries decide whether they can be built). Programs the
check runs that no recipe provides are listed in ``needs``.

The recipe is hashed with the content of every manifest and lockfile it read; that hash is the
environment's identity (one build per hash) and part of the task record.
"""

from __future__ import annotations

import fnmatch
import json
import posixpath
import re
import shlex
import sys
from collections.abc import Iterable, Mapping, Sequence

from trajforge.reconstruct import pymanifest
from trajforge.reconstruct.node_project import BUN, TSX, needs_bun, needs_tsx
from trajforge.reconstruct.node_workspace import compile_steps, needed_members, touched_paths
from trajforge.reconstruct.shell import programs
from trajforge.records import Environment, EnvironmentRecipe, canonical_json, sha256_hex

RECIPE_VERSION = 1
"""Bumped when the same files would give a different install (part of every hash)."""
NODE_LOCKS = {
    "package-lock.json": "npm",
    "npm-shrinkwrap.json": "npm",
    "pnpm-lock.yaml": "pnpm",
    "yarn.lock": "yarn",
}
"""Lockfile → the manager that installs from it."""
YARN_CLASSIC = "1.22.22"
"""Yarn v1 version corepack runs for a classic ``yarn.lock`` without a packageManager pin."""
YARN_BERRY = "4.5.0"
"""Yarn version corepack runs for a berry ``yarn.lock`` (``__metadata``) without a pin."""
PNPM_BY_LOCKFILE = {"9.0": "9.15.9", "6.0": "8.15.9", "5.4": "7.33.7"}
"""pnpm-lock.yaml ``lockfileVersion`` → the last pnpm release writing it (without a pin), so an
unpinned project installs the same way every time instead of with whatever is newest."""
PNPM_DEFAULT = "9.15.9"
DEPENDENCY_KEYS = ("dependencies", "devDependencies", "optionalDependencies")
TOOLCHAINS: dict[str, str] = {
    "cargo": "cargo",
    "rustc": "cargo",
    "go": "go",
    "deno": "deno",
    "bun": "bun",
    "mvn": "mvn",
    "gradle": "gradle",
    "./gradlew": "java",
    "java": "java",
    "dotnet": "dotnet",
    "ruby": "ruby",
    "bundle": "ruby",
    "php": "php",
    "composer": "php",
    "make": "make",
    "pnpm": "pnpm",
    "yarn": "yarn",
}
"""First word of a check command → the toolchain it needs when no recipe provides it."""


def detect(
    files: Mapping[str, str],
    command: str | None,
    setup: Iterable[str] = (),
    changed: Sequence[str] = (),
) -> Environment | None:
    """The environment of a task whose completed files are ``files`` (None: nothing to set up);
    ``changed``: the files the task changes (which members of a monorepo it needs)."""
    recipes: list[EnvironmentRecipe] = []
    inputs: dict[str, str] = {}
    touched = touched_paths(changed, command)
    for recipe in [*_node(files, touched), *_python(files, setup), *_compiled(files)]:
        recipes.append(recipe)
        for path in (recipe.manifest, *recipe.lockfiles, *recipe.workspaces):
            if path in files:
                inputs[path] = sha256_hex(files[path].encode("utf-8", "surrogateescape"))
    needs = _needs(command or "", recipes)
    if not recipes and not needs:
        return None
    identity = {
        "version": RECIPE_VERSION,
        "recipes": [_identity(r) for r in recipes],
        "inputs": inputs,
    }
    return Environment(
        recipes=tuple(recipes),
        inputs=inputs,
        hash=sha256_hex(canonical_json(identity)),
        needs=needs,
    )


def _identity(recipe: EnvironmentRecipe) -> dict[str, object]:
    """A recipe as its environment's hash reads it (without an empty ``workspaces`` or
    ``builds``, so that recipes written before either existed keep their hashes)."""
    skip = {name for name in ("workspaces", "builds") if not getattr(recipe, name)}
    return recipe.model_dump(mode="json", exclude=skip)


_PNPM_PACKAGES = re.compile(r"^\s*-\s*['\"]?([^'\"\n#]+)", re.MULTILINE)


def workspace_members(root: str, data: dict[str, object], files: Mapping[str, str]) -> list[str]:
    """The member manifests of a workspace root (``workspaces`` in its package.json, as a list or
    ``{"packages": [...]}``; ``pnpm-workspace.yaml``'s ``packages`` are read the same way)."""
    raw = data.get("workspaces")
    patterns = raw.get("packages") if isinstance(raw, dict) else raw
    if not isinstance(patterns, list):
        pnpm = files.get(posixpath.join(root, "pnpm-workspace.yaml"), "")
        patterns = _PNPM_PACKAGES.findall(pnpm)
    base = f"{root}/" if root else ""
    found = []
    for manifest in sorted(p for p in files if p.endswith("/package.json") and p.startswith(base)):
        folder = posixpath.dirname(manifest)[len(base) :]
        if not _in_node_modules(manifest) and any(
            fnmatch.fnmatch(folder, str(pattern).rstrip("/")) for pattern in patterns
        ):
            found.append(manifest)
    return found


def _under_a_package(folder: str, files: Mapping[str, str]) -> bool:
    """Some folder above ``folder`` has a package.json (whose install covers it); a package
    with none above it is a project of its own, installed from its manifest alone."""
    while folder:
        folder = posixpath.dirname(folder)
        if posixpath.join(folder, "package.json") in files:
            return True
    return False


def _in_node_modules(path: str) -> bool:
    return "node_modules/" in f"/{path}"


def _node(files: Mapping[str, str], touched: Sequence[str] | None) -> list[EnvironmentRecipe]:
    found = []
    for manifest in sorted(p for p in files if posixpath.basename(p) == "package.json"):
        if _in_node_modules(manifest):
            continue
        root = posixpath.dirname(manifest)
        locks = [posixpath.join(root, n) for n in NODE_LOCKS if posixpath.join(root, n) in files]
        if root and not locks and _under_a_package(root, files):
            continue  # a workspace member: the top folder's install covers it
        data = _json(files[manifest])
        pnpm_root = posixpath.join(root, "pnpm-workspace.yaml") in files  # members listed there
        if not pnpm_root and not any(data.get(k) for k in (*DEPENDENCY_KEYS, "workspaces")):
            continue  # nothing to install; node itself is checked as a need
        found.append(_node_recipe(root, manifest, locks, data, files, touched))
    return found


def _node_recipe(
    root: str,
    manifest: str,
    locks: list[str],
    data: dict[str, object],
    files: Mapping[str, str],
    touched: Sequence[str] | None,
) -> EnvironmentRecipe:
    pinned = data.get("packageManager")
    pin_name, _, pin_version = (pinned if isinstance(pinned, str) else "").partition("@")
    pin_version = pin_version.split("+", 1)[0] or ""
    manager = NODE_LOCKS[posixpath.basename(locks[0])] if locks else (pin_name or "npm")
    if manager not in ("npm", "pnpm", "yarn"):
        manager = "npm"
    version = pin_version if pin_name == manager and pin_version else None
    lock_text = files.get(locks[0], "") if locks else ""
    if version is None:
        version = _default_version(manager, lock_text)
    install = [_node_install(manager, version, bool(locks))]
    members = workspace_members(root, data, files)
    narrows = manager in ("npm", "pnpm")  # yarn's `workspaces focus` is a plugin in yarn 3
    needed = needed_members(root, members, files, touched) if narrows else members
    flags = []
    if len(needed) < len(members):  # only these members' dependencies, and the root's
        folders = [posixpath.relpath(posixpath.dirname(m), root or ".") for m in needed]
        if manager == "pnpm":
            flags = [f"--filter {shlex.quote('{' + folder + '}')}" for folder in folders]
            install[0] = " ".join([install[0], *flags, "--filter '{.}'"])
        else:
            flags = [f"--workspace {shlex.quote(folder)}" for folder in folders]
            install[0] = " ".join([install[0], *flags, "--include-workspace-root"])
    tool = TSX if needs_tsx(files, root) else BUN if needs_bun(files, root) else None
    if manager == "npm" and tool:  # what hidden tests run with: node --import tsx, bun test
        # a filtered install keeps the lockfile: without it npm resolves every member again
        unlocked = "" if flags else " --no-package-lock"
        line = f"npm install --no-save{unlocked} --ignore-scripts --no-audit {tool}"
        install.append(" ".join([line, *flags]))
    return EnvironmentRecipe(
        workspaces=tuple(needed),
        builds=compile_steps(root, needed, files),
        ecosystem="node",
        manager=manager,  # type: ignore[arg-type]
        manager_version=version,
        root=root,
        manifest=manifest,
        lockfiles=tuple(locks),
        install=tuple(install),
        toolchain=("node", manager if manager == "npm" else "corepack"),
    )


def _default_version(manager: str, lock_text: str) -> str | None:
    """The pinned release of pnpm / yarn for a lockfile that names no packageManager."""
    if manager == "pnpm":
        found = re.search(r"lockfileVersion:\s*'?([0-9.]+)", lock_text[:200])
        return PNPM_BY_LOCKFILE.get(found.group(1) if found else "", PNPM_DEFAULT)
    if manager == "yarn":
        return YARN_CLASSIC if "yarn lockfile v1" in lock_text[:300] else YARN_BERRY
    return None


def _node_install(manager: str, version: str | None, locked: bool) -> str:
    if manager == "pnpm":
        frozen = " --frozen-lockfile" if locked else ""
        return f"corepack pnpm@{version} install{frozen} --ignore-scripts"
    if manager == "yarn":
        if version and version.startswith("1."):
            frozen = " --frozen-lockfile" if locked else ""
            return f"corepack yarn@{version} install{frozen} --ignore-scripts"
        immutable = " --immutable" if locked else ""
        return f"corepack yarn@{version} install{immutable} --mode=skip-build"
    return "npm ci --ignore-scripts" if locked else "npm install --ignore-scripts --no-audit"


def _json(text: str) -> dict[str, object]:
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _python(files: Mapping[str, str], setup: Iterable[str]) -> list[EnvironmentRecipe]:
    own, specs, read = None, [], []
    if "pyproject.toml" in files:
        own, found = pymanifest.from_pyproject(files["pyproject.toml"])
        specs += found
        read.append("pyproject.toml")
    if "setup.cfg" in files:
        name, found = pymanifest.from_setup_cfg(files["setup.cfg"])
        own, specs = own or name, specs + found
        read.append("setup.cfg")
    for path in pymanifest.REQUIREMENT_FILES:
        if path in files:
            specs += pymanifest.from_requirements(path, files)
            read.append(path)
    specs += pymanifest.pip_installs(setup)
    packages = pymanifest.dedupe(specs, own)
    if not packages:
        return []
    locks = [p for p in (*read[1:], *pymanifest.LOCKFILES) if p in files]
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return [
        EnvironmentRecipe(
            ecosystem="python",
            manager="pip",
            manifest=read[0] if read else "(session pip install)",
            lockfiles=tuple(dict.fromkeys(locks)),
            packages=packages,
            pythonpath=_pythonpath(files),
            install=(f"python{version} -m pip install {shlex.join(packages)}",),
            toolchain=("python3",),
            python=version,
        )
    ]


def _pythonpath(files: Mapping[str, str]) -> tuple[str, ...]:
    """``src`` when the project keeps its package there (src layout), else nothing."""
    return ("src",) if any(re.match(r"src/[^/]+/__init__\.py$", p) for p in files) else ()


def _compiled(files: Mapping[str, str]) -> list[EnvironmentRecipe]:
    found = []
    if "Cargo.toml" in files:
        locked = "Cargo.lock" in files
        found.append(
            EnvironmentRecipe(
                ecosystem="rust",
                manager="cargo",
                manifest="Cargo.toml",
                lockfiles=("Cargo.lock",) if locked else (),
                install=("cargo fetch --locked" if locked else "cargo fetch",),
                toolchain=("cargo",),
            )
        )
    if "go.mod" in files:
        found.append(
            EnvironmentRecipe(
                ecosystem="go",
                manager="go",
                manifest="go.mod",
                lockfiles=("go.sum",) if "go.sum" in files else (),
                install=("go mod download",),
                toolchain=("go",),
            )
        )
    return found


def _needs(command: str, recipes: Iterable[EnvironmentRecipe]) -> tuple[str, ...]:
    """Toolchains the check command runs that no recipe brings."""
    provided = {t for r in recipes for t in r.toolchain} | {r.manager for r in recipes}
    first = [argv[0] for argv in programs(command)]
    needs = [TOOLCHAINS[p] for p in first if p in TOOLCHAINS]
    return tuple(dict.fromkeys(n for n in needs if n not in provided))
