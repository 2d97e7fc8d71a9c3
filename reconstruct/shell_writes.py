"""Which files a recorded shell command wrote: read through its quoting, redirections, comments,
``cd`` and each program's own options (``sed -i ''`` on macOS, ``-e SCRIPT``, ``truncate -s``).

Each effect is a :class:`Change`: a write (content unknown), a ``sed -i`` substitution whose
new content replay computes when it knows the old one (:mod:`sed_call`), a ``touch`` (a file
that exists keeps its content), a deletion (``rm``), or a move or copy whose destination replay
can fill from the source when it knows it. Best effort and on the side of precision: a word
that still holds a variable or a substitution names no file that can be known, and after a
``cd`` to such a place no relative path can be placed. Brace lists expand as bash expands them
(``touch src/{a,b}.ts``, ``cp f{,.bak}``). An unquoted glob in a file word of ``sed -i``,
``perl -i``, ``rm``, ``mv``, ``cp``, ``tee``, ``touch``, ``truncate`` or a redirection (a
move's or copy's source, not its destination) is kept as a pattern that replay expands
against the files it knows (:mod:`shell_globs`). Files another command listed (``find … |
xargs sed -i``, ``find -exec``, ``while read f``, ``for f in $(…)``) are a selection
(:mod:`shell_streams`); a loop's body runs once per word of its list (:mod:`shell_loops`).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from trajforge.reconstruct.sed_call import sed_call
from trajforge.reconstruct.sed_script import SedScript
from trajforge.reconstruct.shell import UNRESOLVED, SimpleCommand, simple_commands
from trajforge.reconstruct.shell_globs import braces, is_glob, restore, shield
from trajforge.reconstruct.shell_listing import Producer, Selection
from trajforge.reconstruct.shell_loops import Loop, iterations, shell_script, unkeyworded
from trajforge.reconstruct.shell_select import producer
from trajforge.reconstruct.shell_streams import (
    HOLDS,
    Streams,
    loop_words,
    read_loop,
    runs,
    selected,
    substitutions,
)

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

    kind: Literal["write", "substitute", "delete", "move", "copy", "touch"]
    """write: content unknown after; substitute: ``script`` rewrote it; delete: gone; move /
    copy: ``path`` gets ``source``; touch: a new file when there was none, else unchanged."""
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
    select: Selection | None = None
    """The files are those another command listed (``find … | xargs sed -i``): the ones
    under ``path`` (a move's or copy's ``source``) the selection picks."""


_GLOBBING = frozenset({"sed", "perl", "rm", "mv", "cp", "tee", "touch", "truncate"})
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
    kind: Literal["write", "touch"] = "touch" if program == "touch" else "write"
    return [Change(kind, w) for w in _split(program, args)[0]]


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
    truncate (writes), rm (deletions), mv and cp, also run by ``xargs``, ``find -exec`` and
    loops; each path placed by any ``cd`` before it in the command (relative to the folder it
    started in, or absolute), brace lists expanded. /dev/* and words whose file cannot be
    known are left out; files another command listed are a selection (:mod:`shell_streams`)."""
    walk = _Walk()
    walk.line(command)
    return walk.found


def _redirect(target: str) -> Change:
    """A redirection's target (a brace list in it: bash refuses it, nothing is written)."""
    expanded = braces(target)
    return Change("write", expanded[0] if len(expanded) == 1 else "")


@dataclass
class _Walk:
    """Where :func:`changes` is in a command line."""

    cwd: str | None = "."
    outer: list[str | None] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    streams: Streams = field(default_factory=Streams)
    found: list[Change] = field(default_factory=list)

    def line(self, command: str) -> None:
        """Every simple command of ``command`` (a shielded one: as it is written)."""
        stream: Producer | None = None
        for cmd in substitutions(simple_commands(shield(command)), self.streams):
            self.enter(cmd.depth)
            argv = [w for word in unkeyworded(cmd.argv) for w in braces(word)]
            if not self.header(cmd, argv, stream):
                for targets in iterations(cmd.writes, self.loops):
                    self.found += [c for t in targets for c in self.place(_redirect(t), True)]
                for run in runs(argv, stream, self.streams, self.cwd):
                    for words in iterations(run, self.loops):
                        self.run(words)
            stream = producer(argv, stream) if cmd.piped else None

    def enter(self, depth: int) -> None:
        """Into or out of subshells: a ``cd`` inside one does not outlive it."""
        while len(self.outer) > depth:
            self.cwd = self.outer.pop()
        while len(self.outer) < depth:
            self.outer.append(self.cwd)

    def header(self, cmd: SimpleCommand, argv: list[str], stream: Producer | None) -> bool:
        """A loop's header (``for … in``, ``while read``) or its ``done``: True when ``cmd``
        was one."""
        if argv[:1] == ["for"] and len(argv) > 2 and argv[2] == "in":
            self.loops.append([(argv[1], loop_words(argv[3:], self.streams, self.cwd))])
        elif cmd.argv[:1] in (["while"], ["until"]):
            bound = read_loop(argv, stream, self.streams, self.cwd)
            self.loops.append(bound or [])
            return bound is not None
        elif cmd.argv[:1] == ["done"]:
            if self.loops:
                self.loops.pop()
        else:
            return False
        return True

    def run(self, words: list[str]) -> None:
        """One simple command: a ``cd``, or a program whose changes are recorded."""
        program = posixpath.basename(restore(words[0])) if words else ""
        if program == "cd":
            self.cwd = _cd(self.cwd, [restore(a) for a in words[1:]])
            return
        script = shell_script(program, words[1:])
        if script is not None:  # sh -c '…' _ {}: the script runs here, the words its $1 …
            inner = _Walk(cwd=self.cwd, streams=self.streams)
            inner.line(script)
            self.found += inner.found
            return
        writer = _WRITERS.get(program)
        for change in writer(program, words[1:]) if writer else []:
            self.found += self.place(change, program in _GLOBBING)

    def place(self, change: Change, globbing: bool) -> list[Change]:
        """``change`` placed under the current folder (none when a word names no file)."""
        if HOLDS.search(change.path) or (change.source and HOLDS.search(change.source)):
            return selected(self.cwd, change, self.streams, lambda w: _path(self.cwd, w, False))
        placed = _placed(self.cwd, change, globbing)
        return [placed] if placed is not None else []


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
