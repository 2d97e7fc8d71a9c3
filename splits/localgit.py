"""Push a dataset folder to a local git repository in Hub layout, one tag per revision.

The repository is bare (like a Hub remote): ``git clone --branch REVISION DIR copy`` gives the
dataset folder back, and :func:`checkout` does the same for code. A push

1. checks the dataset folder (manifest readable, every data file's sha256 as recorded);
2. writes its files into the object store through a private index (no working tree, no
   refs touched);
3. makes a commit on ``main`` only when the tree differs from ``main``'s, then moves ``main``
   and creates the tag in one ``git update-ref --stdin`` transaction.

A failure before step 3 leaves only unreachable objects; step 3 changes both refs or neither.
So no partial revision is ever visible, and re-pushing identical content makes no commit.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from pathlib import Path

from trajforge.errors import RecordError, TrajforgeError, UsageError
from trajforge.records import DatasetManifest, load_record
from trajforge.scrub import Scrubber
from trajforge.splits.push_result import PushResult

BRANCH = "main"
_IDENTITY = {
    "GIT_AUTHOR_NAME": "trajforge",
    "GIT_AUTHOR_EMAIL": "trajforge@localhost",
    "GIT_COMMITTER_NAME": "trajforge",
    "GIT_COMMITTER_EMAIL": "trajforge@localhost",
}


class PushError(TrajforgeError):
    """A push failed; nothing was published."""


def _git(repo: Path, *args: str, env: dict[str, str] | None = None, stdin: str = "") -> str:
    full = {**os.environ, **_IDENTITY, "GIT_DIR": str(repo), **(env or {})}
    full.pop("GIT_WORK_TREE", None)
    proc = subprocess.run(
        ["git", *args], input=stdin, capture_output=True, text=True, env=full, check=False
    )
    if proc.returncode != 0:
        detail = Scrubber().text(proc.stderr.strip() or proc.stdout.strip())
        raise PushError(f"git {args[0]} in {repo} failed: {detail}")
    return proc.stdout.strip()


def dataset_files(dataset: Path) -> list[str]:
    """Files of a dataset folder that get pushed, after checking them against the manifest."""
    try:
        manifest = load_record(DatasetManifest, dataset / "manifest.json")
    except RecordError as exc:
        raise UsageError(f"{dataset}: not a dataset folder ({exc})") from None
    if not (dataset / "README.md").is_file():
        raise UsageError(f"{dataset}: README.md (the dataset card) is missing")
    for rel, digest in sorted(manifest.files.items()):
        path = dataset / rel
        if not path.is_file():
            raise UsageError(f"{path}: listed in manifest.json but missing")
        if hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            raise UsageError(f"{path}: content differs from the sha256 in manifest.json")
    return ["README.md", "manifest.json", *sorted(manifest.files)]


def _ensure_repo(repo: Path) -> None:
    if (repo / "HEAD").is_file() and (repo / "objects").is_dir():
        return
    if repo.exists() and any(repo.iterdir()):
        raise UsageError(f"--to {repo}: exists and is not a bare git repository")
    repo.mkdir(parents=True, exist_ok=True)
    _git(repo, "init", "--bare", "--quiet", f"--initial-branch={BRANCH}")


def _rev(repo: Path, ref: str) -> str | None:
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except PushError:
        return None


def _tree(repo: Path, dataset: Path, files: list[str]) -> str:
    with tempfile.TemporaryDirectory(prefix="trajforge-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), "GIT_WORK_TREE": str(dataset)}
        full = {**os.environ, **_IDENTITY, "GIT_DIR": str(repo), **env}
        proc = subprocess.run(
            ["git", "add", "--force", "--", *files],
            cwd=dataset,
            capture_output=True,
            text=True,
            env=full,
            check=False,
        )
        if proc.returncode != 0:
            detail = Scrubber().text(proc.stderr.strip())
            raise PushError(f"git add of {dataset} into {repo} failed: {detail}")
        return _git(repo, "write-tree", env=env)


def push_local(dataset: Path, repo: Path, revision: str) -> PushResult:
    """Publish ``dataset`` as tag ``revision`` of the bare repository ``repo``."""
    if not revision or _git_check_ref(revision) is False:
        raise UsageError(f"--revision {revision!r}: not a valid git tag name")
    files = dataset_files(dataset)
    _ensure_repo(repo)
    tree = _tree(repo, dataset, files)
    head = _rev(repo, f"refs/heads/{BRANCH}")
    tagged = _rev(repo, f"refs/tags/{revision}")
    if tagged is not None:
        if _git(repo, "rev-parse", f"{tagged}^{{tree}}") != tree:
            raise UsageError(
                f"revision {revision!r} already exists in {repo} with other content;"
                " revisions are immutable, pick a new --revision"
            )
        return PushResult(target=str(repo), revision=revision, commit=tagged, created=False)
    same = _commit_with_tree(repo, tree, head)
    created = same is None
    commit = same or ""
    if created:
        parents = ["-p", head] if head else []
        commit = _git(repo, "commit-tree", tree, *parents, "-m", f"dataset revision {revision}")
    lines = ["start", f"create refs/tags/{revision} {commit}"]
    if created or same == head:
        lines.append(f"update refs/heads/{BRANCH} {commit} {head or '0' * 40}")
    transaction = "\n".join([*lines, "prepare", "commit", ""])
    _git(repo, "update-ref", "--stdin", stdin=transaction)
    return PushResult(target=str(repo), revision=revision, commit=commit, created=created)


def _commit_with_tree(repo: Path, tree: str, head: str | None) -> str | None:
    """The head commit, or an already tagged commit, whose tree is ``tree``."""
    tips = [head] if head else []
    tips += _git(repo, "for-each-ref", "--format=%(objectname)", "refs/tags").split()
    for commit in tips:
        if _git(repo, "rev-parse", f"{commit}^{{tree}}") == tree:
            return commit
    return None


def _git_check_ref(revision: str) -> bool:
    proc = subprocess.run(
        ["git", "check-ref-format", f"refs/tags/{revision}"], capture_output=True, check=False
    )
    return proc.returncode == 0


def checkout(repo: Path, revision: str, dest: Path) -> Path:
    """Clone ``repo`` at ``revision`` into ``dest`` (a plain dataset folder plus ``.git``)."""
    proc = subprocess.run(
        ["git", "clone", "--quiet", "--branch", revision, "--", str(repo), str(dest)],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise UsageError(f"cannot check out {revision!r} of {repo}: {proc.stderr.strip()}")
    return dest
