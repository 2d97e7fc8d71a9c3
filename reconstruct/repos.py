"""Which local checkout a session ran in (``--repos DIR``, ``--repo-map OLD=DIR``).

A session records where it ran (``cwd``) and sometimes its repository (Codex: remote URL,
branch, commit; Claude Code: branch). The checkouts the user gives are matched against that,
strongest evidence first:

1. ``--repo-map OLD=DIR``: the recorded cwd starts with OLD, so it lives at DIR + the rest;
2. ``cwd``: the recorded cwd exists here, inside one of the given checkouts;
3. ``recorded_url``: the recorded remote URL is a checkout's remote (host/owner/name compared);
4. ``remote_name`` / ``folder_name``: a folder of the recorded cwd is named like a checkout's
   remote repository or its folder; the rest of the cwd is the session's folder inside it.

Every match is a :class:`Candidate`; :mod:`.commits` scores them by content and the best wins.
When none of them holds what the session read (no cwd recorded, a renamed project, a Windows or
macOS path from another machine), :func:`by_content` looks for the session's files in every
given checkout's history (``content``): a checkout qualifies when its object store holds at least
:data:`MIN_CONTENT_FILES` and :data:`MIN_CONTENT_SHARE` of the files the session read whole;
below :data:`~.commits.MIN_MATCH` of them (a session begun on a dirty tree) it counts only when
the commit search is confident.
"""

from __future__ import annotations

import logging
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from trajforge.errors import UsageError
from trajforge.reconstruct.commits import MIN_MATCH
from trajforge.reconstruct.evidence import normal
from trajforge.reconstruct.gitrepo import (
    GitError,
    blob_id,
    present,
    remote_urls,
    toplevel,
    tree_paths,
)
from trajforge.records import RepoFoundBy, SessionHeader

log = logging.getLogger(__name__)

FoundBy = RepoFoundBy
"""How a checkout was matched: by cwd, remote, name, a mapping, or ``content`` (its history holds
the files the session read)."""
SCAN_DEPTH = 2
"""How deep below a ``--repos`` DIR checkouts are looked for (DIR/owner/repo is depth 2)."""
MIN_CONTENT_FILES = 2
"""Least whole-file reads a checkout's history must hold to be the session's by content alone
(one file, a LICENSE or an empty README, says little about which project it was)."""
MIN_CONTENT_SHARE = 0.25
"""Least share of the session's whole-file reads a checkout's history must hold to be looked at
by content. Below :data:`~.commits.MIN_MATCH` the checkout is only *weakly* held: a session that
began on a dirty tree reads files no commit holds (pi-mono's large session: 6 of 17), so the
commit search decides, and a weak checkout counts only when that search is confident."""
MAX_CONTENT_FILES = 200
"""Whole-file reads looked up per checkout (bounds the time on sessions that read thousands)."""
STRENGTH: dict[FoundBy, int] = {
    "base_repo": 0,
    "repo_map": 0,
    "cwd": 1,
    "recorded_url": 2,
    "remote_name": 3,
    "folder_name": 4,
    "content": 5,
}
"""Order of the matching rules (lower: stronger); breaks ties between equally good commits."""
_SCP_URL = re.compile(r"^(?:[\w.-]+@)?([\w.-]+):(?!//)(.+)$")


class RepoSearch(BaseModel):
    """Where to look for sessions' repositories (sent to reconstruct workers)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dirs: tuple[str, ...] = ()
    """``--repos`` folders: each a checkout or a folder of checkouts."""
    mapping: tuple[tuple[str, str], ...] = ()
    """``--repo-map`` pairs: recorded cwd prefix → local folder."""


@dataclass(frozen=True)
class Checkout:
    """One local git checkout that may hold sessions' repositories."""

    path: Path
    """Top folder of the checkout (resolved)."""
    urls: tuple[str, ...]
    """Remote URLs, origin first."""

    @property
    def names(self) -> set[str]:
        """Folder name and remote repository names, lowercased."""
        return {self.path.name.lower(), *(url_name(u) for u in self.urls)} - {""}


@dataclass(frozen=True)
class Candidate:
    """A checkout that may be the session's repository, and where in it the session ran."""

    checkout: Checkout
    subdir: str
    """The session's folder inside the checkout ('' at the top)."""
    found_by: FoundBy
    held: int = 0
    """With ``content``: how many of the session's whole-file reads the history holds."""
    weak: bool = False
    """With ``content``: the history holds fewer than :data:`~.commits.MIN_MATCH` of them."""


def parse_map(spec: str) -> tuple[str, str]:
    """``OLD=DIR`` → (normalised OLD prefix, DIR); UsageError naming the option otherwise."""
    old, sep, new = spec.partition("=")
    if not sep or not old.strip() or not new.strip():
        raise UsageError(f"--repo-map {spec!r}: expected OLD_PREFIX=DIR, e.g. /home/me/src=~/src")
    target = Path(new.strip()).expanduser()
    if not target.is_dir():
        raise UsageError(f"--repo-map {spec!r}: {target} is not a directory")
    return _norm(old.strip()), str(target.resolve())


def check_dirs(dirs: Iterable[str]) -> tuple[str, ...]:
    """``--repos`` folders, resolved; UsageError for one that is not a directory."""
    found = []
    for raw in dirs:
        path = Path(raw).expanduser()
        if not path.is_dir():
            raise UsageError(f"--repos {raw}: not a directory")
        found.append(str(path.resolve()))
    return tuple(found)


def normalize_url(url: str) -> str:
    """``host/owner/name`` of a remote URL (https, ssh, scp-like ``git@host:o/n``), lowercased."""
    text = url.strip()
    scp = _SCP_URL.match(text)
    if scp and "://" not in text:
        host, path = scp.groups()
    else:
        rest = text.split("://", 1)[-1]
        host, _, path = rest.partition("/")
        host = host.rsplit("@", 1)[-1].split(":", 1)[0]
    path = path.strip("/").removesuffix(".git").strip("/")
    return f"{host}/{path}".lower() if path else host.lower()


def url_name(url: str) -> str:
    """The repository name of a remote URL (``Battle-Cities``), lowercased."""
    return normalize_url(url).rsplit("/", 1)[-1]


def _norm(path: str) -> str:
    return posixpath.normpath(path.replace("\\", "/"))


def _parts(cwd: str) -> list[str]:
    """Folders of a recorded cwd (POSIX or Windows), drive letters dropped."""
    parts = [p for p in _norm(cwd).split("/") if p]
    return parts[1:] if parts and re.fullmatch(r"[A-Za-z]:", parts[0]) else parts


@lru_cache(maxsize=16)
def discover(dirs: tuple[str, ...]) -> tuple[Checkout, ...]:
    """Checkouts in ``dirs``: each DIR that is a checkout, else those up to SCAN_DEPTH below."""
    found: dict[Path, Checkout] = {}
    for raw in dirs:
        for top in _checkouts_in(Path(raw), SCAN_DEPTH):
            if top not in found:
                found[top] = Checkout(top, remote_urls(top))
    log.debug("repos: %d checkouts in %s", len(found), ", ".join(dirs))
    return tuple(found.values())


def _checkouts_in(folder: Path, depth: int) -> list[Path]:
    if (folder / ".git").exists():
        top = toplevel(folder)
        return [top] if top is not None else []
    if depth == 0:
        return []
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []
    return [top for child in children for top in _checkouts_in(child, depth - 1)]


def candidates(header: SessionHeader, search: RepoSearch) -> list[Candidate]:
    """Every (checkout, subdir) the session may have run in, strongest rule first."""
    checkouts = discover(search.dirs)
    found: list[Candidate] = []
    cwd = header.cwd or ""
    if cwd:
        found += _mapped(cwd, search.mapping)
        found += _existing(cwd, checkouts)
    url = header.git.repository_url if header.git else None
    if url:
        key = normalize_url(url)
        found += [
            Candidate(c, _tail_after_name(cwd, c) or "", "recorded_url")
            for c in checkouts
            if key in {normalize_url(u) for u in c.urls}
        ]
    if cwd:
        found += _by_name(cwd, checkouts)
    return _unique(found)


def _mapped(cwd: str, mapping: Sequence[tuple[str, str]]) -> list[Candidate]:
    norm = _norm(cwd)
    for old, new in sorted(mapping, key=lambda m: -len(m[0])):
        if norm != old and not norm.startswith(old.rstrip("/") + "/"):
            continue
        local = Path(new) / posixpath.relpath(norm, old)
        probe = local if local.is_dir() else Path(new)
        top = toplevel(probe)
        if top is None:
            log.debug("repo map %s=%s: %s is not in a git checkout", old, new, probe)
            continue
        subdir = _subdir(top, local)
        if subdir is not None:
            return [Candidate(Checkout(top, remote_urls(top)), subdir, "repo_map")]
    return []


def _existing(cwd: str, checkouts: Sequence[Checkout]) -> list[Candidate]:
    local = Path(_norm(cwd))
    if not local.is_dir():
        return []
    for checkout in checkouts:
        subdir = _subdir(checkout.path, local)
        if subdir is not None:
            return [Candidate(checkout, subdir, "cwd")]
    return []


def _subdir(top: Path, local: Path) -> str | None:
    try:
        rel = local.resolve().relative_to(top)
    except ValueError:
        return None
    return "" if rel.as_posix() == "." else rel.as_posix()


def _by_name(cwd: str, checkouts: Sequence[Checkout]) -> list[Candidate]:
    """Checkouts named like a folder of the cwd; the deeper the folder, the better."""
    parts = _parts(cwd)
    found: list[Candidate] = []
    for index in range(len(parts) - 1, -1, -1):
        name = parts[index].lower()
        rest = "/".join(parts[index + 1 :])
        for checkout in checkouts:
            if rest and not (checkout.path / rest).is_dir():
                continue
            if name == checkout.path.name.lower():
                found.append(Candidate(checkout, rest, "folder_name"))
            elif name in {url_name(u) for u in checkout.urls}:
                found.append(Candidate(checkout, rest, "remote_name"))
    return found


def _tail_after_name(cwd: str, checkout: Checkout) -> str | None:
    """The part of the cwd below a folder named like ``checkout`` (None: no such folder)."""
    parts = _parts(cwd)
    for index in range(len(parts) - 1, -1, -1):
        if parts[index].lower() in checkout.names:
            rest = "/".join(parts[index + 1 :])
            if not rest or (checkout.path / rest).is_dir():
                return rest
    return None


def _unique(found: Iterable[Candidate]) -> list[Candidate]:
    seen: set[tuple[Path, str]] = set()
    kept = []
    for cand in found:
        key = (cand.checkout.path, cand.subdir)
        if key not in seen:
            seen.add(key)
            kept.append(cand)
    return kept


def by_content(texts: dict[str, str], dirs: tuple[str, ...]) -> list[Candidate]:
    """Checkouts whose history holds the files the session read whole (``texts``: session path →
    content), most files first; each placed at the folder where those paths lie at its HEAD."""
    wanted = {p: _blob_ids(t) for p, t in sorted(texts.items())[:MAX_CONTENT_FILES]}
    if len(wanted) < MIN_CONTENT_FILES:
        return []
    found: list[Candidate] = []
    for checkout in discover(dirs):
        try:
            have = present(checkout.path, (i for ids in wanted.values() for i in ids))
        except GitError as exc:
            log.debug("content search in %s: %s", checkout.path, exc)
            continue
        hits = [p for p, ids in wanted.items() if ids & have]
        if len(hits) >= MIN_CONTENT_FILES and len(hits) >= MIN_CONTENT_SHARE * len(wanted):
            weak = len(hits) < MIN_MATCH * len(wanted)
            folder = _folder_of(checkout, hits)
            found.append(Candidate(checkout, folder, "content", len(hits), weak))
    return sorted(found, key=lambda c: -c.held)


def _blob_ids(text: str) -> set[str]:
    """Ids of the file as git may hold it: trailing newline or not, LF or CRLF."""
    body = normal(text)
    crlf = body.replace("\n", "\r\n")
    forms = (text, body, body + "\n", crlf + "\r\n")
    return {blob_id(f.encode("utf-8", errors="surrogateescape")) for f in forms}


def _folder_of(checkout: Checkout, paths: Sequence[str]) -> str:
    """The folder of the checkout under which most of ``paths`` lie at HEAD ('' for the top)."""
    try:
        tree = tree_paths(checkout.path)
    except GitError:
        return ""
    counts: dict[str, int] = {}
    for path in paths:
        for prefix in {t[: -len(path)] for t in tree if t == path or t.endswith("/" + path)}:
            counts[prefix] = counts.get(prefix, 0) + 1
    if not counts:
        return ""
    best = max(counts.items(), key=lambda kv: (kv[1], -len(kv[0])))[0]
    return best.rstrip("/")
