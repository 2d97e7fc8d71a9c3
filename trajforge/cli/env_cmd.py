"""``trajforge env build|list|prune``: the task environments cache.

``build`` prepares the environments of the given tasks ahead of validation (each hash once,
``-j`` at a time; with ``--sandbox docker`` also its derived image); ``list`` shows what is
cached; ``prune`` removes environments not used for a while (and their images).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Literal

import typer
from pydantic import BaseModel, ConfigDict
from rich.table import Table

from trajforge.cli.common import err, out, print_json, progress
from trajforge.errors import RecordError, TrajforgeError, UsageError
from trajforge.records import ANSWER_FAMILIES, Environment, Reason
from trajforge.taskdir import is_task_dir, load_task
from trajforge.verifiers.environments import cache as store
from trajforge.verifiers.environments import task_files
from trajforge.verifiers.environments.build import EnvironmentProblem, ensure

env_app = typer.Typer(
    name="env",
    help="Task environments (dependencies + toolchains), built once per hash and cached.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
CacheOption = Annotated[
    Path | None, typer.Option("--cache", help="Cache root (default: $TRAJFORGE_ENV_CACHE).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]


class BuildRow(BaseModel):
    """One environment of ``env build``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hash: str
    """Environment hash."""
    managers: tuple[str, ...]
    """Package managers of its recipes."""
    tasks: tuple[str, ...]
    """Task ids that use it."""
    status: Literal["built", "cached", "unavailable", "failed"]
    """built now, found cached, or why not."""
    seconds: float
    """Wall time of this row (build or lookup)."""
    detail: str = ""
    """The rejection sentence when it is unavailable or failed; the image when docker."""


def _task_dirs(paths: Iterable[Path]) -> list[Path]:
    """Task folders named directly or under ``OUT/tasks``."""
    found: list[Path] = []
    for path in paths:
        if is_task_dir(path):
            found.append(path)
        elif (path / "tasks").is_dir():
            found += sorted(p for p in (path / "tasks").iterdir() if is_task_dir(p))
        else:
            raise UsageError(f"{path}: neither a task folder (task.json) nor an OUT with tasks/")
    return found


def _group(dirs: list[Path]) -> tuple[dict[str, tuple[Environment, Path, list[str]]], list[str]]:
    """Environments by hash (with one task folder to read its files from) and unreadable tasks."""
    groups: dict[str, tuple[Environment, Path, list[str]]] = {}
    bad: list[str] = []
    for task_dir in dirs:
        try:
            task = load_task(task_dir)
        except RecordError as exc:
            bad.append(str(exc))
            continue
        env = task.environment
        if env is None or not env.recipes or task.family in ANSWER_FAMILIES:
            continue
        groups.setdefault(env.hash, (env, task_dir, []))[2].append(task.id)
    return groups, bad


def _build_one(
    env: Environment, task_dir: Path, ids: list[str], backend: str, cache: Path | None
) -> BuildRow:
    started = time.monotonic()
    task = load_task(task_dir)
    managers = tuple(r.manager for r in env.recipes)
    try:
        built, cached = ensure(env, task_files(task_dir, task, env), cache)
        detail = ""
        if backend == "docker":
            from trajforge.verifiers.environments.image import env_image

            detail, _ = env_image(built.at(store.folder(store.root(cache), env.hash)))
        status: Literal["built", "cached", "unavailable", "failed"] = (
            "cached" if cached else "built"
        )
    except TrajforgeError as exc:
        detail = str(exc)
        unavailable = (
            isinstance(exc, EnvironmentProblem) and exc.reason == Reason.ENVIRONMENT_UNAVAILABLE
        )
        status = "unavailable" if unavailable else "failed"
    seconds = round(time.monotonic() - started, 2)
    return BuildRow(
        hash=env.hash,
        managers=managers,
        tasks=tuple(ids),
        status=status,
        seconds=seconds,
        detail=detail,
    )


@env_app.command("build")
def build_command(
    tasks: Annotated[list[Path], typer.Argument(help="Task folders or OUT folders.")],
    jobs: Annotated[
        int, typer.Option("-j", "--jobs", min=1, help="Environments built at a time.")
    ] = 1,
    sandbox: Annotated[
        str, typer.Option("--sandbox", help="local|docker: docker also builds the image.")
    ] = "local",
    cache: CacheOption = None,
    as_json: JsonOption = False,
) -> None:
    """Build the environments of TASKS ahead of validation (network is used only here)."""
    if sandbox not in ("local", "docker"):
        raise UsageError(f"--sandbox {sandbox!r}: expected local or docker")
    groups, bad = _group(_task_dirs(tasks))
    items = list(groups.values())
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="env-build") as pool:
        futures = [pool.submit(_build_one, e, d, ids, sandbox, cache) for e, d, ids in items]
        rows = [f.result() for f in progress(futures, len(futures), "env build", quiet=as_json)]
    failed = bad + [r.detail for r in rows if r.status in ("unavailable", "failed")]
    if as_json:
        print_json({"environments": [r.model_dump(mode="json") for r in rows], "unreadable": bad})
    else:
        _print_rows(rows)
        for line in failed:
            err.print(f"[red]failed:[/red] {line}", markup=True)
    raise typer.Exit(1 if failed else 0)


def _print_rows(rows: list[BuildRow]) -> None:
    table = Table(title="task environments")
    for column in ("hash", "managers", "tasks", "status", "seconds"):
        table.add_column(column, justify="right" if column in ("tasks", "seconds") else "left")
    for row in rows:
        cells = (row.hash[:12], " ".join(row.managers), str(len(row.tasks)), row.status)
        table.add_row(*cells, f"{row.seconds:.1f}")
    out.print(table)
    if not rows:
        out.print("no task needs an environment")


class CachedRow(BaseModel):
    """One cached environment of ``env list``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    hash: str
    """Environment hash."""
    managers: tuple[str, ...]
    """Package managers of its recipes."""
    size_bytes: int
    """Bytes on disk."""
    built_at: str
    """When it was built."""
    build_s: float
    """Seconds the build took."""
    idle_days: float
    """Days since a task last used it."""
    path: str
    """Its folder."""


@env_app.command("list")
def list_command(cache: CacheOption = None, as_json: JsonOption = False) -> None:
    """List cached environments (and their docker images)."""
    from trajforge.verifiers.environments.image import derived_images

    root = store.root(cache)
    rows = [
        CachedRow(
            hash=built.hash,
            managers=tuple(r.manager for r in built.recipes),
            size_bytes=built.size_bytes,
            built_at=built.built_at,
            build_s=built.build_s,
            idle_days=round(store.age_days(used), 2),
            path=str(store.folder(root, built.hash)),
        )
        for built, used in store.listing(root)
    ]
    images = derived_images()
    if as_json:
        envs = [r.model_dump(mode="json") for r in rows]
        print_json({"cache": str(root), "environments": envs, "images": images})
        return
    table = Table(title=f"environments in {root}")
    for column in ("hash", "managers", "MB", "built", "build s", "idle days"):
        table.add_column(column)
    for row in rows:
        size = f"{row.size_bytes / 1e6:.1f}"
        table.add_row(
            row.hash[:12],
            " ".join(row.managers),
            size,
            row.built_at,
            f"{row.build_s}",
            f"{row.idle_days}",
        )
    out.print(table)
    for image in images:
        out.print(f"image {image['tag']} ({image['size_bytes'] / 1e6:.0f} MB)")


@env_app.command("prune")
def prune_command(
    older_than: Annotated[
        float, typer.Option("--older-than", min=0, help="Days since last use (default 30).")
    ] = 30.0,
    remove_all: Annotated[bool, typer.Option("--all", help="Remove every environment.")] = False,
    cache: CacheOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove environments unused for --older-than days (or --all), and their images."""
    from trajforge.verifiers.environments.image import derived_images, remove_image

    root = store.root(cache)
    removed, freed = [], 0
    for built, used in store.listing(root):
        if remove_all or store.age_days(used) >= older_than:
            freed += store.remove(root, built.hash)
            removed.append(built.hash)
    stale = [
        p for p in store.unfinished(root) if store.age_days(p.stat().st_mtime) >= 1 or remove_all
    ]
    for path in stale:
        freed += store.size_of(path)
        shutil.rmtree(path, ignore_errors=True)
    gone = set(removed)
    images = [i["tag"] for i in derived_images() if i["hash"] and (i["hash"] in gone or remove_all)]
    dropped = [tag for tag in images if remove_image(tag)]
    result = {
        "removed": removed,
        "unfinished": [str(p) for p in stale],
        "images": dropped,
        "freed_bytes": freed,
    }
    if as_json:
        print_json(result)
        return
    out.print(
        f"removed {len(removed)} environments, {len(stale)} unfinished builds, "
        f"{len(dropped)} images; freed {freed / 1e6:.1f} MB"
    )


def register(app: typer.Typer) -> None:
    app.add_typer(env_app, name="env")
