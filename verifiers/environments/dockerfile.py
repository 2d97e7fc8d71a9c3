"""A task environment as Dockerfile lines (Harbor's ``environment/Dockerfile``).

Harbor builds its images with network, so the exported task installs its dependencies the way
the recipe says, inside the image: Node (pinned from the official ``node`` image, corepack
included) and then ``npm ci`` / ``corepack pnpm …`` / ``corepack yarn …`` in the package's
folder; Python packages with ``pip install``; ``PYTHONPATH`` for a src layout. Rust and Go
recipes are named in a comment (the export does not install their toolchains), as are the
dependencies validation took from the registry because their tarball's host was unreachable
(the image fetches the lockfile's own).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from trajforge.records import Environment
from trajforge.verifiers.environments import cache as store

NODE_IMAGE = "node:20.20.2-bookworm-slim"
"""Where the exported image takes node, npm and corepack from (the Node validation ran with)."""
NODE_LINKS = (
    "ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm",
    "ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx",
    "ln -sf ../lib/node_modules/corepack/dist/corepack.js /usr/local/bin/corepack",
)
COREPACK_ENV = "ENV COREPACK_ENABLE_DOWNLOAD_PROMPT=0 YARN_NODE_LINKER=node-modules"


@dataclass(frozen=True)
class DockerfileLines:
    """Lines for before the workspace is copied in (toolchains) and after (the installs)."""

    toolchain: tuple[str, ...]
    install: tuple[str, ...]


def dockerfile_lines(
    env: Environment | None, workdir: str = "/app", cache_root: Path | None = None
) -> DockerfileLines:
    """The Dockerfile lines that give an image ``env`` (nothing for None). Python packages are
    pinned to what the built environment holds when it is in the cache (what validation ran
    with), else installed as the project declares them."""
    if env is None:
        return DockerfileLines((), ())
    built = store.load(store.root(cache_root), env.hash) if env.recipes else None
    pins = built.python_packages if built is not None else {}
    toolchain: list[str] = []
    install: list[str] = []
    pythonpath: list[str] = []
    if any(r.ecosystem == "node" for r in env.recipes) or "node" in env.needs:
        toolchain += [
            f"COPY --from={NODE_IMAGE} /usr/local/bin/node /usr/local/bin/node",
            f"COPY --from={NODE_IMAGE} /usr/local/lib/node_modules /usr/local/lib/node_modules",
            "RUN " + " && ".join(NODE_LINKS),
            COREPACK_ENV,
        ]
    for recipe in env.recipes:
        folder = f"{workdir}/{recipe.root}".rstrip("/")
        if recipe.ecosystem == "node":
            swapped = built.substituted if built is not None else ()
            install += [f"# validated with {line}" for line in swapped]
            install.append(f"RUN cd {shlex.quote(folder)} && {recipe.install[0]}")
        elif recipe.ecosystem == "python":
            wanted = [f"{n}=={v}" for n, v in sorted(pins.items())] or list(recipe.packages)
            install.append(f"RUN pip install --no-cache-dir {shlex.join(wanted)}")
            pythonpath += [f"{workdir}/{p}" for p in recipe.pythonpath]
        else:
            install.append(f"# {recipe.ecosystem}: {recipe.install[0]} (toolchain not installed)")
    if pythonpath:
        install.append(f"ENV PYTHONPATH={':'.join(pythonpath)}")
    return DockerfileLines(tuple(toolchain), tuple(install))
