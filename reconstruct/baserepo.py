"""``--base-repo DIR[@REV]``: the starting workspace from a git checkout."""

from __future__ import annotations

from pathlib import Path

from trajforge.errors import UsageError
from trajforge.reconstruct.gitrepo import GitError, as_text, git


def parse_spec(spec: str) -> tuple[Path, str | None]:
    """Split ``DIR[@REV]``."""
    directory, sep, rev = spec.rpartition("@")
    if not sep or not directory:
        return Path(spec), None
    return Path(directory), rev or None


def _git(repo: Path, *args: str) -> bytes:
    try:
        return git(repo, *args)
    except GitError as exc:
        raise UsageError(f"--base-repo {repo}: {exc}") from None


def load_base(spec: str) -> dict[str, str]:
    """Text files of the checkout (its tree at REV when given); binary and huge files skipped."""
    repo, rev = parse_spec(spec)
    if not repo.is_dir():
        raise UsageError(f"--base-repo {repo}: not a directory")
    if rev is None and not (repo / ".git").exists():
        files = {}
        for path in sorted(p for p in repo.rglob("*") if p.is_file()):
            text = as_text(path.read_bytes())
            if text is not None:
                files[path.relative_to(repo).as_posix()] = text
        return files
    names = _git(repo, "ls-tree", "-r", "-z", "--name-only", rev or "HEAD").split(b"\0")
    files = {}
    for raw in filter(None, names):
        name = raw.decode(errors="surrogateescape")
        if rev is None:
            path = repo / name
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else b""
        else:
            data = _git(repo, "show", f"{rev}:{name}")
        text = as_text(data)
        if text is not None:
            files[name] = text
    return files
