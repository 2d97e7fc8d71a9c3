"""Docker: a task environment as an image derived from the sandbox image (no network to build).

The environment folder built on this machine (:mod:`.build`) is copied under
``/opt/trajforge/env``. Node environments also need a node that can run npm, pnpm and yarn:
the sandbox image's Debian node has no npm, so this machine's node toolchain (the ``node``
binary, npm and corepack) is copied once into its own layer (``trajforge-node:<version>-…``),
which the environment images of every Node task then start from. Both builds only COPY, so
they run with ``network_mode=none``; an image whose labels do not match is rebuilt.
"""

from __future__ import annotations

import io
import logging
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trajforge.errors import SandboxError
from trajforge.protocols import EnvironmentFolder
from trajforge.records import Reason
from trajforge.verifiers.environments.build import EnvironmentProblem
from trajforge.verifiers.environments.toolchain import missing_tool, version, which
from trajforge.verifiers.sandbox.image import IMAGE_TAG, image_state

log = logging.getLogger(__name__)

ENV_ROOT = "/opt/trajforge/env"
"""Where the environment folder is inside the image."""
NODE_PREFIX = "/opt/trajforge/node"
"""Where this machine's node toolchain is inside the image."""
ENV_REPOSITORY = "trajforge-env"
NODE_REPOSITORY = "trajforge-node"
HASH_LABEL = "trajforge.env.hash"
BASE_LABEL = "trajforge.env.base"
"""Id of the image it was built on: a rebuilt sandbox image makes its derived images stale."""
NODE_PACKAGES = ("npm", "corepack")
IMAGE_BUILD_TIMEOUT_S = 900


def _client() -> Any:
    import docker

    return docker.from_env(timeout=IMAGE_BUILD_TIMEOUT_S)


def _current(client: Any, tag: str, base_id: str) -> bool:
    import docker.errors

    try:
        image = client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return bool((image.labels or {}).get(BASE_LABEL) == base_id)


def _add_tree(tar: tarfile.TarFile, source: Path, arcname: str) -> None:
    """Add ``source`` as ``arcname``, owned by root and readable by every uid."""

    def readable(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = "root"
        info.mode |= 0o555 if info.isdir() or info.mode & 0o100 else 0o444
        return info

    tar.add(str(source), arcname=arcname, filter=readable)


def _add_text(tar: tarfile.TarFile, arcname: str, text: str, mode: int = 0o644) -> None:
    data = text.encode()
    info = tarfile.TarInfo(arcname)
    info.size, info.mode = len(data), mode
    tar.addfile(info, io.BytesIO(data))


def _build(client: Any, tag: str, labels: dict[str, str], fill: Any) -> None:
    """``docker build`` of a context written by ``fill(tar)`` (a Dockerfile and COPY sources)."""
    import docker.errors

    with tempfile.TemporaryFile() as context:
        with tarfile.open(fileobj=context, mode="w") as tar:
            fill(tar)
        context.seek(0)
        try:
            client.images.build(
                fileobj=context,
                custom_context=True,
                tag=tag,
                labels=labels,
                rm=True,
                forcerm=True,
                network_mode="none",
                timeout=IMAGE_BUILD_TIMEOUT_S,
            )
        except (docker.errors.BuildError, docker.errors.APIError) as exc:
            raise EnvironmentProblem(
                f"{Reason.ENVIRONMENT_BUILD_FAILED}: docker build of {tag} failed: {exc}",
                Reason.ENVIRONMENT_BUILD_FAILED,
            ) from None


def _node_sources() -> Iterator[tuple[Path, str]]:
    """(host path, path under the toolchain prefix) of node, npm and corepack."""
    node = which("node")
    if node is None:
        raise EnvironmentProblem(missing_tool("node"), Reason.ENVIRONMENT_UNAVAILABLE)
    yield Path(node).resolve(), "bin/node"
    for package in NODE_PACKAGES:
        entry = which(package)
        if entry is None:
            continue
        root = Path(entry).resolve().parent
        while root.name != package and root != root.parent:
            root = root.parent
        if root.name == package:
            yield root, f"lib/node_modules/{package}"


WRAPPERS = {
    "npm": "lib/node_modules/npm/bin/npm-cli.js",
    "npx": "lib/node_modules/npm/bin/npx-cli.js",
    "corepack": "lib/node_modules/corepack/dist/corepack.js",
}


def node_image(client: Any, base_id: str) -> str:
    """The sandbox image plus this machine's node toolchain (built once per node version)."""
    release = version("node").lstrip("v") or "unknown"
    tag = f"{NODE_REPOSITORY}:{release}-{base_id.split(':')[-1][:12]}"
    if _current(client, tag, base_id):
        return tag
    sources = list(_node_sources())

    def fill(tar: tarfile.TarFile) -> None:
        _add_text(tar, "Dockerfile", f"FROM {IMAGE_TAG}\nCOPY node/ {NODE_PREFIX}/\n")
        for path, rel in sources:
            _add_tree(tar, path, f"node/{rel}")
        for name, script in WRAPPERS.items():
            body = f'#!/bin/sh\nexec {NODE_PREFIX}/bin/node {NODE_PREFIX}/{script} "$@"\n'
            _add_text(tar, f"node/bin/{name}", body, 0o755)

    log.info("building %s", tag)
    _build(client, tag, {BASE_LABEL: base_id}, fill)
    return tag


def env_image(env: EnvironmentFolder) -> tuple[str, tuple[str, ...]]:
    """(tag of the environment's image, toolchain folders on its PATH); built when stale."""
    client = _client()
    try:
        problem = image_state(client)
        if problem is not None:
            raise SandboxError(problem)
        base_id = client.images.get(IMAGE_TAG).id
        needs_node = "node" in env.ecosystems
        parent = node_image(client, base_id) if needs_node else IMAGE_TAG
        paths = (f"{NODE_PREFIX}/bin",) if needs_node else ()
        tag = f"{ENV_REPOSITORY}:{env.key[:24]}"
        if _current(client, tag, base_id):
            return tag, paths

        def fill(tar: tarfile.TarFile) -> None:
            _add_text(tar, "Dockerfile", f"FROM {parent}\nCOPY env/ {ENV_ROOT}/\n")
            _add_tree(tar, env.folder, "env")

        log.info("building %s", tag)
        _build(client, tag, {BASE_LABEL: base_id, HASH_LABEL: env.key}, fill)
        return tag, paths
    finally:
        client.close()


def derived_images() -> list[dict[str, Any]]:
    """Every environment and toolchain image: tag, id, size, hash label."""
    try:
        client = _client()
    except Exception:  # no docker here: nothing to list
        return []
    try:
        found = []
        for image in client.images.list(filters={"label": BASE_LABEL}):
            for tag in image.tags or [image.short_id]:
                found.append(
                    {
                        "tag": tag,
                        "id": image.id,
                        "size_bytes": int(image.attrs.get("Size", 0)),
                        "hash": (image.labels or {}).get(HASH_LABEL),
                    }
                )
        return found
    finally:
        client.close()


def remove_image(tag: str) -> bool:
    import docker.errors

    client = _client()
    try:
        client.images.remove(tag, force=True)
        return True
    except docker.errors.DockerException:
        return False
    finally:
        client.close()
