"""What a task needs of a Node workspace (npm / pnpm / yarn monorepo): which members to install,
and the compile step of the members whose code the others import built.

A monorepo's install covers every member, and one member's dependency on a host outside the
registries (a tarball URL) then sinks every task in the repository. A task needs only the
members that hold its changed files (or the folder its check runs in) and, transitively, the
members those depend on; when a changed file or the check lies outside every member, it needs
the whole workspace.

A member imported by another resolves through its manifest's ``main`` / ``types`` /
``exports`` — usually a ``dist/`` folder no repository commits. Such a member is compiled
before the checks run, with the compiler or bundler its own ``build`` script runs (the
``tsc`` / ``tsgo`` part, or ``tsup``, ``tsdown``, ``esbuild``, ``rollup``, ``unbuild``, ``vite
build``: what else a build script does, such as generating sources from the network, is never
run), in dependency order.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence

from trajforge.reconstruct.node_project import manifest

COMPILERS = ("tsc", "tsgo")
"""Programs a build script's compile step runs (TypeScript's and its native preview)."""
BUNDLERS = ("tsup", "tsdown", "esbuild", "rollup", "unbuild", "vite")
"""Bundlers a build script may make the member's entry with instead (``vite`` as ``vite
build``): run from the member's own ``node_modules``, offline like the compilers."""
_DEP_KEYS = ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies")
_CD = re.compile(r"^\s*cd\s+(\S+)\s*(?:&&|;)")
_SEGMENTS = re.compile(r"&&|\|\||;")


def _names(files: Mapping[str, str], manifests: Sequence[str]) -> dict[str, str]:
    """Member folder → package name."""
    out = {}
    for path in manifests:
        name = manifest(files, posixpath.dirname(path)).get("name")
        out[posixpath.dirname(path)] = name if isinstance(name, str) else ""
    return out


def _owner(path: str, folders: Iterable[str]) -> str | None:
    """The member folder holding ``path`` (the deepest), else None."""
    held = [f for f in folders if path == f or path.startswith(f"{f}/")]
    return max(held, key=len) if held else None


def _workspace_deps(files: Mapping[str, str], folder: str, by_name: Mapping[str, str]) -> list[str]:
    """Member folders the member at ``folder`` depends on."""
    data = manifest(files, folder)
    found = []
    for key in _DEP_KEYS:
        deps = data.get(key)
        if isinstance(deps, dict):
            found += [by_name[n] for n in deps if n in by_name and by_name[n] != folder]
    return list(dict.fromkeys(found))


def touched_paths(changed: Iterable[str], command: str | None) -> list[str] | None:
    """Where a task works: its changed files and the folder its check runs in (``cd X && ...``);
    None when the check runs at the workspace root (it may need every member)."""
    paths = list(changed)
    if command:
        found = _CD.match(command)
        if found is None:
            return None
        paths.append(posixpath.normpath(found.group(1).strip("'\"")))
    return paths


def needed_members(
    root: str, manifests: Sequence[str], files: Mapping[str, str], touched: Sequence[str] | None
) -> list[str]:
    """The member manifests the task needs (all of them when ``touched`` is None, empty, or has
    a path outside every member), with their workspace dependencies, in ``manifests`` order."""
    names = _names(files, manifests)
    by_name = {name: folder for folder, name in names.items() if name}
    base = f"{root}/" if root else ""
    starts = set()
    for path in touched or ():
        if base and not path.startswith(base):
            continue  # another project in the same tree
        owner = _owner(path, names)
        if owner is None:
            return list(manifests)
        starts.add(owner)
    if not starts:
        return list(manifests)
    seen: set[str] = set()
    todo = sorted(starts)
    while todo:
        folder = todo.pop()
        if folder not in seen:
            seen.add(folder)
            todo += _workspace_deps(files, folder, by_name)
    return [m for m in manifests if posixpath.dirname(m) in seen]


def compile_steps(root: str, members: Sequence[str], files: Mapping[str, str]) -> tuple[str, ...]:
    """``cd FOLDER && COMPILE`` for each installed member another one depends on whose entry
    point is not in ``files``, dependencies first (folders relative to the workspace)."""
    names = _names(files, members)
    by_name = {name: folder for folder, name in names.items() if name}
    deps = {folder: _workspace_deps(files, folder, by_name) for folder in names}
    imported = {d for found in deps.values() for d in found}
    order: list[str] = []

    def visit(folder: str, path: tuple[str, ...]) -> None:
        if folder in order or folder in path:
            return
        for dep in deps.get(folder, ()):
            visit(dep, (*path, folder))
        order.append(folder)

    for folder in sorted(imported):
        visit(folder, ())
    steps = []
    for folder in order:
        step = _compile_step(files, folder) if folder in imported else None
        if step and not _entry_present(files, folder):
            steps.append(f"cd {shlex.quote(folder)} && {step}")
    return tuple(steps)


def _entry_present(files: Mapping[str, str], folder: str) -> bool:
    """The member's ``main`` / ``module`` / ``exports`` entry is a file of the tree (nothing to
    build), or it names none (node resolves ``index.js`` of the folder)."""
    data = manifest(files, folder)
    entries = [data.get(k) for k in ("main", "module")]
    exports = data.get("exports")
    dot = exports.get(".") if isinstance(exports, dict) else exports
    if isinstance(dot, dict):
        entries += [dot.get(k) for k in ("import", "require", "default")]
    else:
        entries.append(dot)
    named = [posixpath.normpath(posixpath.join(folder, e)) for e in entries if isinstance(e, str)]
    return not named or any(path in files for path in named)


def _compile_step(files: Mapping[str, str], folder: str) -> str | None:
    """The first part of the member's ``build`` script that makes its entry: a ``tsc`` /
    ``tsgo`` that emits, or a bundler (:data:`BUNDLERS`); None: it has none."""
    scripts = manifest(files, folder).get("scripts")
    build = scripts.get("build") if isinstance(scripts, dict) else None
    if not isinstance(build, str):
        return None
    for segment in _SEGMENTS.split(build):
        words = segment.split()
        if words and words[0] in ("npx", "pnpm", "yarn") and len(words) > 1:
            words = [w for w in words[1:] if w not in ("exec", "--no-install")]
        if words and ((words[0] in COMPILERS and "--noEmit" not in words) or _bundles(words)):
            return " ".join(words)
    return None


def _bundles(words: list[str]) -> bool:
    """The words run a bundler's build (``tsup src/index.ts``, ``vite build``, ``rollup -c``)."""
    return words[0] in BUNDLERS and (words[0] != "vite" or words[1:2] == ["build"])
