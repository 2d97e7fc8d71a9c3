"""Sessions people share on the Hugging Face Hub: ``hf://datasets/ORG/NAME[@REV][/PATH]`` inputs.

A dataset revision resolves to a commit; only its session files (``*.jsonl``, ``*.json``,
``*.jsonl.gz``, or the ``--include`` globs, less the ``--exclude`` ones) and its card are
downloaded, through ``huggingface_hub`` into its cache (``HF_HOME``; resumable; ``HF_TOKEN`` for
private and gated datasets, ``HF_ENDPOINT`` for another Hub, ``HF_HUB_OFFLINE=1`` reads the cache
alone). Where a revision holds no raw session files, its parquet files are read back into
sessions, else the Hub's own conversion at ``refs/convert/parquet``. Every session keeps its
:class:`~trajforge.records.DatasetOrigin`: repository, commit, path (and parquet rows), licence.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from trajforge.errors import TrajforgeError, UsageError
from trajforge.reconstruct.inputs import is_session_name
from trajforge.reconstruct.summary import HubDataset
from trajforge.records import DatasetOrigin

if TYPE_CHECKING:
    from trajforge.reconstruct.hub_parquet import WrittenSession

log = logging.getLogger(__name__)
MAX_WARNINGS = 20

PREFIX = "hf://"
DATASETS = "hf://datasets/"
SESSION_GLOBS = ("*.jsonl", "*.json", "*.jsonl.gz")
"""What a dataset input downloads unless ``--include`` says otherwise."""
CARD = "README.md"
PARQUET_GLOB = "*.parquet"
CONVERTED = "refs/convert/parquet"
"""The revision where the Hub keeps its parquet conversion of a dataset."""


class HubInputError(TrajforgeError):
    """A dataset input that cannot be read, with what to do about it."""


class HubRef(BaseModel):
    """A parsed ``hf://datasets/ORG/NAME[@REVISION][/PATH]``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    """The input as given."""
    repo_id: str
    """``ORG/NAME``."""
    revision: str = "main"
    """Branch, tag, commit, or ``refs/convert/parquet`` / ``refs/pr/N``."""
    subpath: str = ""
    """A folder or file in the repository ('' for all of it)."""


class HubOptions(BaseModel):
    """How dataset inputs are fetched."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    include: tuple[str, ...] = ()
    """Globs of the files to read (default :data:`SESSION_GLOBS`), under the input's PATH
    (``*`` spans folders)."""
    exclude: tuple[str, ...] = ()
    """Globs of files not to read: matched against the path in the repository and the path
    under the input's PATH."""
    cache_dir: str | None = None
    """The Hub cache (default: ``huggingface_hub``'s, from ``HF_HOME`` / ``HF_HUB_CACHE``)."""


class HubFile(BaseModel):
    """One downloaded (or read back) session file and where in the Hub it came from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    local: str
    """The file on this machine."""
    origin: DatasetOrigin
    """Repository, commit, path (and rows) on the Hub."""


class Fetched(BaseModel):
    """One dataset input: its summary row and the session files it gave."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dataset: HubDataset
    files: tuple[HubFile, ...] = ()


def is_hub(arg: str) -> bool:
    """Whether a command-line input names the Hub rather than a local path."""
    return arg.startswith(PREFIX)


def parse_ref(text: str) -> HubRef:
    """``hf://datasets/ORG/NAME[@REVISION][/PATH]`` → :class:`HubRef`; anything else is a
    :class:`UsageError` that shows the form. A revision with slashes is written URL-quoted
    (``refs%2Fpr%2F1``) or, for ``refs/…``, as is (``@refs/convert/parquet``)."""
    from urllib.parse import unquote

    form = f"{text}: a Hub input is hf://datasets/ORG/NAME[@REVISION][/PATH]"
    if not text.startswith(DATASETS):
        raise UsageError(f"{form} (only dataset repositories hold sessions)")
    parts = [p for p in text[len(DATASETS) :].split("/") if p]
    if len(parts) < 2:
        raise UsageError(form)
    name, at, revision = parts[1].partition("@")
    rest = parts[2:]
    if at and revision == "refs" and len(rest) >= 2:  # refs/convert/parquet, refs/pr/3
        revision, rest = "/".join(["refs", *rest[:2]]), rest[2:]
    if not name or (at and not revision):
        raise UsageError(form)
    return HubRef(
        text=text,
        repo_id=f"{parts[0]}/{name}",
        revision=unquote(revision) if at else "main",
        subpath="/".join(rest),
    )


def fetch(ref: HubRef, options: HubOptions, staging: Path) -> Fetched:
    """Download ``ref``'s session files (or read its parquet back into sessions under
    ``staging``); a dataset that cannot be read is a :class:`Fetched` whose row says why."""
    row = HubDataset(url=ref.text, repo_id=ref.repo_id, revision=ref.revision)
    try:
        return _fetch(ref, options, staging, row)
    except HubInputError as exc:
        return Fetched(dataset=row.model_copy(update={"error": str(exc)}))


def _fetch(ref: HubRef, options: HubOptions, staging: Path, row: HubDataset) -> Fetched:
    globs = _scoped(ref.subpath, options.include or SESSION_GLOBS)
    ignore = (*options.exclude, *_scoped(ref.subpath, options.exclude))
    folder = _download(ref, ref.revision, [*globs, CARD], ignore, options)
    commit = folder.name
    license = card_license(folder / CARD)
    row = row.model_copy(update={"commit": commit, "license": license})
    files = _matching(folder, globs, ignore)
    if not options.include:  # the default globs: sessions by name, as in a local folder
        files = [p for p in files if is_session_name(p.name)]
    if files:
        origins = [_origin(ref, ref.revision, commit, folder, p, license) for p in files]
        return Fetched(dataset=row.model_copy(update={"files": len(files)}), files=tuple(origins))
    return _from_parquet(ref, options, staging, row, license)


def _from_parquet(
    ref: HubRef, options: HubOptions, staging: Path, row: HubDataset, license: str | None
) -> Fetched:
    """The dataset's parquet read back into sessions: the revision's own, else the Hub's
    conversion; neither is an error that lists what the revision holds."""
    from trajforge.reconstruct.hub_parquet import sessions_from_parquet

    for revision in (ref.revision, CONVERTED):
        scope = ref.subpath if revision == ref.revision else ""
        globs = _scoped(scope, (PARQUET_GLOB,))
        try:
            folder = _download(ref, revision, globs, (), options)
        except HubInputError:
            if revision == CONVERTED:
                break
            raise
        tables = _matching(folder, globs, ())
        if not tables:
            continue
        target = staging / ref.repo_id.replace("/", "--") / folder.name
        read = sessions_from_parquet(tables, target)
        if not read.files:
            problems = "; ".join(read.errors or read.warnings) or "no rows"
            where = f"{ref.text}: its parquet at {revision}"
            raise HubInputError(f"{where} holds no session: {problems}")
        files = tuple(_parquet_origin(ref, revision, folder, f, license) for f in read.files)
        update = {
            "files": len(files),
            "parquet": revision,
            "warnings": (*read.errors, *read.warnings)[:MAX_WARNINGS],
        }
        return Fetched(dataset=row.model_copy(update=update), files=files)
    wanted = ", ".join(options.include or SESSION_GLOBS)
    raise HubInputError(
        f"{ref.text} (commit {row.commit}): no session files ({wanted}) and no parquet"
        f" (neither at {ref.revision} nor at {CONVERTED}); pass --include GLOB for other names"
    )


def _parquet_origin(
    ref: HubRef, revision: str, folder: Path, written: WrittenSession, license: str | None
) -> HubFile:
    """A session read back from parquet: the file and rows where it starts."""
    first = written.rows[0]
    origin = DatasetOrigin(
        repo_id=ref.repo_id,
        revision=revision,
        commit=folder.name,
        path=Path(first.parquet).relative_to(folder).as_posix(),
        rows=(first.start, first.stop - 1),
        license=license,
    )
    return HubFile(local=written.path, origin=origin)


def _scoped(subpath: str, globs: Sequence[str]) -> tuple[str, ...]:
    """Globs limited to ``subpath``: a file is itself, a folder prefixes every glob."""
    if not subpath:
        return tuple(globs)
    if any(fnmatch.fnmatch(subpath, g) for g in globs):
        return (subpath,)
    return tuple(f"{subpath.rstrip('/')}/{g}" for g in globs)


def _matching(folder: Path, globs: Sequence[str], ignore: Sequence[str]) -> list[Path]:
    """Files of a snapshot folder matching ``globs`` and no ``ignore`` glob, sorted by path
    (offline, the snapshot may hold more than this input downloaded)."""
    found = []
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if path.is_file() and _match(rel, globs) and not _match(rel, ignore):
            found.append(path)
    return found


def _match(rel: str, globs: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(rel, g) for g in globs)


def _origin(
    ref: HubRef, revision: str, commit: str, folder: Path, path: Path, license: str | None
) -> HubFile:
    rel = path.relative_to(folder).as_posix()
    origin = DatasetOrigin(
        repo_id=ref.repo_id, revision=revision, commit=commit, path=rel, license=license
    )
    return HubFile(local=str(path), origin=origin)


def card_license(card: Path) -> str | None:
    """The ``license`` a dataset card's YAML header states (several joined by ", ";
    ``other`` with its ``license_name`` when given); None without a card or a licence."""
    import yaml
    from huggingface_hub.repocard import metadata_load

    try:
        meta = metadata_load(card)
    except OSError:
        return None
    except (yaml.YAMLError, ValueError):
        log.warning("%s: the card's YAML header cannot be read; its licence is unknown", card)
        return None
    if not isinstance(meta, dict) or not meta.get("license"):
        return None
    value = meta["license"]
    names = [str(v) for v in value] if isinstance(value, list) else [str(value)]
    if names == ["other"] and meta.get("license_name"):
        names = [f"other ({meta['license_name']})"]
    return ", ".join(names)


def _download(
    ref: HubRef, revision: str, globs: Sequence[str], ignore: Sequence[str], options: HubOptions
) -> Path:
    """The snapshot folder of ``revision`` (named by its commit) with the matching files
    downloaded; errors say what to do."""
    from huggingface_hub import snapshot_download

    try:
        folder = snapshot_download(
            ref.repo_id,
            repo_type="dataset",
            revision=revision,
            allow_patterns=list(globs),
            ignore_patterns=list(ignore) or None,
            cache_dir=options.cache_dir,
        )
    except Exception as exc:  # every failure of one input is that input's row
        raise HubInputError(_why(ref, revision, exc, options)) from None
    path = Path(str(folder))  # offline, the client raises unless the snapshot is cached
    path.mkdir(parents=True, exist_ok=True)  # online and nothing matched: an empty snapshot
    return path


def _why(ref: HubRef, revision: str, exc: Exception, options: HubOptions) -> str:
    """What a failed download means for the user, and what to do."""
    from huggingface_hub import constants
    from huggingface_hub.errors import (
        GatedRepoError,
        LocalEntryNotFoundError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    where = f"hf://datasets/{ref.repo_id}"
    if isinstance(exc, GatedRepoError):
        return (
            f"{where} is gated: accept its conditions on {constants.ENDPOINT}/datasets/"
            f"{ref.repo_id} and set HF_TOKEN to a token of that account"
        )
    if isinstance(exc, RepositoryNotFoundError):
        return (
            f"{where}: no such dataset repository on {constants.ENDPOINT} (if it is private,"
            " set HF_TOKEN to a token that can read it)"
        )
    if isinstance(exc, RevisionNotFoundError):
        return f"{where}: no revision {revision!r} (a branch, tag or commit of the dataset)"
    if isinstance(exc, LocalEntryNotFoundError | OfflineModeIsEnabled):
        if constants.HF_HUB_OFFLINE:
            return _offline(ref, revision, options)
        return (  # the client could not reach the Hub and found nothing cached
            f"{where}@{revision}: {constants.ENDPOINT} could not be reached and the revision is"
            f" not in the Hub cache {_cache(options)}: check the network (or HF_ENDPOINT) and"
            " run again"
        )
    return (
        f"{where}@{revision}: download failed ({type(exc).__name__}: {exc}); the files already"
        f" downloaded are kept in {_cache(options)}: run the same command again to resume"
    )


def _cache(options: HubOptions) -> str:
    from huggingface_hub import constants

    return options.cache_dir or constants.HF_HUB_CACHE


def _offline(ref: HubRef, revision: str, options: HubOptions) -> str:
    return (
        f"hf://datasets/{ref.repo_id}@{revision} is not in the Hub cache {_cache(options)} and"
        " HF_HUB_OFFLINE=1 forbids downloading: run once with the network (or unset"
        " HF_HUB_OFFLINE)"
    )
