"""Searches for files by name: ``find``, ``fd``, ``locate``, ``grep --include``, ``rg -g``.

Each name or path pattern becomes a ``search`` effect on the directory searched (``locate``
searches the whole filesystem: ``/``), so a rule can tell ``find / -name '*.jsonl' -path
'*sessions*'`` (looking for harness session files) from ``find . -name '*.py'``.
"""

from __future__ import annotations

from trajforge.guard.argv import Sink

FIND_PATTERNS = frozenset(
    {"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
     "-lname", "-ilname"}
)  # fmt: skip
FD_VALUE_OPTS = frozenset(
    {"-e", "--extension", "-t", "--type", "-E", "--exclude", "-d", "--max-depth", "--min-depth",
     "--exact-depth", "-x", "--exec", "-X", "--exec-batch", "-S", "--size", "--changed-within",
     "--changed-before", "-j", "--threads", "-c", "--color", "--base-directory", "--search-path",
     "--owner", "--max-results", "--ignore-file"}
)  # fmt: skip
LOCATE_VALUE_OPTS = frozenset({"-d", "--database", "-l", "--limit", "-n"})
LOCATES = frozenset({"locate", "plocate", "mlocate", "slocate"})


def _find(sink: Sink, prog: str, args: list[str]) -> None:
    roots = []
    for word in args:
        if word.startswith(("-", "(", "!")):
            break
        roots.append(word)
    roots = roots or ["."]
    patterns = [(flag, args[i + 1]) for i, flag in enumerate(args[:-1]) if flag in FIND_PATTERNS]
    for root in roots:
        sink.add("list", sink.path(root), tree=True)
        if "-delete" in args:
            sink.add("delete", sink.path(root), tree=True)
        for flag, pattern in patterns:
            sink.add("search", sink.path(root), detail=f"{flag} {pattern}")
    for flag in ("-exec", "-execdir", "-ok", "-okdir"):
        if flag in args:
            start = args.index(flag) + 1
            end = next((i for i in range(start, len(args)) if args[i] in (";", "+", "\\;")), None)
            inner = [roots[0] + "/*" if w == "{}" else w for w in args[start:end]]
            sink.argv(inner, "find -exec")


def _fd(sink: Sink, prog: str, args: list[str]) -> None:
    """``fd [PATTERN] [PATH...]``, ``-e EXT``, ``-g GLOB``."""
    words: list[str] = []
    patterns: list[str] = []
    skip = False
    for i, word in enumerate(args):
        if skip:
            skip = False
        elif word in ("-e", "--extension") and i + 1 < len(args):
            patterns.append("*." + args[i + 1].lstrip("."))
            skip = True
        elif word in FD_VALUE_OPTS:
            skip = True
        elif not word.startswith("-"):
            words.append(word)
    if words:
        patterns.append(words[0])
    roots = words[1:] or ["."]
    for root in roots:
        sink.add("list", sink.path(root), tree=True)
        for pattern in patterns:
            sink.add("search", sink.path(root), detail=f"{prog} {pattern}")
    for flag in ("-x", "--exec", "-X", "--exec-batch"):
        if flag in args:
            inner = [roots[0] + "/*" if w == "{}" else w for w in args[args.index(flag) + 1 :]]
            sink.argv(inner, "fd -x")


def _locate(sink: Sink, prog: str, args: list[str]) -> None:
    """``locate PATTERN...`` looks names up across the whole filesystem."""
    skip = False
    for i, word in enumerate(args):
        if skip:
            skip = False
        elif word in ("-r", "--regex", "--regexp") and i + 1 < len(args):
            sink.add("search", "/", detail=f"{prog} {args[i + 1]}")
            skip = True
        elif word in LOCATE_VALUE_OPTS:
            skip = True
        elif not word.startswith("-"):
            sink.add("search", "/", detail=f"{prog} {word}")


def include_patterns(args: list[str]) -> list[str]:
    """``--include=GLOB`` / ``-g GLOB`` / ``--glob GLOB`` values of grep / rg."""
    found: list[str] = []
    for i, word in enumerate(args):
        name, eq, value = word.partition("=")
        if name in ("--include", "--glob", "--iglob") and eq:
            found.append(value)
        elif word in ("--include", "-g", "--glob", "--iglob") and i + 1 < len(args):
            found.append(args[i + 1])
    return [f for f in found if not f.startswith("!")]
