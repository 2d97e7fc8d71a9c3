"""What building and running an environment needs from this machine: tools and registries.

Every ecosystem names the program that installs it, the registry it downloads from and the fix
to print when either cannot be had; :func:`unavailable` turns a missing one into the
``environment_unavailable: <tool> …`` sentence the task is rejected with.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from trajforge.records import Reason

CONNECT_TIMEOUT_S = 5.0
"""How long a registry gets to accept a TCP connection before it counts as unreachable."""
VERSION_TIMEOUT_S = 30.0
PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")
"""With a proxy configured a direct connection says nothing: the registry is assumed reachable."""


@dataclass(frozen=True)
class Registry:
    host: str
    """Host the packages come from."""
    fix: str
    """What to do when it cannot be reached."""


REGISTRIES: dict[str, Registry] = {
    "npm": Registry(
        "registry.npmjs.org",
        "let this machine reach registry.npmjs.org (or set npm's registry= to a mirror in "
        "~/.npmrc), then trajforge env build",
    ),
    "pip": Registry(
        "pypi.org",
        "let this machine reach pypi.org (or point pip at a mirror: PIP_INDEX_URL), then "
        "trajforge env build",
    ),
    "cargo": Registry(
        "index.crates.io",
        "build where crates.io is reachable, or vendor the crates (cargo vendor) / configure a "
        "crates.io mirror in .cargo/config.toml ([source] replacement), then trajforge env build",
    ),
    "go": Registry(
        "proxy.golang.org",
        "let this machine reach proxy.golang.org (or set GOPROXY to a mirror), then "
        "trajforge env build",
    ),
}
"""Manager → its registry (pnpm and yarn download from npm's)."""
INSTALL_HINTS: dict[str, str] = {
    "node": "install Node.js >= 20 (it brings npm and corepack)",
    "npm": "install Node.js >= 20 (it brings npm)",
    "corepack": "install Node.js >= 20 (it brings corepack, which fetches pnpm and yarn)",
    "cargo": "install Rust with rustup (https://rustup.rs) where the sandbox can see it",
    "go": "install Go (https://go.dev/dl) where the sandbox can see it",
}


def registry_of(manager: str) -> Registry:
    return REGISTRIES["npm" if manager in ("pnpm", "yarn") else manager]


@lru_cache(maxsize=32)
def reachable(host: str, port: int = 443) -> bool:
    """Whether a TCP connection to ``host`` opens (DNS included); True behind a proxy."""
    if any(os.environ.get(v) for v in PROXY_VARS):
        return True
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            return True
    except OSError:
        return False


def which(program: str) -> str | None:
    """The program on PATH, also in the usual per-user install folders (cargo, go)."""
    found = shutil.which(program)
    if found:
        return found
    for extra in ("~/.cargo/bin", "/usr/local/go/bin", "~/go/bin"):
        candidate = Path(extra).expanduser() / program
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def version(program: str) -> str:
    """``program --version`` (first line), '' when it cannot be asked."""
    path = sys.executable if program == "python" else which(program)
    if path is None:
        return ""
    try:
        done = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0] if lines else ""


def unavailable(tool: str, why: str, fix: str) -> str:
    """The rejection sentence: ``environment_unavailable: TOOL: WHY; fix: FIX``."""
    return f"{Reason.ENVIRONMENT_UNAVAILABLE}: {tool}: {why}; fix: {fix}"


def missing_tool(tool: str) -> str:
    hint = INSTALL_HINTS.get(tool, f"install {tool}")
    return unavailable(tool, f"{tool} is not installed on this machine", hint)


def unreachable(manager: str) -> str:
    registry = registry_of(manager)
    return unavailable(
        manager, f"its registry {registry.host} cannot be reached from this machine", registry.fix
    )
