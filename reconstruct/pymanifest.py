"""Python dependencies a project declares: pyproject.toml, setup.cfg, requirements files.

Only declarations are read (no build backend runs): ``[project] dependencies`` with the test
extras and PEP 735 dependency groups, ``setup.cfg`` ``install_requires`` and test extras, and
requirement files (``-r`` includes followed inside the workspace; editable and local paths
skipped, since the project itself is the workspace and must stay importable from it).
"""

from __future__ import annotations

import configparser
import posixpath
import re
import shlex
import tomllib
from collections.abc import Iterable, Mapping

TEST_EXTRAS = frozenset({"test", "tests", "testing", "dev", "develop", "development", "check"})
"""Extras and dependency groups whose packages the project's checks need."""
REQUIREMENT_FILES = (
    "requirements.txt",
    "requirements-dev.txt",
    "requirements-test.txt",
    "requirements_dev.txt",
    "requirements_test.txt",
    "dev-requirements.txt",
    "test-requirements.txt",
    "requirements/dev.txt",
    "requirements/test.txt",
    "requirements/tests.txt",
    "requirements/base.txt",
)
"""Requirement files read at the top of the workspace, in this order."""
LOCKFILES = ("uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock")
"""Lockfiles hashed into the environment (the install follows the declarations above)."""
RUNTIME_PROVIDED = frozenset({"pytest"})
"""Packages the sandbox's task runtime always has (validate checks it first): a session's own
``pip install -U pytest`` makes no environment of its own."""
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_PIP_INSTALL = re.compile(r"^(python[0-9.]*\s+-m\s+)?(uv\s+)?pip[0-9.]*\s+install\s")


def canonical(name: str) -> str:
    """PEP 503 name: lowercase, runs of ``-_.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(spec: str) -> str | None:
    """The distribution name a requirement specifier names (None for paths and URLs)."""
    text = spec.strip()
    if not text or text.startswith((".", "/", "-")) or "://" in text.split(";")[0].split("@")[0]:
        return None
    found = _NAME.match(text)
    return canonical(found.group(1)) if found else None


def from_pyproject(text: str) -> tuple[str | None, list[str]]:
    """(project name, dependencies + test extras + test dependency groups)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None, []
    found = data.get("project")
    project: dict[str, object] = found if isinstance(found, dict) else {}
    raw_name = project.get("name")
    name = raw_name if isinstance(raw_name, str) else None
    specs = _strings(project.get("dependencies"))
    extras = project.get("optional-dependencies")
    if isinstance(extras, dict):
        for extra, items in sorted(extras.items()):
            if extra.lower() in TEST_EXTRAS:
                specs += _strings(items)
    groups = data.get("dependency-groups")
    if isinstance(groups, dict):
        for group, items in sorted(groups.items()):
            if group.lower() in TEST_EXTRAS:
                specs += _strings(items)  # {include-group = ...} tables are skipped
    return name, specs


def from_setup_cfg(text: str) -> tuple[str | None, list[str]]:
    """(metadata name, install_requires + test extras) of a setup.cfg."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None, []
    name = parser.get("metadata", "name", fallback=None)
    specs = _lines(parser.get("options", "install_requires", fallback=""))
    if parser.has_section("options.extras_require"):
        for extra, value in parser.items("options.extras_require"):
            if extra.lower() in TEST_EXTRAS:
                specs += _lines(value)
    return name, specs


def from_requirements(
    path: str, files: Mapping[str, str], seen: set[str] | None = None
) -> list[str]:
    """Specifiers of a requirements file, following ``-r`` includes inside the workspace."""
    seen = seen if seen is not None else set()
    if path in seen or path not in files:
        return []
    seen.add(path)
    specs: list[str] = []
    for raw in files[path].splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ", "-c ", "--constraint ")):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(path), line.split()[1]))
            specs += (
                from_requirements(target, files, seen) if line.startswith(("-r", "--r")) else []
            )
            continue
        if line.startswith("-") or requirement_name(line) is None:
            continue  # options (--index-url, -e .) and local paths
        specs.append(line)
    return specs


_REDIRECT = re.compile(r"^(?:\d*[<>]|&>)")
"""A shell redirection word (``2>&1``, ``>log``, ``&>/dev/null``): the command's words end."""


def pip_installs(commands: Iterable[str]) -> list[str]:
    """Packages the session itself installed with ``pip install NAME...`` (no files, no flags)."""
    found: list[str] = []
    for command in commands:
        for segment in re.split(r"&&|\|\|?|;|\n", command):  # a pipe ends it too
            words = segment.strip()
            if not _PIP_INSTALL.match(words):
                continue
            try:
                args = shlex.split(words)
            except ValueError:
                continue
            tail = args[args.index("install") + 1 :]
            ends = [n for n, a in enumerate(tail) if _REDIRECT.match(a)]
            tail = tail[: ends[0]] if ends else tail  # "pip install x 2>&1": not a package
            if any(a in ("-r", "--requirement", "-e", "--editable") for a in tail):
                continue
            found += [
                a
                for a in tail
                if not a.startswith("-") and requirement_name(a) not in (None, *RUNTIME_PROVIDED)
            ]
    return found


def dedupe(specs: Iterable[str], own: str | None) -> tuple[str, ...]:
    """Specifiers in order, the project's own name and exact repeats left out."""
    kept: list[str] = []
    skip = canonical(own) if own else None
    for spec in specs:
        clean = " ".join(spec.split())
        if requirement_name(clean) == skip or clean in kept:
            continue
        kept.append(clean)
    return tuple(kept)


def _strings(value: object) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _lines(value: str) -> list[str]:
    return [
        line.strip() for line in value.splitlines() if line.strip() and not line.startswith("#")
    ]
