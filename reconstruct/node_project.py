"""What a Node project's manifests say: the package a file belongs to, its dependencies, and
the test runner it uses (vitest, jest, mocha, ``bun test``, else node's own ``node --test``).

Read by the environment recipe (a TypeScript package without a runner gets the ``tsx`` loader
installed, pinned; a Bun package without ``bun`` gets Bun's binary) and by the TypeScript
language (which command runs hidden tests).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping

RUNNERS = ("vitest", "jest", "mocha")
"""Runner packages, in the order one is preferred when a manifest names several."""
TSX = "tsx@4.23.15"
"""The TypeScript loader ``node --import tsx --test`` uses where a package has no runner
(engines: node >= 18), installed into the task's environment."""
TS_SOURCE = (".ts", ".tsx", ".mts", ".cts")
BUN_PACKAGE = "@oven/bun-linux-x64"
BUN = f"{BUN_PACKAGE}@1.4.5"
"""Bun's own binary package, installed into the environment of a Bun package without ``bun``
(its ``bun`` package links the binary in a postinstall script, which installs never run)."""
BUN_FILES = ("bun.lock", "bun.lockb", "bunfig.toml")
_BUN_SCRIPT = re.compile(r"(?:^|[;&|]\s*)(?:bun|bunx)\s")


def manifest(files: Mapping[str, str], folder: str) -> dict[str, object]:
    """The parsed ``package.json`` of ``folder`` ({} when absent or unreadable)."""
    try:
        data = json.loads(files.get(posixpath.join(folder, "package.json"), ""))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def package_root(path: str, files: Mapping[str, str]) -> str:
    """The folder of the nearest ``package.json`` above ``path`` ('' : the workspace root)."""
    folder = posixpath.dirname(path)
    while folder:
        if posixpath.join(folder, "package.json") in files:
            return folder
        folder = posixpath.dirname(folder)
    return ""


def dependencies(files: Mapping[str, str], folder: str) -> set[str]:
    """Packages the manifest of ``folder`` and the workspace root's depend on."""
    names: set[str] = set()
    for root in dict.fromkeys((folder, "")):
        data = manifest(files, root)
        for key in ("dependencies", "devDependencies"):
            deps = data.get(key)
            names |= set(deps) if isinstance(deps, dict) else set()
    return names


def runner_of(files: Mapping[str, str], folder: str) -> str:
    """The test runner a package uses: vitest, jest, mocha, bun, or node (its built-in)."""
    deps = dependencies(files, folder)
    for name in RUNNERS:
        if name in deps:
            return name
    return "bun" if is_bun(files, folder) else "node"


def is_bun(files: Mapping[str, str], folder: str) -> bool:
    """A package that runs on Bun: a Bun lockfile or ``bunfig.toml`` beside it or at the
    root, Bun's types among its dependencies, or a script that runs ``bun`` / ``bunx``."""
    roots = dict.fromkeys((folder, ""))
    if any(posixpath.join(r, n) in files for r in roots for n in BUN_FILES):
        return True
    if dependencies(files, folder) & {"@types/bun", "bun-types"}:
        return True
    for root in roots:
        scripts = manifest(files, root).get("scripts")
        commands = scripts.values() if isinstance(scripts, dict) else ()
        if any(isinstance(c, str) and _BUN_SCRIPT.search(c) for c in commands):
            return True
    return False


def needs_tsx(files: Mapping[str, str], folder: str) -> bool:
    """A TypeScript package under ``folder`` that has no runner of its own (its hidden tests
    run with ``node --import tsx --test``) and no tsx."""
    if runner_of(files, folder) != "node" or "tsx" in dependencies(files, folder):
        return False
    prefix = f"{folder}/" if folder else ""
    return any(
        p.startswith(prefix) and p.endswith(TS_SOURCE) and "node_modules/" not in p for p in files
    )


def needs_bun(files: Mapping[str, str], folder: str) -> bool:
    """A Bun package under ``folder`` (its hidden tests run with ``bun test``) that does not
    depend on ``bun`` itself."""
    return runner_of(files, folder) == "bun" and "bun" not in dependencies(files, folder)
