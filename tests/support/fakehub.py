"""A small local server that speaks the Hugging Face Hub endpoints ``huggingface_hub`` uses.

It exists so that pushes and downloads can be tested offline with the real client library:
``with FakeHub(token="hf_...") as hub:`` then point ``HfApi(endpoint=hub.endpoint)`` (or
``HF_ENDPOINT``) at it. Storage is in memory and git-like: commits (parent, tree of
path → blob), branches, tags, and LFS objects by sha256. Only dataset repositories are served.

Served: repo create, validate-yaml, repo info (``/api/datasets/R[/revision/REV]``), refs, tree
(recursive or not), paths-info, preupload (upload modes + remote oids), the LFS batch API with
a basic single-PUT transfer, commit (ndjson: file, lfsFile, deletedFile, deletedFolder, with
``parentCommit`` checks), tag, and ``resolve`` (HEAD/GET, byte ranges, the ``X-Repo-Commit`` /
``ETag`` / ``X-Linked-*`` headers). Xet storage is not served: clients must run with
``HF_HUB_DISABLE_XET=1`` (or ``huggingface_hub.constants.HF_HUB_DISABLE_XET = True``) so that
LFS files travel over the LFS batch API. :meth:`FakeHub.fail` makes the next calls of an
endpoint answer 500 without side effects, to test interrupted pushes.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import hmac
import json
import logging
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

log = logging.getLogger(__name__)

GITATTRIBUTES = "".join(
    f"{pattern} filter=lfs diff=lfs merge=lfs -text\n"
    for pattern in ("*.parquet", "*.arrow", "*.bin", "*.gz", "*.zip", "*.tar", "*.safetensors")
).encode()


class HubHTTPError(Exception):
    """An error answer: status code, message, and the Hub's ``X-Error-Code`` when it has one."""

    def __init__(self, status: int, message: str, code: str | None = None, **extra: str) -> None:
        super().__init__(message)
        self.status, self.message, self.code, self.extra = status, message, code, extra


def git_blob_sha1(data: bytes) -> str:
    """The git object id of a blob holding ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(sha256: str, size: int) -> bytes:
    """The git-lfs pointer file stored in git in place of an LFS object."""
    return (
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{sha256}\nsize {size}\n".encode()
    )


@dataclass(frozen=True)
class Blob:
    """One file in a commit's tree."""

    oid: str  # git sha1 of the content (regular) or of the LFS pointer
    size: int
    lfs: str | None = None  # sha256 of the content for LFS files


@dataclass(frozen=True)
class Commit:
    """One commit: its parent, full tree and message."""

    oid: str
    parent: str | None
    tree: dict[str, Blob]
    title: str
    date: str


@dataclass
class Repo:
    """A dataset repository: commits, branches and tags by name."""

    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    converts: dict[str, str] = field(default_factory=dict)  # refs/convert/parquet → commit
    access: str = "public"  # public | gated | private: gated and private need the token to read


class FakeHub:
    """The Hub state plus the HTTP server exposing it on 127.0.0.1 (a free port)."""

    def __init__(self, token: str | None = None) -> None:
        self.token = token
        self.repos: dict[str, Repo] = {}
        self.blobs: dict[str, bytes] = {}  # git sha1 → content (regular files)
        self.lfs: dict[str, bytes] = {}  # sha256 → content (LFS objects)
        self.requests: list[tuple[str, str]] = []  # (method, path) of every request served
        self._failures: dict[str, int] = {}
        self._lock = threading.RLock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.hub = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        """Base URL to give ``HfApi(endpoint=...)`` or ``HF_ENDPOINT``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeHub:
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def fail(self, action: str, times: int = 1) -> None:
        """Answer the next ``times`` requests of ``action`` (commit, tag, preupload...) with 500;
        ``resolve:PATH`` fails the downloads (GET) of one file."""
        self._failures[action] = self._failures.get(action, 0) + times

    def put(self, repo_id: str, files: dict[str, bytes], ref: str = "main") -> str:
        """Test set-up without the client: commit ``files`` on ``ref`` (a branch, created on
        first use, or ``refs/convert/parquet``: an orphan history as the Hub keeps it), creating
        the repository if needed; large or binary files are stored as LFS. The new commit."""
        with self._lock:
            if repo_id not in self.repos:
                self.create_repo(repo_id)
            repo = self.repos[repo_id]
            heads = repo.converts if ref.startswith("refs/convert/") else repo.branches
            parent = heads.get(ref)
            tree = dict(repo.commits[parent].tree) if parent else {}
            for path, data in files.items():
                if self.upload_mode(tree, path, data[:512], len(data)) == "lfs":
                    sha = hashlib.sha256(data).hexdigest()
                    self.lfs[sha] = data
                    tree[path] = Blob(git_blob_sha1(lfs_pointer(sha, len(data))), len(data), sha)
                else:
                    self.blobs[git_blob_sha1(data)] = data
                    tree[path] = Blob(git_blob_sha1(data), len(data))
            heads[ref] = self._new_commit(repo, parent, tree, f"put {len(files)} files").oid
            return heads[ref]

    def commit_count(self, repo_id: str) -> int:
        """How many commits the repository holds (the initial one included)."""
        return len(self.repos[repo_id].commits)

    # -- state changes (called with the lock held) -------------------------------------------

    def create_repo(self, repo_id: str) -> None:
        if repo_id in self.repos:
            url = f"{self.endpoint}/datasets/{repo_id}"
            raise HubHTTPError(409, "You already created this dataset repo", url=url)
        repo = self.repos[repo_id] = Repo()
        self.blobs[git_blob_sha1(GITATTRIBUTES)] = GITATTRIBUTES
        tree = {".gitattributes": Blob(git_blob_sha1(GITATTRIBUTES), len(GITATTRIBUTES))}
        repo.branches["main"] = self._new_commit(repo, None, tree, "initial commit").oid

    def _new_commit(
        self, repo: Repo, parent: str | None, tree: dict[str, Blob], title: str
    ) -> Commit:
        stamp = json.dumps(
            [parent, sorted((p, b.oid) for p, b in tree.items()), title, len(repo.commits)]
        )
        date = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        commit = Commit(hashlib.sha1(stamp.encode()).hexdigest(), parent, dict(tree), title, date)
        repo.commits[commit.oid] = commit
        return commit

    def repo(self, repo_id: str) -> Repo:
        if repo_id not in self.repos:
            raise HubHTTPError(404, f"Repository {repo_id} not found", "RepoNotFound")
        return self.repos[repo_id]

    def resolve(self, repo_id: str, rev: str) -> Commit:
        repo = self.repo(repo_id)
        oid = (
            repo.branches.get(rev)
            or repo.tags.get(rev)
            or repo.converts.get(rev)
            or (rev if rev in repo.commits else None)
        )
        if oid is None:
            raise HubHTTPError(404, f"Invalid rev id: {rev}", "RevisionNotFound")
        return repo.commits[oid]

    def commit(self, repo_id: str, branch: str, lines: list[dict[str, Any]]) -> Commit:
        repo = self.repo(repo_id)
        if branch not in repo.branches:
            raise HubHTTPError(404, f"Invalid rev id: {branch} (not a branch)", "RevisionNotFound")
        head = repo.commits[repo.branches[branch]]
        header = lines[0]["value"] if lines and lines[0].get("key") == "header" else {}
        parent = header.get("parentCommit")
        if parent is not None and parent != head.oid:
            raise HubHTTPError(
                412, f"A commit has happened since. Parent {parent} is not {head.oid}"
            )
        tree = dict(head.tree)
        for line in lines[1:]:
            self._apply(tree, line["key"], line["value"])
        commit = self._new_commit(repo, head.oid, tree, str(header.get("summary", "")))
        repo.branches[branch] = commit.oid
        return commit

    def _apply(self, tree: dict[str, Blob], key: str, value: dict[str, Any]) -> None:
        path = str(value["path"])
        if key == "file":
            data = base64.b64decode(value["content"])
            self.blobs[git_blob_sha1(data)] = data
            tree[path] = Blob(git_blob_sha1(data), len(data))
        elif key == "lfsFile":
            sha = str(value["oid"])
            if sha not in self.lfs:
                raise HubHTTPError(422, f"LFS object {sha} for {path} was never uploaded")
            size = len(self.lfs[sha])
            tree[path] = Blob(git_blob_sha1(lfs_pointer(sha, size)), size, sha)
        elif key == "deletedFile" and path in tree:
            del tree[path]
        elif key == "deletedFolder":
            for name in [p for p in tree if p.startswith(path.rstrip("/") + "/")]:
                del tree[name]
        else:
            raise HubHTTPError(400, f"bad commit operation {key} for {path}")

    def upload_mode(self, tree: dict[str, Blob], path: str, sample: bytes, size: int) -> str:
        attributes = self._content(tree[".gitattributes"]) if ".gitattributes" in tree else b""
        patterns = [
            line.split()[0] for line in attributes.decode().splitlines() if "filter=lfs" in line
        ]
        name = path.rsplit("/", 1)[-1]
        lfs = any(fnmatch.fnmatch(name, p) for p in patterns) or b"\0" in sample
        return "lfs" if lfs and size > 0 else "regular"

    def _content(self, blob: Blob) -> bytes:
        return self.lfs[blob.lfs] if blob.lfs else self.blobs[blob.oid]


def entry(path: str, blob: Blob | None, tree: dict[str, Blob]) -> dict[str, Any]:
    """A tree / paths-info item as the Hub answers it (``blob`` None: a directory)."""
    if blob is None:
        inside = sorted((p, b.oid) for p, b in tree.items() if p.startswith(path + "/"))
        return {
            "type": "directory",
            "path": path,
            "oid": hashlib.sha1(repr(inside).encode()).hexdigest(),
        }
    item: dict[str, Any] = {"type": "file", "path": path, "oid": blob.oid, "size": blob.size}
    if blob.lfs:
        pointer = len(lfs_pointer(blob.lfs, blob.size))
        item["lfs"] = {"oid": blob.lfs, "size": blob.size, "pointerSize": pointer}
    return item


def directories(tree: dict[str, Blob]) -> set[str]:
    """Every folder that holds a file of ``tree``."""
    return {p.rsplit("/", k)[0] for p in tree for k in range(1, p.count("/") + 1)}


def list_tree(tree: dict[str, Blob], base: str, recursive: bool) -> list[dict[str, Any]]:
    """The tree endpoint: children of ``base`` ("" for the root), or all below it."""
    prefix = base + "/" if base else ""
    if base and base not in directories(tree):
        raise HubHTTPError(404, f"{base} is not a folder", "EntryNotFound")
    below = [p for p in sorted(directories(tree) | set(tree)) if p.startswith(prefix)]
    if not recursive:
        below = [p for p in below if "/" not in p[len(prefix) :]]
    return [entry(p, tree.get(p), tree) for p in below]


class _Handler(BaseHTTPRequestHandler):
    """Answers one request from the hub's state, under its lock; errors become Hub-style JSON."""

    protocol_version = "HTTP/1.1"
    hub: FakeHub
    method: str
    body: bytes
    query: dict[str, list[str]]

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("fakehub: " + format, *args)

    def _serve(self) -> None:
        self.hub, self.method = self.server.hub, self.command  # type: ignore[attr-defined]
        method = self.command
        url = urlsplit(self.path)
        self.body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.query = parse_qs(url.query)
        with self.hub._lock:
            self.hub.requests.append((method, url.path))
            try:
                status, payload, headers = self.route(url.path)
            except HubHTTPError as exc:
                status = exc.status
                payload = json.dumps({"error": exc.message, **exc.extra}).encode()
                headers = {"Content-Type": "application/json", "X-Error-Message": exc.message}
                headers |= {"X-Error-Code": exc.code} if exc.code else {}
        self.send_response(status)
        for name, value in ({"Content-Length": str(len(payload))} | headers).items():
            self.send_header(name, value)
        self.end_headers()
        if method != "HEAD":
            self.wfile.write(payload)

    do_GET = do_HEAD = do_POST = do_PUT = _serve

    def route(self, path: str) -> tuple[int, bytes, dict[str, str]]:
        segs = [unquote(s) for s in path.strip("/").split("/")]
        write = self.method in ("POST", "PUT") and segs[:2] != ["api", "validate-yaml"]
        self._authorize(write and segs[0] != "lfs")
        if segs[:3] == ["api", "repos", "create"]:
            return self._answer("create", self._create)
        if segs[:2] == ["api", "validate-yaml"]:
            return self._answer("validate-yaml", lambda: {"errors": [], "warnings": []})
        if segs[0] == "lfs" and self.method == "PUT":
            return self._answer("lfs-upload", lambda: self._lfs_put(segs[1]))
        if segs[:2] == ["api", "datasets"] and len(segs) >= 4:
            self._readable("/".join(segs[2:4]))
            return self._api("/".join(segs[2:4]), segs[4:])
        if segs[0] == "datasets" and len(segs) >= 7 and segs[2].endswith(".git"):
            return self._answer("lfs-batch", lambda: self._lfs_batch(f"{segs[1]}/{segs[2][:-4]}"))
        if segs[0] == "datasets" and len(segs) >= 6 and segs[3] == "resolve":
            self._readable(f"{segs[1]}/{segs[2]}")
            return self._resolve(f"{segs[1]}/{segs[2]}", segs[4], "/".join(segs[5:]))
        raise HubHTTPError(404, f"no such endpoint: {self.method} {self.path}")

    def _authorize(self, required: bool) -> None:
        given = self.headers.get("Authorization", "")
        token = self.hub.token
        if token is None or (not given and not required):
            return
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            raise HubHTTPError(401, "Invalid credentials in Authorization header")

    def _readable(self, repo_id: str) -> None:
        """A gated or private repository answers 401 to a request without the token, as the
        Hub does (``GatedRepo`` / ``RepoNotFound``)."""
        repo = self.hub.repos.get(repo_id)
        if repo is None or repo.access == "public" or self.headers.get("Authorization"):
            return
        if repo.access == "gated":
            raise HubHTTPError(
                401, f"Access to dataset {repo_id} is restricted. You must have access.",
                "GatedRepo",
            )  # fmt: skip
        raise HubHTTPError(401, "Repository Not Found", "RepoNotFound")

    def _answer(self, action: str, work: Any) -> tuple[int, bytes, dict[str, str]]:
        if self.hub._failures.get(action, 0) > 0:
            self.hub._failures[action] -= 1
            raise HubHTTPError(500, f"injected failure of {action}")
        return 200, json.dumps(work()).encode(), {"Content-Type": "application/json"}

    def _json(self) -> Any:
        return json.loads(self.body or b"{}")

    def _create(self) -> dict[str, Any]:
        data = self._json()
        if data.get("type") != "dataset":
            raise HubHTTPError(400, "this fake Hub serves dataset repositories only")
        repo_id = (
            f"{data['organization']}/{data['name']}" if data.get("organization") else data["name"]
        )
        self.hub.create_repo(repo_id)
        return {"url": f"{self.hub.endpoint}/datasets/{repo_id}", "name": repo_id}

    def _api(self, repo_id: str, rest: list[str]) -> tuple[int, bytes, dict[str, str]]:
        hub, action = self.hub, rest[0] if rest else "info"
        rev = rest[1] if len(rest) > 1 else "main"
        handlers: dict[tuple[str, str], Any] = {
            ("GET", "info"): lambda: self._info(repo_id, hub.resolve(repo_id, "main")),
            ("GET", "revision"): lambda: self._info(repo_id, hub.resolve(repo_id, rev)),
            ("GET", "refs"): lambda: self._refs(hub.repo(repo_id)),
            ("GET", "tree"): lambda: self._tree(repo_id, rev, "/".join(rest[2:])),
            ("POST", "paths-info"): lambda: self._paths_info(repo_id, rev),
            ("POST", "preupload"): lambda: self._preupload(repo_id, rev),
            ("POST", "commit"): lambda: self._commit(repo_id, rev),
            ("POST", "tag"): lambda: self._tag(repo_id, rev),
        }
        if (self.method, action) not in handlers:
            raise HubHTTPError(404, f"no such endpoint: {self.method} {self.path}")
        return self._answer(action, handlers[(self.method, action)])

    def _info(self, repo_id: str, commit: Commit) -> dict[str, Any]:
        siblings = [{"rfilename": p} for p in sorted(commit.tree)]
        return {"id": repo_id, "sha": commit.oid, "private": False, "gated": False,
                "disabled": False, "lastModified": commit.date, "tags": [], "downloads": 0,
                "likes": 0, "siblings": siblings}  # fmt: skip

    def _refs(self, repo: Repo) -> dict[str, Any]:
        def refs(kind: str, names: dict[str, str]) -> list[dict[str, str]]:
            return [{"name": n, "ref": f"refs/{kind}/{n}", "targetCommit": c}
                    for n, c in names.items()]  # fmt: skip

        return {"branches": refs("heads", repo.branches), "tags": refs("tags", repo.tags),
                "converts": refs("convert", {n.rsplit("/", 1)[-1]: c
                                             for n, c in repo.converts.items()}),
                "pullRequests": []}  # fmt: skip

    def _tree(self, repo_id: str, rev: str, base: str) -> list[dict[str, Any]]:
        recursive = self.query.get("recursive", ["false"])[0].lower() in ("1", "true")
        return list_tree(self.hub.resolve(repo_id, rev).tree, base, recursive)

    def _paths_info(self, repo_id: str, rev: str) -> list[dict[str, Any]]:
        tree = self.hub.resolve(repo_id, rev).tree
        paths = parse_qs(self.body.decode()).get("paths", [])  # the client posts a form
        folders = directories(tree)
        return [entry(p, tree.get(p), tree) for p in paths if p in tree or p in folders]

    def _preupload(self, repo_id: str, rev: str) -> dict[str, Any]:
        commit = self.hub.resolve(repo_id, rev)
        files = []
        for item in self._json()["files"]:
            path, sample = item["path"], base64.b64decode(item["sample"])
            mode = self.hub.upload_mode(commit.tree, path, sample, int(item["size"]))
            blob = commit.tree.get(path)
            oid = None if blob is None else (blob.lfs or blob.oid)
            files.append({"path": path, "uploadMode": mode, "shouldIgnore": False, "oid": oid})
        return {"files": files, "commitOid": commit.oid}

    def _lfs_batch(self, repo_id: str) -> dict[str, Any]:
        self.hub.repo(repo_id)
        objects = []
        for obj in self._json()["objects"]:
            item: dict[str, Any] = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if obj["oid"] not in self.hub.lfs:
                item["actions"] = {"upload": {"href": f"{self.hub.endpoint}/lfs/{obj['oid']}"}}
            objects.append(item)
        return {"transfer": "basic", "objects": objects}

    def _lfs_put(self, sha: str) -> dict[str, Any]:
        if hashlib.sha256(self.body).hexdigest() != sha:
            raise HubHTTPError(400, f"uploaded content does not hash to {sha}")
        self.hub.lfs[sha] = self.body
        return {}

    def _commit(self, repo_id: str, branch: str) -> dict[str, Any]:
        lines = [json.loads(line) for line in self.body.splitlines() if line.strip()]
        commit = self.hub.commit(repo_id, branch, lines)
        url = f"{self.hub.endpoint}/datasets/{repo_id}/commit/{commit.oid}"
        return {"success": True, "commitOid": commit.oid, "commitUrl": url, "hookOutput": ""}

    def _tag(self, repo_id: str, rev: str) -> dict[str, Any]:
        commit, name = self.hub.resolve(repo_id, rev), str(self._json()["tag"])
        repo = self.hub.repo(repo_id)
        if name in repo.tags or name in repo.branches:
            raise HubHTTPError(409, f"Tag reference {name} already exists")
        repo.tags[name] = commit.oid
        return {}

    def _resolve(self, repo_id: str, rev: str, path: str) -> tuple[int, bytes, dict[str, str]]:
        failures = self.hub._failures
        if self.method == "GET" and failures.get(f"resolve:{path}", 0) > 0:
            failures[f"resolve:{path}"] -= 1  # a download that breaks off (see FakeHub.fail)
            raise HubHTTPError(500, f"injected failure of the download of {path}")
        commit = self.hub.resolve(repo_id, rev)
        blob = commit.tree.get(path)
        if blob is None:
            raise HubHTTPError(404, f"Entry not found: {path}", "EntryNotFound")
        data = self.hub._content(blob)
        etag = f'"{blob.lfs or blob.oid}"'
        headers = {"X-Repo-Commit": commit.oid, "ETag": etag, "Accept-Ranges": "bytes"}
        if blob.lfs:
            headers |= {"X-Linked-Etag": etag, "X-Linked-Size": str(blob.size)}
        wanted = self.headers.get("Range", "")
        if not wanted.startswith("bytes="):
            return 200, data, headers
        first, _, last = wanted[len("bytes=") :].partition("-")
        start, end = int(first or 0), min(int(last) if last else len(data) - 1, len(data) - 1)
        if start >= len(data):
            raise HubHTTPError(416, "Range not satisfiable")
        headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
        return 206, data[start : end + 1], headers
