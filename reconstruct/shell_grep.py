"""``grep -l``, ``rg``, ``git grep`` and ``git ls-files`` as listings of files.

``grep -l`` of a fixed string lists exactly the files that hold it (``-L``: that do not),
filtered by ``--include`` / ``--exclude``; a regular expression, ``-i``, ``-w``, ``-x``, ``-v``
or a pattern file leave it perhaps. ``rg``, ``ag`` and ``ack`` skip ignored and hidden files
and ``git grep`` untracked ones: a file they could list is perhaps listed, one without the
fixed string surely not.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from trajforge.reconstruct.shell_globs import fnmatch_regex, restore
from trajforge.reconstruct.shell_listing import ANYWHERE, Producer, Verdict

_GREP_VALUED = frozenset("efmABCdD")
"""grep short options that take a value (attached or the next word)."""


@dataclass
class _Grep:
    patterns: list[str]
    words: list[str]
    flags: set[str]
    include: list[str]
    exclude: list[str]


def grep_producer(args: Sequence[str], program: str) -> Producer | None:
    """``grep -l`` / ``-L``: the files it named; None when it lists lines, not files."""
    read = _grep_args(args, program)
    if not read.flags & {"l", "L"}:
        return None
    if not read.patterns:
        if not read.words:
            return None
        read.patterns, read.words = [restore(read.words[0])], read.words[1:]
    recursive = bool(read.flags & {"r", "R"})
    if not read.words and not recursive:
        return ANYWHERE  # it read its input: the names are the input's
    has = _contains(read)
    include, exclude = _name_tests(read.include), _name_tests(read.exclude)

    def test(printed: str, rel: str, content: str | None) -> Verdict:
        base = posixpath.basename(printed)
        if (rel and not recursive) or any(x.fullmatch(base) for x in exclude):
            return False
        if include and not any(x.fullmatch(base) for x in include):
            return False
        found = has(content)
        return None if found is None else found != ("L" in read.flags)

    return Producer(tuple(read.words) or (".",), test)


def _grep_args(args: Sequence[str], program: str, valued: frozenset[str] = _GREP_VALUED) -> _Grep:
    flags = {"F"} if program == "fgrep" else {"E"} if program == "egrep" else set()
    read = _Grep([], [], flags, [], [])
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            read.words += args[i + 1 :]
            break
        if arg.startswith("--"):
            i = _grep_long(read, args, i)
        elif arg[:1] == "-" and len(arg) > 1:
            i = _grep_short(read, args, i, valued)
        else:
            read.words.append(arg)
            i += 1
    return read


_LONG_FLAGS = {"--files-with-matches": "l", "--files-without-match": "L", "--recursive": "r",
               "--dereference-recursive": "R", "--fixed-strings": "F", "--ignore-case": "i",
               "--extended-regexp": "E", "--word-regexp": "w", "--line-regexp": "x",
               "--invert-match": "v", "--perl-regexp": "P"}  # fmt: skip


def _grep_long(read: _Grep, args: Sequence[str], i: int) -> int:
    name, eq, value = args[i].partition("=")
    if name in _LONG_FLAGS:
        read.flags.add(_LONG_FLAGS[name])
    elif name in ("--regexp", "--include", "--exclude", "--file", "--exclude-dir", *_IGNORED):
        if not eq:
            i += 1
            value = args[i] if i < len(args) else ""
        if name == "--regexp":
            read.patterns.append(restore(value))
        elif name in ("--include", "--exclude"):
            (read.include if name == "--include" else read.exclude).append(restore(value))
        elif name in ("--file", "--exclude-dir"):
            read.flags.add("f" if name == "--file" else "X")
    return i + 1


_IGNORED = ("--glob", "--iglob", "--type", "--type-not", "--max-depth", "--max-count")
"""``rg`` long options whose value (the next word) is no pattern and no path."""


def _grep_short(read: _Grep, args: Sequence[str], i: int, valued: frozenset[str]) -> int:
    arg = args[i]
    for at in range(1, len(arg)):
        ch = arg[at]
        if ch in valued:
            value = arg[at + 1 :] or (args[i + 1] if i + 1 < len(args) else "")
            i += not arg[at + 1 :]
            if ch == "e":
                read.patterns.append(restore(value))
            read.flags.add(ch)
            break
        read.flags.add(ch)
    return i + 1


def _contains(read: _Grep) -> Callable[[str | None], Verdict]:
    """Whether a file's content holds a match: decided for fixed strings only."""
    special = r"\.[]*^$" + ("+?(){}|" if read.flags & {"E", "P"} else "")
    fixed = "F" in read.flags or not any(ch in p for p in read.patterns for ch in special)
    loose = read.flags & {"i", "y", "w", "x", "v", "f", "P"} or not read.patterns
    texts = [t for p in read.patterns for t in p.split("\n")]
    if not fixed or loose or "" in texts:
        return lambda content: None
    return lambda content: None if content is None else any(t in content for t in texts)


def _name_tests(patterns: list[str]) -> list[re.Pattern[str]]:
    return [r for p in patterns if (r := fnmatch_regex(p, loose=True)) is not None]


def searcher_producer(args: Sequence[str]) -> Producer:
    """``rg`` / ``ag`` / ``ack``: they skip ignored and hidden files, so a file they could
    list is perhaps listed; with ``-l`` and a fixed string, one without it surely not."""
    read = _grep_args(args, "grep", _SEARCH_VALUED)
    listing = "--files" in args
    if listing or "l" not in read.flags:
        return Producer(tuple(read.words if listing else read.words[1:]) or (".",))
    if not read.patterns and read.words:
        read.patterns, read.words = [restore(read.words[0])], read.words[1:]
    read.flags.add("E")
    has = _contains(read)
    return Producer(tuple(read.words) or (".",), lambda p, r, c: None if has(c) else False)


_SEARCH_VALUED = frozenset("efmABCgtTjM")
"""``rg`` short options that take a value (``-g GLOB``, ``-t TYPE``)."""


def git_producer(args: Sequence[str]) -> Producer:
    """``git grep -l`` (tracked files only: perhaps) and ``git ls-files`` list files under
    the folder it ran in; other git commands name files from the repository's root."""
    words = _positional(args)
    sub = words[0] if words else ""
    rest = list(args[list(args).index(sub) + 1 :]) if sub else []
    if sub == "grep":
        found = grep_producer(["-r", *(a for a in rest if a != "--")], "grep")
        return found.weakened() if found is not None else ANYWHERE
    if sub == "ls-files":
        return Producer(tuple(_positional(rest)) or (".",))
    return ANYWHERE


def _positional(args: Sequence[str]) -> list[str]:
    return [a for a in args if a[:1] != "-"]
