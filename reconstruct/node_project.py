"""What a Node project's manifests say: the package a file belongs to, its dependencies, and
the test runner it uses (vitest, jest, mocha, ``bun test``, else node's own ``node --test``).

Read by the environment recipe (a TypeScript package without a runner gets the ``tsx`` loader
installed, pinned) and by the TypeScript language (which command runs hidden tests).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping

RUNNERS = ("vitest", "jest", "mocha")
"""Runner packages, in the order one is preferred when a manifest names several."""
TSX = "tsx@4.23.15"
"""The TypeScript loader ``node --import tsx --test`` uses where a package has no runner
(engines: node >= 18), installed into the task's environment."""
TS_SOURCE = (".ts", ".tsx", ".mts", ".cts")


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
    if any(p in files for p in ("bun.lock", "bun.lockb")) or "@types/bun" in deps:
        return "bun"
    return "node"


def needs_tsx(files: Mapping[str, str], folder: str) -> bool:
    """A TypeScript package under ``folder`` that has no runner of its own (its hidden tests
    run with ``node --import tsx --test``) and no tsx."""
    if runner_of(files, folder) != "node" or "tsx" in dependencies(files, folder):
        return False
    prefix = f"{folder}/" if folder else ""
    return any(
        p.startswith(prefix) and p.endswith(TS_SOURCE) and "node_modules/" not in p for p in files
    )
