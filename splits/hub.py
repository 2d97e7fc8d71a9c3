"""Push a dataset folder as one revision of a Hugging Face Hub dataset repository.

One revision is one commit on ``main`` plus a tag named after the revision:

1. ``create_repo(repo_type="dataset", exist_ok=True)``;
2. if the tag already exists, the files it points at must equal the local ones (then nothing
   is pushed, ``created=False``), otherwise the push is refused: a revision never changes;
3. the local files are compared with ``main``'s head (``list_repo_tree``: git blob ids for
   regular files, sha256 for LFS files). Identical → no commit, the head gets the tag;
4. otherwise one ``create_commit`` adds every file (parquet goes through LFS per the Hub's
   preupload answer) and deletes the files the revision no longer has, with
   ``parent_commit=head`` so a concurrent push cannot be overwritten silently;
5. ``create_tag(revision)`` on that commit.

A commit is atomic on the Hub, so a failed push leaves no partial revision; if tagging fails
after the commit, the error says so and re-running the same push only adds the tag.

The token comes from the ``token`` argument, else ``HF_TOKEN``, else the client's stored login;
the endpoint from ``endpoint``, else ``HF_ENDPOINT``, else huggingface.co. Every error from the
Hub boundary becomes a :class:`~trajforge.errors.HubError` whose message has been scrubbed of
the token.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
from huggingface_hub.hf_api import RepoFile

from trajforge.errors import HubError, UsageError
from trajforge.scrub import scrub_text
from trajforge.splits.push_result import PushResult

log = logging.getLogger(__name__)

REPO_TYPE = "dataset"
BRANCH = "main"
KEPT_REMOTE = frozenset({".gitattributes"})  # Hub-managed files a revision does not own
_REVISION = re.compile(r"^(?![0-9a-f]{40}$)(?!main$)[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@dataclass(frozen=True)
class LocalFile:
    """One file of the dataset folder with the two digests the Hub compares by."""

    path: Path
    sha256: str
    git_sha1: str


def push_hub(
    dataset: Path,
    repo_id: str,
    revision: str,
    *,
    token: str | None = None,
    endpoint: str | None = None,
) -> PushResult:
    """Publish ``dataset`` as ``revision`` (a tag on one commit of ``main``) of ``repo_id``."""
    check_revision(revision)
    files = local_files(dataset)
    token = token or os.environ.get("HF_TOKEN") or None
    api = HfApi(endpoint=endpoint or os.environ.get("HF_ENDPOINT") or None, token=token)
    target = f"hf://datasets/{repo_id}"
    with hub_boundary(token, f"push of {revision} to {target}"):
        api.create_repo(repo_id, repo_type=REPO_TYPE, exist_ok=True)
        refs = api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
        tagged = {tag.name: tag.target_commit for tag in refs.tags}
        if revision in tagged:
            _check_existing(api, repo_id, revision, tagged[revision], files)
            log.info("%s of %s already holds these files", revision, target)
            return PushResult(
                target=target, revision=revision, commit=tagged[revision], created=False
            )
        head = next((b.target_commit for b in refs.branches if b.name == BRANCH), None)
        remote = remote_files(api, repo_id, head)
        created = not same_files(files, remote)
        commit = _commit(api, repo_id, revision, files, remote, head) if created else head
    if commit is None:
        raise HubError(f"{target} has no {BRANCH} branch and nothing to commit")
    tag_revision(api, repo_id, revision, commit, created=created, token=token)
    return PushResult(target=target, revision=revision, commit=commit, created=created)


def check_revision(revision: str) -> None:
    """A revision name must be usable as a tag and not look like a branch or a commit id."""
    if not _REVISION.match(revision):
        raise UsageError(
            f"--revision {revision!r}: use letters, digits, '.', '_' or '-' (not 'main' and not"
            " a 40-character commit id), starting with a letter or digit"
        )


def local_files(dataset: Path) -> dict[str, LocalFile]:
    """Every file under ``dataset`` by repository path (hidden files and folders skipped)."""
    if not dataset.is_dir():
        raise UsageError(f"{dataset}: not a dataset folder (run `trajforge split` first)")
    if not (dataset / "manifest.json").is_file():
        raise UsageError(
            f"{dataset}: no manifest.json, not a dataset folder from `trajforge split`"
        )
    files = {}
    for path in sorted(dataset.rglob("*")):
        rel = path.relative_to(dataset)
        if path.is_file() and not any(part.startswith(".") for part in rel.parts):
            files[rel.as_posix()] = _digest(path)
    return files


def _digest(path: Path) -> LocalFile:
    sha256, sha1 = hashlib.sha256(), hashlib.sha1(b"blob %d\0" % path.stat().st_size)
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 20):
            sha256.update(chunk)
            sha1.update(chunk)
    return LocalFile(path, sha256.hexdigest(), sha1.hexdigest())


def remote_files(api: HfApi, repo_id: str, commit: str | None) -> dict[str, RepoFile]:
    """The files of ``commit`` (none for a repository without commits)."""
    if commit is None:
        return {}
    tree = api.list_repo_tree(repo_id, recursive=True, revision=commit, repo_type=REPO_TYPE)
    return {item.path: item for item in tree if isinstance(item, RepoFile)}


def same_files(local: dict[str, LocalFile], remote: dict[str, RepoFile]) -> bool:
    """True when ``remote`` holds exactly the local files (Hub-managed files aside)."""
    owned = {
        path: item for path, item in remote.items() if path in local or path not in KEPT_REMOTE
    }
    if owned.keys() != local.keys():
        return False
    for path, item in owned.items():
        mine = local[path]
        if (item.lfs.sha256 if item.lfs else item.blob_id) != (
            mine.sha256 if item.lfs else mine.git_sha1
        ):
            return False
    return True


def _check_existing(
    api: HfApi, repo_id: str, revision: str, commit: str, files: dict[str, LocalFile]
) -> None:
    if not same_files(files, remote_files(api, repo_id, commit)):
        raise HubError(
            f"revision {revision} of hf://datasets/{repo_id} already exists (commit {commit}) with"
            " different files; a revision never changes: push under a new --revision"
        )


def _commit(
    api: HfApi,
    repo_id: str,
    revision: str,
    files: dict[str, LocalFile],
    remote: dict[str, RepoFile],
    head: str | None,
) -> str:
    operations: list[CommitOperationAdd | CommitOperationDelete] = [
        CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(item.path))
        for name, item in files.items()
    ]
    gone = sorted(set(remote) - set(files) - KEPT_REMOTE)
    operations += [CommitOperationDelete(path_in_repo=name) for name in gone]
    log.info("committing %d file(s), deleting %d, on %s", len(files), len(gone), BRANCH)
    info = api.create_commit(
        repo_id,
        operations,
        commit_message=f"trajforge dataset revision {revision}",
        repo_type=REPO_TYPE,
        revision=BRANCH,
        parent_commit=head,
    )
    return str(info.oid)


def tag_revision(
    api: HfApi, repo_id: str, revision: str, commit: str, *, created: bool, token: str | None
) -> None:
    """Tag ``commit`` as ``revision``; a tag already there must point at that commit."""
    where = f"hf://datasets/{repo_id}"
    try:
        with hub_boundary(token, f"tagging {revision} on {where}"):
            try:
                api.create_tag(repo_id, tag=revision, revision=commit, repo_type=REPO_TYPE)
            except httpx2.HTTPStatusError as exc:
                if exc.response.status_code != 409:
                    raise
                tags = api.list_repo_refs(repo_id, repo_type=REPO_TYPE).tags
                if not any(t.name == revision and t.target_commit == commit for t in tags):
                    raise HubError(f"tag {revision} on {where} points at another commit") from None
    except HubError as exc:
        if not created:
            raise
        raise HubError(
            f"commit {commit} is on {BRANCH} of {where} but the revision tag is missing: {exc}."
            " Re-run the same push to add the tag (no new commit will be made)."
        ) from None


@contextmanager
def hub_boundary(token: str | None, what: str) -> Iterator[None]:
    """Turn client and transport errors into a HubError whose message never holds ``token``."""
    try:
        yield
    except httpx2.HTTPError as exc:
        status = getattr(getattr(exc, "response", None), "status_code", None)
        hint = (
            " (check HF_TOKEN / --token: the Hub refused the credentials)" if status == 401 else ""
        )
        raise HubError(redact(f"{what} failed{hint}: {exc}", token)) from None
    except (ValueError, RuntimeError) as exc:  # malformed answers, failed LFS uploads
        raise HubError(redact(f"{what} failed: {type(exc).__name__}: {exc}", token)) from None


def redact(text: str, token: str | None) -> str:
    """``text`` without ``token`` (literally) and without anything else that looks secret."""
    if token:
        text = text.replace(token, "[REDACTED:hf_token]")
    return scrub_text(text)
