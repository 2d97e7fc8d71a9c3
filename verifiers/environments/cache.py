"""The environment cache: one folder per environment hash, built once, reused read-only.

Layout under the cache root (``TRAJFORGE_ENV_CACHE``, default ``~/.cache/trajforge/envs``)::

    <hash>/env.json            BuiltEnvironment: recipes, when, how long, size, versions
    <hash>/node/<root>/node_modules
    <hash>/python/site         packages (pip --target) put first on PYTHONPATH
    <hash>/tools/<manager>/    pnpm / yarn as corepack fetched them, run by bin/<manager>
    <hash>/bin/                wrappers on the sandbox's PATH
    <hash>.lock                held while building (other builders of the hash wait)
    .downloads/                npm, pip and corepack download caches shared by every build

A folder without ``env.json`` is a build that did not finish; it is never used, and building
writes into a staging folder renamed into place at the end.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from trajforge import __version__
from trajforge.errors import RecordError
from trajforge.protocols import EnvironmentFolder
from trajforge.records import EnvironmentRecipe, load_record
from trajforge.taskdir import write_atomic

CACHE_ENV = "TRAJFORGE_ENV_CACHE"
"""Environment variable naming the cache root."""
DEFAULT_ROOT = Path("~/.cache/trajforge/envs")
MANIFEST = "env.json"
USED = ".used"
"""Touched whenever a task uses the environment (what ``env prune --older-than`` looks at)."""
DOWNLOADS = ".downloads"


class BuiltEnvironment(BaseModel):
    """``<hash>/env.json``: what was built and how."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hash: str
    """Environment hash (the folder name)."""
    recipes: tuple[EnvironmentRecipe, ...]
    """The recipes it was built from."""
    built_at: str
    """ISO time the build finished."""
    build_s: float
    """Seconds the build took (downloads included)."""
    size_bytes: int
    """Bytes on disk."""
    tools: dict[str, str]
    """Program → version of what built it (npm, node, pip, python, pnpm...)."""
    bin: tuple[str, ...] = ()
    """Wrappers in ``bin/`` (package managers the check may call)."""
    python_packages: dict[str, str] = Field(default_factory=dict)
    """Python distributions installed (dependencies included) → version: the pins an export
    installs so it runs with what validation ran with."""
    substituted: tuple[str, ...] = ()
    """Dependencies installed from the registry instead of an unreachable tarball URL (one
    line each: name, release, URL): what differs from the project's lockfile."""
    trajforge_version: str = __version__
    """Toolkit version that built it."""

    def at(self, folder: Path) -> EnvironmentFolder:
        """This environment as built into ``folder``, for a sandbox to mount."""
        ecosystems = tuple(dict.fromkeys(r.ecosystem for r in self.recipes))
        return EnvironmentFolder(folder=folder, key=self.hash, ecosystems=ecosystems)


def root(path: Path | None = None) -> Path:
    """The cache root: ``path``, else ``$TRAJFORGE_ENV_CACHE``, else the default (created)."""
    chosen = path or Path(os.environ.get(CACHE_ENV) or DEFAULT_ROOT).expanduser()
    chosen = chosen.resolve()
    chosen.mkdir(parents=True, exist_ok=True)
    return chosen


def folder(cache: Path, env_hash: str) -> Path:
    return cache / env_hash


def load(cache: Path, env_hash: str) -> BuiltEnvironment | None:
    """The built environment of ``env_hash`` (None when absent or unfinished)."""
    manifest = folder(cache, env_hash) / MANIFEST
    if not manifest.is_file():
        return None
    try:
        return load_record(BuiltEnvironment, manifest)
    except RecordError:
        return None


def save(stage: Path, built: BuiltEnvironment) -> None:
    write_atomic(stage / MANIFEST, built.model_dump_json(indent=2) + "\n")


def touch(cache: Path, env_hash: str) -> None:
    """Mark the environment used now."""
    (folder(cache, env_hash) / USED).touch()


@contextmanager
def locked(cache: Path, env_hash: str) -> Iterator[None]:
    """Hold the build lock of ``env_hash`` (threads and processes alike wait for it)."""
    with (cache / f"{env_hash}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def downloads(cache: Path, tool: str) -> Path:
    path = cache / DOWNLOADS / tool
    path.mkdir(parents=True, exist_ok=True)
    return path


def size_of(path: Path) -> int:
    total = 0
    for dirpath, _, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                continue
    return total


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def last_used(cache: Path, env_hash: str) -> float:
    """Epoch seconds of the last use (the build time when never used)."""
    base = folder(cache, env_hash)
    for name in (USED, MANIFEST):
        try:
            return (base / name).stat().st_mtime
        except OSError:
            continue
    return 0.0


def listing(cache: Path) -> list[tuple[BuiltEnvironment, float]]:
    """Every finished environment with its last use, newest use first."""
    found = []
    for entry in sorted(cache.iterdir()):
        if entry.is_dir() and not entry.name.startswith("."):
            built = load(cache, entry.name)
            if built is not None:
                found.append((built, last_used(cache, entry.name)))
    return sorted(found, key=lambda pair: -pair[1])


def unfinished(cache: Path) -> list[Path]:
    """Staging folders and folders without env.json (interrupted builds)."""
    return [
        entry
        for entry in sorted(cache.iterdir())
        if entry.is_dir()
        and entry.name != DOWNLOADS
        and (entry.name.startswith(".") or not (entry / MANIFEST).is_file())
    ]


def remove(cache: Path, env_hash: str) -> int:
    """Delete one environment (under its lock); bytes freed."""
    with locked(cache, env_hash):
        target = folder(cache, env_hash)
        size = size_of(target)
        shutil.rmtree(target, ignore_errors=True)
    (cache / f"{env_hash}.lock").unlink(missing_ok=True)
    return size


def age_days(stamp: float) -> float:
    return (time.time() - stamp) / 86400


def installed(site: Path) -> dict[str, str]:
    """Distribution name → version of every ``*.dist-info`` under a pip ``--target`` folder."""
    found: dict[str, str] = {}
    for meta in sorted(site.glob("*.dist-info/METADATA")):
        fields = dict(
            line.split(": ", 1)
            for line in meta.read_text(errors="replace").splitlines()[:20]
            if ": " in line
        )
        if "Name" in fields and "Version" in fields:
            found[fields["Name"].strip()] = fields["Version"].strip()
    return found
