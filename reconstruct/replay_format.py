"""Replay of what formatters did to the files: run by a command, or by a commit's hook.

A formatter or fixer (:mod:`formatters`) rewrites the files it covers that are not formatted
yet. Replay takes those to be the files the session changed since a formatter last covered them
(a file of the starting tree is as its repository formatted it): after a command that runs one
— directly (``npx prettier --write src``), through a package script (``npm run check``: ``biome
check --write .``), or as the pre-commit hook of a ``git commit`` (whether it succeeded or not:
a hook that fails has already rewritten files) — each such file it may rewrite keeps the
content it had before, as a ``formatted`` version: a formatter changes the layout, not what the
code does, so the file still serves as an oracle or a start (a later read that shows other
lines makes it known only in part; a commit of the session's holds the formatted text and
replaces it, as it does text edited from it; a ``sed`` that matches nothing in it leaves it
unknown). A file whose content was not known stays unknown. Nothing is marked when the
commit skipped its hooks (``-n``, ``--no-verify``, ``HUSKY=0``, an empty ``core.hooksPath``),
nor when the output shows the formatter rewrote nothing: every ``biome`` run said "No fixes
applied" (or fixed 0 files), ``ruff format`` / ``black`` reformatted 0 files, or the pre-commit
framework passed (it fails when a hook changes a file). An output the harness may have cut
proves nothing. When ``biome`` says it fixed more files than the session had changed, the
others (files replay took as formatted) are named in a divergence: which they are is not known."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from trajforge.reconstruct.formatters import Formatter, command_formatters, commit_hook, rewrites
from trajforge.reconstruct.paths import PathViolation, confine
from trajforge.reconstruct.replay_tree import exists, known_paths, unformatted
from trajforge.reconstruct.shell import ASSIGNMENT, simple_commands
from trajforge.reconstruct.shell_globs import restore, shield
from trajforge.records import Event

if TYPE_CHECKING:
    from trajforge.reconstruct.replay import Replay

_BIOME = re.compile(
    r"(?m)^(?:Checked|Formatted|Linted) \d+ files? in [\d.]+\w*\. "
    r"(?:No fixes applied|Fixed (\d+) files?)"
)
_REFORMATTED = re.compile(r"(\d+) files? (reformatted|left unchanged)")
_CUT = re.compile(
    r"output (?:was )?truncated|[\[(<]truncated|truncated to \d+|\[\.\.\.\]"
    r"|(?:lines?|characters|chars) (?:omitted|hidden|not shown)"
    r"|showing (?:the )?(?:last|first) \d+",
    re.IGNORECASE,
)
"""A harness's notice that it cut a command's output (a file named truncate.ts is none)."""
_NAMES = re.compile(
    r"\b(?:git|npm|pnpm|yarn|bun|npx|bunx|pnpx|uvx|uv|poetry|pipx|python3?|biome|prettier|eslint"
    r"|ruff|black|isort|autopep8|gofmt|go|rustfmt|cargo|clang-format|stylelint|dprint|deno"
    r"|standard|xo|rubocop|php-cs-fixer|swiftformat|ktlint|oxlint|sort-package-json)\b"
)
"""A command naming none of these runs no formatter and commits nothing."""
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_COMMIT_VALUED = frozenset("mFCctS")
"""``git commit`` short options whose value is the rest of their word or the next one."""


@dataclass(frozen=True)
class _Run:
    """Formatters one command ran, over ``scope`` (paths under the workspace; None: all)."""

    formatters: tuple[Formatter, ...]
    scope: tuple[str, ...] | None = None


def apply_formatters(
    state: Replay, index: int, command: str, result: Event, base: str | None
) -> bool:
    """What the formatters ``command`` ran did to the files (``base``: the folder it ran
    in); True when they may have changed a file replay knew."""
    marked = False
    for run in _runs(state, index, command, base):
        marked = _apply(state, index, run, result) or marked
    return marked


def _runs(state: Replay, index: int, command: str, base: str | None) -> list[_Run]:
    if not _NAMES.search(command):
        return []
    tree = _Tree(state, index, base)
    commands = [[restore(w) for w in c.argv if w] for c in simple_commands(shield(command))]
    found = []
    if any(_commit(words) for words in commands):
        skipped = _skipped(command)
        formatters = commit_hook(tree.read, tree.exists, tree.packages)
        found.append(_Run(tuple(f for f in formatters if f.source not in skipped)))
    cwd: str | None = ""
    for words in commands:
        if words[:1] == ["cd"]:
            cwd = tree.folder(cwd, words[1:])
            continue
        if cwd is None:
            continue
        manifest = posixpath.join(cwd, "package.json") if cwd else "package.json"
        made, paths = command_formatters(words, tree.read, tree.exists, tree.packages, manifest)
        if made:
            scope = [tree.under(cwd, p) for p in paths or ["."]]
            known = None if any(s is None or s == "" for s in scope) else scope
            found.append(_Run(tuple(made), tuple(s for s in known or () if s) or None))
    return found


@dataclass
class _Tree:
    """The files as replay knows them when a command runs, by paths under the workspace."""

    state: Replay
    index: int
    base: str | None
    _known: set[str] | None = None
    _packages: list[str] | None = None

    def read(self, path: str) -> str | None:
        return self.state.current(path) if exists(self.state, path) else None

    def exists(self, path: str) -> bool:
        return exists(self.state, path)

    def known(self) -> set[str]:
        if self._known is None:
            self._known = known_paths(self.state)
        return self._known

    def packages(self) -> list[str]:
        if self._packages is None:
            self._packages = sorted(p for p in self.known() if _manifest(p))
        return self._packages

    def folder(self, cwd: str | None, args: list[str]) -> str | None:
        """The folder (under the workspace; '' its root) after ``cd args``."""
        words = [a for a in args if not a.startswith("-")]
        return self.under(cwd, words[0]) if cwd is not None and len(words) == 1 else None

    def under(self, cwd: str | None, word: str) -> str | None:
        """The path ``word`` names from ``cwd``, under the workspace ('' its root; None:
        outside it or not a known file or folder, as ``--ext .ts`` is not)."""
        if cwd is None or re.search(r"[$`*?\[{]", word) or word.startswith("~"):
            return None
        joined = word if word.startswith("/") else posixpath.join(self.base or "", cwd, word)
        try:
            rel = posixpath.dirname(confine(f"{joined}/_", self.state.root))
        except PathViolation:
            return None
        known = self.known()
        if rel and rel not in known and not any(p.startswith(rel + "/") for p in known):
            return None
        return rel


def _manifest(path: str) -> bool:
    return posixpath.basename(path) == "package.json" and "node_modules/" not in f"/{path}"


def _apply(state: Replay, index: int, run: _Run, result: Event) -> bool:
    """Each file of ``run``'s scope the session changed since a formatter last covered it:
    unknown when a formatter that may rewrite it is not proved to have left it."""
    left = [f for f in run.formatters if not _proved(f, result)]
    covered = []
    for path in _dirty(state, index):
        inside = run.scope is None or any(path == s or path.startswith(s + "/") for s in run.scope)
        if inside and rewrites(run.formatters, path):
            covered.append(path)
            state.formatted[path] = index
    marked = [p for p in covered if rewrites(left, p)]
    for path in marked:
        known = state.current(path)
        state.put(path, index, known, "formatted" if known is not None else "shell")
    kept = [p for p in marked if state.current(p) is not None]
    if kept:
        names = "/".join(sorted({f.name for f in left if any(rewrites([f], p) for p in kept)}))
        listed = ", ".join(kept[:3]) + (f" and {len(kept) - 3} more" if len(kept) > 3 else "")
        state.divergences.append(
            f"event {index}: {names} may have reformatted {listed} (its output does not show it "
            "left them); kept as before it: the same code, in a layout that may differ"
        )
    _unattributed(state, index, left, covered, result)
    return bool(marked)


def _dirty(state: Replay, index: int) -> list[str]:
    """Files that exist and that the session changed after a formatter last covered them."""
    return sorted(
        path
        for path, versions in state.history.items()
        if versions[-1].origin != "deleted" and unformatted(state, path, index)
    )


def _unattributed(
    state: Replay, index: int, left: Iterable[Formatter], covered: list[str], result: Event
) -> None:
    """A divergence when biome says it fixed more files than it could have among those the
    session changed."""
    if not any(f.name == "biome" for f in left):
        return
    fixed = sum(int(m.group(1) or 0) for m in _BIOME.finditer(result.text or ""))
    candidates = [p for p in covered if rewrites([f for f in left if f.name == "biome"], p)]
    if fixed > len(candidates):
        state.divergences.append(
            f"event {index}: biome fixed {fixed} file(s), {len(candidates)} of them among "
            "those the session changed; which others it rewrote is not known"
        )


def _commit(words: list[str]) -> bool:
    """Whether a simple command runs ``git commit`` with its hooks (not ``--no-verify``)."""
    while words and (ASSIGNMENT.match(words[0]) or words[0] in ("env", "command")):
        words = words[1:]
    if not words or posixpath.basename(words[0]) != "git":
        return False
    sub, hooks = _subcommand(words[1:])
    return sub[:1] == ["commit"] and hooks and not _no_verify(sub[1:])


def _subcommand(args: list[str]) -> tuple[list[str], bool]:
    """git's subcommand with its arguments, and whether hooks run (``-c core.hooksPath=``
    to nothing or /dev/null turns them off)."""
    i, hooks = 0, True
    while i < len(args) and args[i].startswith("-"):
        name, eq, value = args[i].partition("=")
        if name in _GIT_VALUED and not eq:
            i += 1
            value = args[i] if i < len(args) else ""
        if name == "-c" and value.lower().startswith("core.hookspath="):
            hooks = value.split("=", 1)[1] not in ("", "/dev/null")
        i += 1
    return args[i:], hooks


def _no_verify(args: Iterable[str]) -> bool:
    for arg in args:
        if arg == "--":
            return False
        if arg == "--no-verify":
            return True
        if arg[:1] == "-" and arg[1:2] != "-":
            for ch in arg[1:]:
                if ch == "n":
                    return True
                if ch in _COMMIT_VALUED:
                    break
    return False


def _skipped(command: str) -> set[str]:
    """Hook runners the command's environment turns off (``HUSKY=0``)."""
    off = set()
    if re.search(r"(?:^|[\s;&|(])HUSKY=0\b|HUSKY_SKIP_HOOKS=(?:1|true)\b", command):
        off.update({"husky", "lint-staged"})
    return off


def _proved(formatter: Formatter, result: Event) -> bool:
    """Whether the command's output (or exit code) shows ``formatter`` rewrote nothing."""
    if formatter.source == "pre-commit":
        return result.exit_code == 0
    text = result.text or ""
    if result.partial or _CUT.search(text):
        return False
    if formatter.name == "biome":
        runs = list(_BIOME.finditer(text))
        return bool(runs) and all(int(m.group(1) or 0) == 0 for m in runs)
    if formatter.name in ("ruff", "black"):
        counts = _REFORMATTED.findall(text)
        return bool(counts) and all(kind != "reformatted" or n == "0" for n, kind in counts)
    return False
