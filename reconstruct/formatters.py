"""Formatters and fixers a command runs, directly, through a package script or as a
repository's pre-commit hook, read from the files replay knows.

A formatter or fixer (``biome check --write``, ``prettier --write``, ``eslint --fix``, ``ruff
format``) rewrites the files it is given, or the whole tree: what they hold after it is not in
the session. :func:`command_formatters` reads one command (``npx prettier --write src``,
``npm run check`` whose script runs ``biome check --write .``). A ``git commit`` runs the
repository's pre-commit hook first: :func:`commit_hook` finds the hooks of the usual tools — husky
(``.husky/pre-commit``, or ``husky.hooks`` in package.json), lint-staged, simple-git-hooks,
lefthook and the pre-commit framework (``.pre-commit-config.yaml``) — follows ``npm run X`` /
``pnpm X`` / ``yarn X`` into package.json scripts (every known package.json with
``--workspaces``), and returns each :class:`Formatter` with the files it may rewrite. A hook
file replay holds no text of may rewrite anything.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from trajforge.reconstruct.shell import ASSIGNMENT, xargs_command
from trajforge.reconstruct.shell_globs import braces, fnmatch_regex

_JS = "js jsx ts tsx mjs cjs mts cts"
_EXTENSIONS = {
    "biome": f"{_JS} json jsonc css graphql gql vue svelte astro html",
    "prettier": f"{_JS} json json5 jsonc css scss less md mdx yaml yml html vue graphql gql hbs",
    "eslint": f"{_JS} vue svelte astro",
    "ruff": "py pyi ipynb",
    "ruff-check": "py pyi ipynb",
    "black": "py pyi ipynb",
    "isort": "py pyi",
    "autopep8": "py",
    "pyupgrade": "py",
    "autoflake": "py",
    "gofmt": "go",
    "rustfmt": "rs",
    "clang-format": "c cc cpp cxx h hh hpp hxx m mm",
    "stylelint": "css scss less sass",
}
"""Formatter → the file name extensions it rewrites (any other: every file)."""
_SEGMENT = r"[^\n;&|]*"
_FORMATTERS = {
    "biome": rf"\bbiome\s+(?:check|format|lint|ci|migrate){_SEGMENT}--(?:write|apply|fix)",
    "prettier": rf"\bprettier\b{_SEGMENT}(?:--write|\s-w\b)",
    "eslint": rf"\beslint\b{_SEGMENT}--fix\b",
    "ruff": rf"\bruff\s+format\b(?!{_SEGMENT}--(?:check|diff))",
    "ruff-check": rf"\bruff\b(?!\s+format){_SEGMENT}--fix\b",
    "black": rf"\bblack\b(?!{_SEGMENT}--(?:check|diff))",
    "isort": rf"\bisort\b(?!{_SEGMENT}--(?:check|diff|check-only))",
    "autopep8": rf"\bautopep8\b{_SEGMENT}(?:-i\b|--in-place)",
    "gofmt": rf"\bgofmt\b{_SEGMENT}\s-w\b|\bgo\s+fmt\b",
    "rustfmt": rf"\brustfmt\b|\bcargo\s+fmt\b(?!{_SEGMENT}--check)",
    "clang-format": rf"\bclang-format\b{_SEGMENT}\s-i\b",
    "stylelint": rf"\bstylelint\b{_SEGMENT}--fix\b",
    "*": rf"\b(?:dprint\s+fmt|deno\s+fmt|standard\s+--fix|xo\s+--fix|rubocop\s+-[aA]|"
    rf"php-cs-fixer\s+fix|swiftformat|ktlint\s+-F|oxlint{_SEGMENT}--fix|sort-package-json)\b",
}
"""Formatter → how a command running it to rewrite files reads (a check-only run is none)."""
_PRE_COMMIT_IDS = {
    "ruff-format": "ruff", "black": "black", "black-jupyter": "black", "isort": "isort",
    "autopep8": "autopep8", "pyupgrade": "pyupgrade", "autoflake": "autoflake",
    "prettier": "prettier", "biome-check": "biome", "biome-format": "biome", "gofmt": "gofmt",
    "go-fmt": "gofmt", "rustfmt": "rustfmt", "fmt": "rustfmt", "clang-format": "clang-format",
    "trailing-whitespace": "*", "end-of-file-fixer": "*", "mixed-line-ending": "*",
    "fix-byte-order-marker": "*", "requirements-txt-fixer": "*", "double-quote-string-fixer": "*",
    "add-trailing-comma": "*", "docformatter": "*", "nbstripout": "*", "pretty-format-json": "*",
}  # fmt: skip
"""pre-commit hook ids that rewrite files (``ruff`` / ``ruff-check`` / ``eslint`` only with
``--fix`` in their args)."""
_NEEDS_FIX = {"ruff": "ruff-check", "ruff-check": "ruff-check", "eslint": "eslint"}
_RUN = re.compile(
    r"\b(?:npm\s+run(?:-script)?|pnpm(?:\s+run)?|yarn(?:\s+run)?|bun\s+run)\s+([\w:.-]+)([^\n;&|]*)"
)
_SCRIPT_FILE = re.compile(r"(?:^|[\s;&|(])(?:(?:ba|z)?sh\s+)?(?:\./)?([\w.-][\w./-]*\.sh)\b")
_LINT_STAGED_FILES = (
    ".lintstagedrc", ".lintstagedrc.json", ".lintstagedrc.yaml", ".lintstagedrc.yml",
    ".lintstagedrc.js", ".lintstagedrc.mjs", ".lintstagedrc.cjs", "lint-staged.config.js",
    "lint-staged.config.mjs", "lint-staged.config.cjs",
)  # fmt: skip
_LEFTHOOK_FILES = ("lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml")


@dataclass(frozen=True)
class Formatter:
    """A tool a hook runs that may rewrite files."""

    name: str
    """``biome``, ``prettier``, … or ``*`` (a hook replay cannot read, a generic fixer)."""
    files: re.Pattern[str]
    """The paths it may rewrite."""
    source: str
    """The hook that runs it: ``husky``, ``lint-staged``, ``pre-commit``, …"""


Read = Callable[[str], "str | None"]
"""A file's known content ('' for a file known to exist whose text is not known: None)."""


_WRAPPERS = frozenset({"env", "time", "nice", "command", "exec", "nohup"})
_LAUNCHERS = frozenset({"npx", "bunx", "pnpx", "uvx"})
"""Programs that run the package binary named next (``npx prettier``)."""
_LAUNCHING = frozenset({("pnpm", "exec"), ("pnpm", "dlx"), ("yarn", "dlx"), ("yarn", "exec"),
                        ("npm", "exec"), ("bun", "x"), ("uv", "run"), ("poetry", "run"),
                        ("pipx", "run"), ("python", "-m"), ("python3", "-m")})  # fmt: skip
_SCRIPT_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_FORMATTING_NAME = re.compile(r"format|fmt|fix|prettier|biome|pretty", re.IGNORECASE)
"""A package script whose name says it rewrites files (``format``, ``lint:fix``)."""
_SUBCOMMANDS = frozenset({"check", "format", "lint", "ci", "fmt", "fix", "migrate", "run"})


def command_formatters(
    words: list[str],
    read: Read,
    exists: Callable[[str], bool],
    packages: Callable[[], Iterable[str]],
    manifest: str = "package.json",
) -> tuple[list[Formatter], list[str]]:
    """The formatters one simple command (its words) runs itself or through a script of
    ``manifest`` (the package.json of the folder it runs in; every known one ``packages()``
    lists with ``--workspaces``), and the paths it names (none: its folder)."""
    words = _unwrapped(words)
    if not words:
        return [], []
    text = " ".join(words)
    if posixpath.basename(words[0]) in _SCRIPT_RUNNERS:
        scripts = _Scripts(read, exists, packages, manifest)
        return scripts.formatters(text, "script"), []
    if posixpath.basename(words[0]) not in _PROGRAMS:
        return [], []
    found = [_formatter(n, "command") for n, rx in _FORMATTERS.items() if re.search(rx, text)]
    paths = [w for w in words[1:] if w[:1] != "-" and w not in _SUBCOMMANDS]
    return found, paths if found else []


_PROGRAMS = frozenset({
    "biome", "prettier", "eslint", "ruff", "black", "isort", "autopep8", "gofmt", "go",
    "rustfmt", "cargo", "clang-format", "stylelint", "dprint", "deno", "standard", "xo",
    "rubocop", "php-cs-fixer", "swiftformat", "ktlint", "oxlint", "sort-package-json",
})  # fmt: skip
"""Programs :data:`_FORMATTERS` names (``npx @biomejs/biome``: ``biome``)."""


def _unwrapped(words: list[str]) -> list[str]:
    """``words`` without assignments, wrappers and launchers (``npx -y``, ``uv run``,
    ``xargs -0``)."""
    while words:
        head = posixpath.basename(words[0])
        if ASSIGNMENT.match(words[0]) or head in _WRAPPERS:
            words = words[1:]
        elif head == "xargs":
            words = xargs_command(words[1:])[0]
        elif head in _LAUNCHERS:
            words = words[1:]
            while words and words[0].startswith("-"):
                words = words[2:] if words[0] in ("-p", "--package") else words[1:]
        elif len(words) > 1 and (head, words[1]) in _LAUNCHING:
            words = words[2:]
        else:
            return words
    return words


def commit_hook(
    read: Read, exists: Callable[[str], bool], packages: Callable[[], Iterable[str]]
) -> list[Formatter]:
    """The formatters a ``git commit`` in the workspace's repository runs, from its known
    files: ``read`` (content, None when unknown), ``exists``, and every known package.json
    (``packages()``, for ``npm run X --workspaces``)."""
    resolver = _Scripts(read, exists, packages)
    found: list[Formatter] = []
    if exists(".husky/pre-commit"):
        found += resolver.formatters(read(".husky/pre-commit"), "husky")
    manifest = _json(read("package.json")) if exists("package.json") else {}
    for key, source in (("husky", "husky"), ("simple-git-hooks", "simple-git-hooks")):
        hooks = manifest.get(key)
        hooks = hooks.get("hooks", hooks) if isinstance(hooks, dict) else None
        if isinstance(hooks, dict) and isinstance(hooks.get("pre-commit"), str):
            found += resolver.formatters(hooks["pre-commit"], source)
    found += _lint_staged(read, exists, manifest, resolver)
    for name in _LEFTHOOK_FILES:
        if exists(name):
            found += resolver.formatters(read(name), "lefthook")
    if exists(".pre-commit-config.yaml"):
        found += _pre_commit(read(".pre-commit-config.yaml"))
    return found


@dataclass(frozen=True)
class _Scripts:
    """Follows a hook's commands into package.json scripts and shell scripts."""

    read: Read
    exists: Callable[[str], bool]
    packages: Callable[[], Iterable[str]]
    manifest: str = "package.json"
    """The package.json whose scripts ``npm run X`` runs."""

    def formatters(
        self, text: str | None, source: str, seen: frozenset[str] = frozenset()
    ) -> list[Formatter]:
        """What the hook text runs (None: a hook replay holds no text of); ``seen``: the
        scripts it was reached through (one met again runs nothing new)."""
        if text is None or len(seen) > 8:
            return [_formatter("*", source)]
        found = [_formatter(n, source) for n, rx in _FORMATTERS.items() if re.search(rx, text)]
        for match in _RUN.finditer(text):
            every = re.search(r"--workspaces?\b|\s-ws\b|\s-r\b|--recursive", match.group(2))
            for key, script in self._scripts(match.group(1), bool(every)):
                if key not in seen:
                    found += self.formatters(script, source, seen | {key})
        for match in _SCRIPT_FILE.finditer(text):
            path = posixpath.normpath(match.group(1))
            if self.exists(path) and not path.endswith("husky.sh") and path not in seen:
                found += self.formatters(self.read(path), source, seen | {path})
        return found

    def _scripts(self, name: str, every: bool) -> list[tuple[str, str | None]]:
        """(``manifest:name``, command) of script ``name`` in the package.json, or (``every``:
        ``--workspaces``) in every other known one. One replay holds no text of runs a
        formatter (None) when its name says so (``format``, ``lint:fix``)."""
        manifests = [p for p in self.packages() if p != self.manifest] if every else [self.manifest]
        found: list[tuple[str, str | None]] = []
        for path in manifests:
            text = self.read(path)
            scripts = _json(text).get("scripts")
            if isinstance(scripts, dict) and isinstance(scripts.get(name), str):
                found.append((f"{path}:{name}", scripts[name]))
            elif text is None and not every and _FORMATTING_NAME.search(name):
                found.append((f"{path}:{name}", None))
        return found


def _lint_staged(
    read: Read, exists: Callable[[str], bool], manifest: dict[str, object], resolver: _Scripts
) -> list[Formatter]:
    """lint-staged's tasks: each glob's commands; a config replay cannot read as JSON (a
    JavaScript or YAML one) runs what its text names, on any file."""
    configs: list[object] = [manifest["lint-staged"]] if "lint-staged" in manifest else []
    found: list[Formatter] = []
    for name in _LINT_STAGED_FILES:
        if not exists(name):
            continue
        text = read(name)
        parsed = _json(text) if name.endswith(("rc", ".json")) else {}
        if parsed:
            configs.append(parsed)
        else:
            found += resolver.formatters(text, "lint-staged") or [_formatter("*", "lint-staged")]
    for config in configs:
        tasks = config.items() if isinstance(config, dict) else []
        for glob, commands in tasks:
            runs = [commands] if isinstance(commands, str) else commands
            if not isinstance(runs, list) or not all(isinstance(c, str) for c in runs):
                found.append(_formatter("*", "lint-staged", str(glob)))
                continue
            for command in runs:
                found += [
                    _formatter(f.name, "lint-staged", str(glob))
                    for f in resolver.formatters(command, "lint-staged")
                ]
    return found


def _pre_commit(text: str | None) -> list[Formatter]:
    """The fixers a pre-commit framework config lists (its hooks' ids, args and entries)."""
    if text is None:
        return [_formatter("*", "pre-commit")]
    found = []
    for block in re.split(r"(?m)^\s*-\s+id:\s*", text)[1:]:
        ident = block.split()[0].strip("'\"") if block.split() else ""
        body = block.split("\n- ", 1)[0]
        name = _PRE_COMMIT_IDS.get(ident)
        if name is None and ident in _NEEDS_FIX and re.search(r"--fix\b", body):
            name = _NEEDS_FIX[ident]
        entry = re.search(r"(?m)^\s*entry:\s*(.+)$", body)
        if name is None and entry is not None:
            name = next((n for n, rx in _FORMATTERS.items() if re.search(rx, entry.group(1))), None)
        if name is not None:
            found.append(_formatter(name, "pre-commit"))
    return found


def _formatter(name: str, source: str, glob: str | None = None) -> Formatter:
    """A formatter rewriting the files of its kind, or those ``glob`` (lint-staged) names."""
    if glob is not None:
        return Formatter(name, _lint_staged_glob(glob), source)
    extensions = _EXTENSIONS.get(name)
    if extensions is None:
        return Formatter(name, re.compile(".*", re.DOTALL), source)
    pattern = "|".join(re.escape(e) for e in extensions.split())
    return Formatter(name, re.compile(rf".*\.(?:{pattern})", re.DOTALL), source)


def _lint_staged_glob(glob: str) -> re.Pattern[str]:
    """A lint-staged (micromatch) glob as a path pattern: one without a ``/`` matches the
    file's name anywhere; ``*`` is allowed to cross folders (a superset)."""
    parts = []
    for item in braces(glob):
        regex = fnmatch_regex(item, loose=True)
        if regex is None:
            return re.compile(".*", re.DOTALL)
        parts.append(regex.pattern if "/" in item else f"(?:.*/)?{regex.pattern}")
    return re.compile("|".join(f"(?:{p})" for p in parts), re.DOTALL)


def _json(text: str | None) -> dict[str, object]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def rewrites(formatters: Iterable[Formatter], path: str) -> bool:
    """Whether one of ``formatters`` may rewrite the file at ``path``."""
    return any(f.files.fullmatch(path) for f in formatters)
