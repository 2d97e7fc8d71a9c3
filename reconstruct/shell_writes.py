"""Which files a recorded shell command wrote: read through its quoting, redirections, comments,
``cd`` and each program's own options (``sed -i ''`` on macOS, ``-e SCRIPT``, ``truncate -s``).

Each effect is a :class:`Change`: a write (content unknown), a ``sed -i`` substitution whose
new content replay computes when it knows the old one (:mod:`sed_call`), a deletion (``rm``),
or a move or copy whose destination replay can fill from the source when it knows it. Best
effort and on the side of precision: a word that still holds a variable, a brace list or a
substitution names no file that can be known, and after a ``cd`` to such a place no relative
path can be placed. An unquoted glob in a file word of ``sed -i``, ``rm``, ``mv`` and ``cp``
(a move's or copy's source, not its destination) is kept as a pattern that replay expands
against the files it knows (:mod:`shell_globs`); in any other word it names no file.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from trajforge.reconstruct.sed_call import sed_call
from trajforge.reconstruct.sed_script import SedScript
from trajforge.reconstruct.shell import UNRESOLVED, simple_commands
from trajforge.reconstruct.shell_globs import QUOTED_BRACES, is_glob, restore, shield

_VALUED = {
    "sed": {"-e", "--expression", "-f", "--file", "-l", "--line-length"},
    "perl": {"-e", "-E", "-M", "-I", "-m"},
    "touch": {"-d", "--date", "-r", "--reference", "-t"},
    "truncate": {"-s", "--size", "-r", "--reference"},
    "mv": {"-t", "--target-directory", "-S", "--suffix"},
    "cp": {"-t", "--target-directory", "-S", "--suffix"},
}
"""Options that take the next word as their value, per program."""
_SCRIPTS = {"sed": {"-e", "--expression", "-f", "--file"}, "perl": {"-e", "-E"}}
"""Options that give sed or perl its script (then every other word is a file)."""
_FLAGS = frozenset("nErsuzpilaw0")
"""One-letter flags sed and perl take run together (``-pi``, ``-Ei``, ``-ni``)."""


def _split(program: str, args: Sequence[str]) -> tuple[list[str], set[str]]:
    """(positional words, options seen) of ``args``, values of valued options skipped."""
    valued = _VALUED.get(program, set())
    words: list[str] = []
    options: set[str] = set()
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            words.extend(args[i + 1 :])
            break
        if arg.startswith("-") and arg != "-":
            name = arg.split("=", 1)[0]
            options.add(name)
            if name in valued and "=" not in arg:
                i += 1
        else:
            words.append(arg)
        i += 1
    return words, options


def _in_place(args: Sequence[str]) -> tuple[bool, list[str]]:
    """Whether sed/perl edit in place, and the arguments with a BSD suffix (``-i ''``,
    ``-i .bak``: a separate word after a bare ``-i``) taken out."""
    rest, found = list(args), False
    for i, arg in enumerate(rest):
        if arg in ("-i", "--in-place") or arg.startswith(("-i", "--in-place=")):
            found = True
        elif arg[:1] == "-" and "i" in arg[1:] and set(arg[1:]) <= _FLAGS:
            found = True  # -pi, -Ei: flags run together
        else:
            continue
        after = rest[i + 1] if i + 1 < len(rest) else None
        if arg == "-i" and after is not None and (after == "" or after.startswith(".")):
            del rest[i + 1]
        break
    return found, rest


@dataclass(frozen=True)
class Change:
    """One effect of a shell command on a file, in the order the command ran them."""

    kind: Literal["write", "substitute", "delete", "move", "copy"]
    """write: content unknown after; substitute: ``script`` rewrote it; delete: gone; move /
    copy: ``path`` gets ``source``."""
    path: str
    """The file changed (a move's or copy's destination)."""
    source: str | None = None
    """What a move or copy took its content from."""
    into: bool = False
    """``path`` is a folder: the source lands inside it under its own name."""
    tree: bool = False
    """The path may be a folder: everything under it too (``rm -r``, ``cp -r``)."""
    glob: bool = False
    """The path naming existing files (a move's or copy's ``source``, else ``path``) is a
    pattern (``*``, ``?``, ``[…]``) that replay expands against the files it knows."""
    script: SedScript | None = None
    """substitute: the ``s`` commands that rewrote the file."""
    backup: str = ""
    """sed -i SUFFIX: the file's old content is kept at ``path + backup``."""


_GLOBBING = frozenset({"sed", "rm", "mv", "cp"})
"""Programs whose file words replay expands when they are globs."""


def _edited(program: str, args: Sequence[str]) -> list[Change]:
    """Files ``sed -i`` / ``perl -i`` rewrite: every positional word but the script; a sed
    call read with confidence (:func:`sed_call`) says how."""
    call = sed_call(args) if program == "sed" else None
    if call is not None:
        kind: Literal["write", "substitute"] = "substitute" if call.script else "write"
        return [Change(kind, f, script=call.script, backup=call.backup) for f in call.files]
    in_place, rest = _in_place(args)
    if not in_place:
        return []
    words, options = _split(program, rest)
    attached = program == "sed" and any(o.startswith("-e") and len(o) > 2 for o in options)
    scripted = attached or bool(options & _SCRIPTS[program])
    return [Change("write", w) for w in (words if scripted else words[1:])]


def _named(program: str, args: Sequence[str]) -> list[Change]:
    return [Change("write", w) for w in _split(program, args)[0]]


def _removed(program: str, args: Sequence[str]) -> list[Change]:
    words, options = _split(program, args)
    tree = bool(options & {"-r", "-R", "--recursive"}) or any(
        o[:1] == "-" and o[1:2] != "-" and ("r" in o or "R" in o) for o in options
    )
    return [Change("delete", w, tree=tree) for w in words]


def _transferred(program: str, args: Sequence[str]) -> list[Change]:
    """``mv`` / ``cp``: one change per source; into the destination folder when there are
    several sources or it is spelled as one (``dir/``, ``.``)."""
    words, options = _split(program, args)
    if options & {"-t", "--target-directory"} or len(words) < 2:
        return []  # the target folder is an option's value: which names land there is unclear
    *sources, dest = words
    into = len(sources) > 1 or dest.endswith("/") or posixpath.basename(dest) in (".", "..")
    kind: Literal["move", "copy"] = "move" if program == "mv" else "copy"
    tree = program == "mv" or bool(options & {"-r", "-R", "-a", "--recursive", "--archive"})
    return [Change(kind, dest, source=src, into=into, tree=tree) for src in sources]


_WRITERS: dict[str, Callable[[str, Sequence[str]], list[Change]]] = {
    "sed": _edited,
    "perl": _edited,
    "tee": _named,
    "touch": _named,
    "truncate": _named,
    "rm": _removed,
    "cp": _transferred,
    "mv": _transferred,
}
"""Program → the changes one call of it makes."""


def _cd(cwd: str | None, args: Sequence[str]) -> str | None:
    """The folder after ``cd args`` (relative to where the command started, or absolute);
    None when it cannot be known (``cd``, ``cd -``, ``cd ~``, ``cd $X``)."""
    words = [a for a in args if not a.startswith("-")]
    if cwd is None or len(words) != 1 or UNRESOLVED.search(words[0]) or words[0][:1] == "~":
        return None
    return posixpath.normpath(posixpath.join(cwd, words[0]))


def changes(command: str) -> list[Change]:
    """What a command did to files, in order: redirections, sed -i / perl -i, tee, touch,
    truncate (writes), rm (deletions), mv and cp; each path placed by any ``cd`` before it in
    the command (relative to the folder it started in, or absolute). /dev/* and words whose
    file cannot be known are left out."""
    found: list[Change] = []
    cwd: str | None = "."
    outer: list[str | None] = []
    loops: list[tuple[str, list[str]]] = []
    for cmd in simple_commands(shield(command)):
        while len(outer) > cmd.depth:
            cwd = outer.pop()
        while len(outer) < cmd.depth:
            outer.append(cwd)
        argv = _unkeyworded(cmd.argv)
        if argv[:1] == ["for"] and len(argv) > 2 and argv[2] == "in":
            loops.append((argv[1], argv[3:]))
            continue
        if cmd.argv[:1] == ["done"] and loops:
            loops.pop()
            continue
        for words in _iterations(argv, loops):
            program = posixpath.basename(restore(words[0])) if words else ""
            if program == "cd":
                cwd = _cd(cwd, [restore(a) for a in words[1:]])
                continue
            writer = _WRITERS.get(program)
            made = [_placed(cwd, Change("write", t)) for t in cmd.writes]
            done = writer(program, words[1:]) if writer else []
            made += [_placed(cwd, c, program in _GLOBBING) for c in done]
            found += [c for c in made if c is not None]
    return found


_KEYWORDS = frozenset({"do", "then", "else", "elif", "{", "!", "if", "while", "until"})
"""Shell words that open the simple command after them (``do sed -i … "$f"``)."""


def _unkeyworded(argv: list[str]) -> list[str]:
    """``argv`` without the shell keywords before its program."""
    n = 0
    while n < len(argv) and argv[n] in _KEYWORDS:
        n += 1
    return argv[n:]


def _iterations(argv: list[str], loops: list[tuple[str, list[str]]]) -> list[list[str]]:
    """The commands a ``for VAR in WORDS`` loop runs: one per word where ``argv`` uses the
    loop's variable (``$f``, ``${f}``; each word as the list spelled it, so a glob in the list
    is expanded where the files are read), else ``argv`` once."""
    runs = [argv]
    for name, words in loops:
        var = re.escape(name)
        uses = re.compile(rf"\$(?:{var}\b|[{{{QUOTED_BRACES[0]}]{var}[}}{QUOTED_BRACES[1]}])")
        if any(uses.search(a) for a in argv):
            escaped = [w.replace("\\", "\\\\") for w in words]  # literal in re.sub
            runs = [[uses.sub(w, a) for a in run] for run in runs for w in escaped]
    return runs


def _placed(cwd: str | None, change: Change, globbing: bool = False) -> Change | None:
    """``change`` with its (shielded) words read and joined onto ``cwd``; None when one
    cannot be known. With ``globbing``, the word naming existing files may be a pattern."""
    words = [change.path] if change.source is None else [change.path, change.source]
    glob = globbing and is_glob(words[-1])
    if glob and change.source is not None and not change.into:
        return None  # one match renames, several move into: which, the files replay knows can't say
    joined = []
    for n, word in enumerate(words):
        path = _path(cwd, word, glob and n == len(words) - 1)
        if path is None:
            return None
        joined.append(path)
    source = joined[1] if change.source is not None else None
    return replace(change, path=joined[0], source=source, glob=glob)


def _path(cwd: str | None, word: str, glob: bool) -> str | None:
    """The path a shielded word names (a pattern when ``glob``), placed under ``cwd``."""
    path = word if glob else restore(word)
    if not path or path.startswith("/dev/") or (not glob and UNRESOLVED.search(path)):
        return None
    if glob and (path.endswith("/") or _climbs_after_glob(path)):
        return None  # dir/*/ names folders only; */.. needs what the pattern matched
    if not path.startswith(("/", "~")):  # ~: the home folder, never under a cd
        if cwd is None:
            return None
        path = posixpath.normpath(posixpath.join(cwd, path))
    return path


def _climbs_after_glob(pattern: str) -> bool:
    segments = pattern.split("/")
    first = next(n for n, s in enumerate(segments) if is_glob(s))
    return ".." in segments[first:]
