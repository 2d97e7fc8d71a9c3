"""Run an exported Harbor task the way Harbor 0.25 runs it, without pulling an image.

No registry is reachable here, so ``python:3.12.8-slim`` cannot be pulled and the two
Dockerfiles cannot be built; both containers start from trajforge's sandbox image instead
(Debian python3 with pytest and the pinned polars) and get what the Dockerfiles would add:

1. agent environment (``environment/Dockerfile``): ``environment/workspace/`` copied to ``/app``,
   owned by the non-root agent user (uid 1000); the agent step runs as that user in ``/app``:
   the oracle is ``solution/`` uploaded to ``/solution`` and ``bash /solution/solve.sh`` (what
   ``harbor run -a oracle`` does); ``nop`` does nothing; a wrong solution writes its files;
2. artifacts (``artifacts = ["/app"]``): ``/app`` copied out of the agent container;
3. separate verifier (``tests/Dockerfile``: ``COPY . /tests/``, its pinned ``pip install``):
   a fresh container, ``tests/`` at ``/tests``, the Python packages the Dockerfile installs
   that the image lacks copied from this interpreter's site-packages at the pinned version
   (checked), ``/app`` restored, ``bash /tests/test.sh`` as root in ``/app``; the reward is
   ``/logs/verifier/reward.txt``.
"""

from __future__ import annotations

import importlib.metadata
import io
import re
import tarfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

AGENT_UID = 1000
SITE = "/usr/local/lib/python3.11/dist-packages"
IN_IMAGE = {"pytest", "polars", "polars-runtime-32"}
"""Pinned packages the sandbox image already has (its own pins), not copied in."""


def _tar(files: Mapping[str, bytes], uid: int = 0, mode: int = 0o644) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for rel, data in files.items():
            info = tarfile.TarInfo(rel)
            info.size, info.uid, info.gid = len(data), uid, uid
            info.mode = 0o755 if rel.endswith(".sh") else mode
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _folder(root: Path) -> dict[str, bytes]:
    if not root.is_dir():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _dist_files(name: str) -> dict[str, bytes]:
    dist = importlib.metadata.distribution(name)
    found = {}
    for file in dist.files or ():
        path = Path(str(dist.locate_file(file)))
        if path.is_file() and ".." not in file.parts and "__pycache__" not in file.parts:
            found[file.as_posix()] = path.read_bytes()
    return found


def verifier_packages(dockerfile: str) -> dict[str, bytes]:
    """Site-packages files standing in for the Dockerfile's pinned ``pip install``."""
    files: dict[str, bytes] = {}
    for name, version in re.findall(r"([A-Za-z0-9_.-]+)==([0-9][^\s]*)", dockerfile):
        if name in IN_IMAGE:
            continue
        assert importlib.metadata.version(name) == version, (name, version)
        for dep in [name, *_requires(name)]:
            files.update(_dist_files(dep))
    return files


def _requires(name: str) -> list[str]:
    deps = []
    for req in importlib.metadata.requires(name) or []:
        if "extra ==" in req:
            continue
        deps.append(re.split(r"[\s<>=!~;\[(]", req, maxsplit=1)[0])
    return deps


@contextmanager
def _container(client: Any, image: str) -> Iterator[Any]:
    box = client.containers.run(
        image, ["sleep", "infinity"], detach=True, user="0:0", network_mode="none", init=True
    )
    try:
        yield box
    finally:
        box.remove(force=True)


def _exec(box: Any, command: str, user: str, workdir: str = "/app") -> tuple[int, str]:
    env = {"HOME": "/tmp", "PATH": "/usr/local/bin:/usr/bin:/bin"}
    code, out = box.exec_run(["bash", "-c", command], user=user, workdir=workdir, environment=env)
    return code, out.decode("utf-8", "replace")


def trial(client: Any, image: str, task: Path, agent: str | Mapping[str, str]) -> tuple[float, str]:
    """(reward, verifier output) of one trial: ``agent`` is "oracle", "nop" or files to write."""
    with _container(client, image) as box:
        _exec(box, f"mkdir -p /app && chown {AGENT_UID}:{AGENT_UID} /app", "0", "/")
        box.put_archive("/app", _tar(_folder(task / "environment" / "workspace"), AGENT_UID))
        if agent == "oracle":
            solution = _folder(task / "solution")
            box.put_archive("/", _tar({f"solution/{k}": v for k, v in solution.items()}))
            code, out = _exec(box, "bash /solution/solve.sh", str(AGENT_UID))
            assert code == 0, out
        elif isinstance(agent, Mapping):
            box.put_archive("/app", _tar({k: v.encode() for k, v in agent.items()}, AGENT_UID))
        stream, _ = box.get_archive("/app")
        artifact = b"".join(stream)
    with _container(client, image) as box:
        box.put_archive("/", _tar({f"tests/{k}": v for k, v in _folder(task / "tests").items()}))
        packages = verifier_packages((task / "tests" / "Dockerfile").read_text())
        if packages:
            _exec(box, f"mkdir -p {SITE}", "0", "/")
            box.put_archive(SITE, _tar(packages))
        box.put_archive("/", artifact)
        _exec(box, "mkdir -p /logs/verifier", "0", "/")
        _, out = _exec(box, "bash /tests/test.sh", "0")
        code, reward = _exec(box, "cat /logs/verifier/reward.txt", "0", "/")
        assert code == 0, out
    return float(reward.strip()), out
