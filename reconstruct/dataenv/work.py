"""Data-task drafts as executor work items (``trajforge dataenv build --executor local|ray``).

The driver draws every draft (the seeded random choices stay in one process, in one order)
and hands each one to the executor as a :class:`DraftJob`: the draft without its loaded
frames, the input paths and the seed. The worker runs the draft's query and near misses
(:func:`~trajforge.reconstruct.dataenv.generate.run_draft`) against a library of staged
tables: the driver's own when the worker shares its process or was forked from it, else a
library the worker stages once from the same input paths (they must be readable at the same
path on every node, as ``reconstruct``'s inputs are; the bundled tables always are) and
checks byte for byte against the hashes the draft carries.
"""

from __future__ import annotations

import atexit
import dataclasses
import functools
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from trajforge.errors import UsageError
from trajforge.reconstruct.dataenv.tables import stage_inputs
from trajforge.reconstruct.dataenv.templates import Draft
from trajforge.records import sha256_hex
from trajforge.scrub import Scrubber

_HOSTED: dict[tuple[str, ...], Path] = {}
"""Libraries staged by a driver in this process, by input paths (seen by forked workers)."""


@dataclass(frozen=True)
class DraftJob:
    """One draft to run: the slim draft, where its tables come from, the seed."""

    draft: Draft | None
    """None: the drawn template does not apply to these tables."""
    inputs: tuple[str, ...]
    seed: int


def slim(draft: Draft) -> Draft:
    """The draft without its loaded frames and column profiles (what a worker needs)."""
    tables = tuple(
        dataclasses.replace(t, frame=pl.DataFrame(), categories={}) for t in draft.tables
    )
    return dataclasses.replace(draft, tables=tables)


def key_of(inputs: list[Path]) -> tuple[str, ...]:
    """The library key of the input paths (absolute)."""
    return tuple(str(p.resolve()) for p in inputs)


@contextmanager
def hosted(inputs: tuple[str, ...], library: Path) -> Iterator[None]:
    """Offer this driver's staged ``library`` to workers in (or forked from) this process."""
    _HOSTED[inputs] = library
    try:
        yield
    finally:
        _HOSTED.pop(inputs, None)


@functools.lru_cache(maxsize=4)
def _own_library(inputs: tuple[str, ...]) -> Path:
    """A library this worker process stages for itself, removed when the process exits."""
    library = Path(tempfile.mkdtemp(prefix="trajforge-dataenv-worker-"))
    atexit.register(shutil.rmtree, library, True)
    stage_inputs([Path(p) for p in inputs], library, Scrubber())
    return library


@functools.lru_cache(maxsize=256)
def _file_hash(path: Path) -> str:
    return sha256_hex(path.read_bytes())


def library_for(job: DraftJob) -> Path:
    """The library to run ``job`` against; a UsageError when its tables differ from the draft's."""
    library = _HOSTED.get(job.inputs) or _own_library(job.inputs)
    for table in job.draft.tables if job.draft else ():
        if _file_hash(library / table.name) != table.sha256:
            raise UsageError(
                f"{table.name}: the data file read on this node differs from the driver's "
                f"(sha256 {_file_hash(library / table.name)[:12]} != {table.sha256[:12]})"
            )
    return library
