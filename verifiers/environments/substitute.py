"""npm dependencies fetched as tarballs from hosts that cannot be reached: the registry's release.

A manifest may take a package from its vendor's own server rather than the registry (pi-mono's
web-ui: ``"xlsx": "https://cdn.sheetjs.com/xlsx-0.20.3/xlsx-0.20.3.tgz"``, because SheetJS
stopped publishing to npm). Where that host cannot be reached and the registry holds a package
of the same name, the staged copy of the manifest takes the registry's latest release instead,
the lockfile's entries for the tarball are dropped, and the install becomes ``npm install``
(every other locked version is kept). Each substitution is recorded in the built environment
and in validation's evidence: the verifier is proven in the environment it runs in, and a
reader sees what differs from the session's. Git dependencies (often forks at a commit) are
never substituted; they stay ``environment_unavailable``.
"""

from __future__ import annotations

import json
import logging
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from trajforge.verifiers.environments.toolchain import reachable

log = logging.getLogger(__name__)

SECTIONS = ("dependencies", "devDependencies", "optionalDependencies")
"""Manifest sections whose entries npm installs."""
VIEW_TIMEOUT_S = 60.0
"""Longest one ``npm view`` may take."""


def _tarballs(manifest: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(name, url, host) of every dependency given as an http(s) URL."""
    found = []
    for section in SECTIONS:
        entries = manifest.get(section)
        for name, spec in entries.items() if isinstance(entries, dict) else ():
            if isinstance(spec, str) and spec.startswith(("http://", "https://")):
                host = urlsplit(spec).hostname
                if host:
                    found.append((name, spec, host))
    return found


def _released(name: str, env: Mapping[str, str]) -> str | None:
    """The registry's latest release of ``name``, or None (not there, or no answer)."""
    try:
        done = subprocess.run(
            ["npm", "view", name, "version", "--json"],
            env=dict(env),
            capture_output=True,
            text=True,
            timeout=VIEW_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    try:
        answer = json.loads(done.stdout) if done.returncode == 0 else None
    except json.JSONDecodeError:
        return None
    return answer if isinstance(answer, str) and answer else None


def _respell(lock: dict[str, Any], swaps: Mapping[str, str]) -> None:
    """Drop the lockfile's entries resolved from a swapped URL; respell specs naming it."""
    for table in (lock.get("packages"), lock.get("dependencies")):  # v2/v3, and v1's
        if not isinstance(table, dict):
            continue
        for key in [k for k, v in table.items() if v.get("resolved") in swaps]:
            del table[key]
    packages = lock.get("packages")
    for entry in packages.values() if isinstance(packages, dict) else ():
        for section in SECTIONS:
            specs = entry.get(section)
            for name, spec in list(specs.items()) if isinstance(specs, dict) else ():
                if spec in swaps:
                    specs[name] = swaps[spec]


def substitute(work: Path, manifests: Sequence[str], env: Mapping[str, str]) -> tuple[str, ...]:
    """Swap, in the staged ``manifests`` (paths under ``work``) and ``work``'s
    package-lock.json, each unreachable tarball for the registry's release of its name; one
    line per substitution (none: nothing to swap, or the registry lacks the name)."""
    swaps: dict[str, str] = {}
    notes: list[str] = []
    for rel in manifests:
        path = work / rel
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        changed = False
        for name, url, host in _tarballs(manifest) if isinstance(manifest, dict) else ():
            if url not in swaps and reachable(host):
                continue
            release = swaps.get(url) or _released(name, env)
            if release is None:
                continue
            swaps[url] = release
            for section in SECTIONS:
                entries = manifest.get(section)
                if isinstance(entries, dict) and entries.get(name) == url:
                    entries[name] = release
            changed = True
            notes.append(f"{name} {release} from the registry for {url} ({host} cannot be reached)")
        if changed:
            path.write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    lockfile = work / "package-lock.json"
    if swaps and lockfile.is_file():
        lock = json.loads(lockfile.read_text(encoding="utf-8"))
        _respell(lock, swaps)
        lockfile.write_text(json.dumps(lock, indent=2) + "\n", encoding="utf-8")
    lines = tuple(dict.fromkeys(notes))  # one URL named by several members: one line
    for line in lines:
        log.warning("environment: substituted %s", line)
    return lines
