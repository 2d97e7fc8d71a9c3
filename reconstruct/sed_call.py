"""How one ``sed`` command line edits files in place, read as GNU and as BSD sed read it.

A command line does not say which sed ran it. GNU sed takes ``-i`` with an attached suffix
only and options anywhere; BSD (macOS) sed takes the next word as the suffix (``-i ''``) and
options before the script. :func:`sed_call` reads the arguments both ways and keeps the
readings a successful run allows: GNU sed never runs an empty script nor reads a file named
``''``; a BSD suffix is never a script like ``s/a/b/``. The files' content is known only when
every kept reading gives the same text (:class:`~sed_script.SedScript`). Options other than
``-i``, ``-e``, ``-E``/``-r`` and harmless ones (``-s``, ``-u``, ``-l N``, ``-a``, GNU's
``--follow-symlinks`` …) — ``-n``, ``-f``, ``-z``, BSD's ``-I``, ``--posix``, ``--debug``, an
unknown one — leave a reading out; with none left the call is read the old way (every word but
the script is a file whose content is unknown).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from trajforge.reconstruct.sed_regex import Dialect
from trajforge.reconstruct.sed_script import SedScript, parse
from trajforge.reconstruct.shell_globs import is_literal, restore

_SUFFIX = re.compile(r"[\w.~+-]*")
"""A BSD backup suffix a person writes (``''``, ``.bak``, ``-e`` by mistake): not a script."""


@dataclass
class _Reading:
    """The arguments as one sed reads them."""

    dialect: Dialect
    in_place: bool = False
    suffix: str = ""
    separate: bool = False
    """The suffix was the word after ``-i`` (BSD)."""
    extended: bool = False
    scripts: list[str] = field(default_factory=list)
    words: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SedCall:
    """What one in-place sed call does to its files."""

    files: tuple[str, ...]
    script: SedScript | None
    """None: the files' content after it is unknown."""
    backup: str = ""
    """Suffix of the backup copy each file's old content is kept in ("": none)."""


def sed_call(args: Sequence[str]) -> SedCall | None:
    """The in-place edit ``sed ARGS`` makes (words shielded, see :mod:`shell_globs`); None
    when no reading of the arguments is an in-place edit a successful run allows, or the
    readings name different files."""
    readings = [r for r in (_finish(_gnu(args)), _finish(_bsd(args))) if r is not None]
    named = {tuple(r.words) for r in readings}
    if len(named) != 1:
        return None
    suffixes = {r.suffix for r in readings}
    backup = suffixes.pop() if len(suffixes) == 1 else ""  # which one is unsure: none followed
    if not is_literal(backup) or "/" in backup or "*" in restore(backup):
        backup = ""  # unknown, or GNU puts the copy in a folder or around the name
    programs = []
    for reading in readings:
        literal = all(is_literal(s) for s in reading.scripts)
        script = restore("\n".join(reading.scripts))
        program = parse(script, reading.extended, reading.dialect) if literal else None
        if program is None:
            return SedCall(named.pop(), None, restore(backup))
        programs.append(program)
    return SedCall(named.pop(), SedScript(tuple(programs)), restore(backup))


def _finish(reading: _Reading | None) -> _Reading | None:
    """The reading with its script and files told apart, when a successful run allows it."""
    if reading is None or not reading.in_place:
        return None
    if not reading.scripts and reading.words:
        reading.scripts, reading.words = reading.words[:1], reading.words[1:]
    if not reading.scripts or not reading.words or any(w[:1] == "-" for w in reading.words):
        return None  # BSD `-i -e s/a/b/ -e s/c/d/ f`: -e taken for a file, sed fails
    if reading.dialect == "gnu":
        empty = not "".join(reading.scripts).strip()
        return None if empty or "" in reading.words else reading
    if reading.separate and not _SUFFIX.fullmatch(restore(reading.suffix)):
        return None
    return reading


def _gnu(args: Sequence[str]) -> _Reading | None:
    """GNU sed's reading: options anywhere, ``-i`` takes only an attached suffix."""
    reading = _Reading("gnu")
    i = 0
    while 0 <= i < len(args):
        arg = args[i]
        if arg == "--":
            reading.words += args[i + 1 :]
            break
        if arg.startswith("--"):
            i = _gnu_long(reading, args, i)
        elif arg.startswith("-") and arg != "-":
            i = _short(reading, args, i)
        else:
            reading.words.append(arg)
            i += 1
    return reading if i >= 0 else None


def _bsd(args: Sequence[str]) -> _Reading | None:
    """BSD sed's reading: options first, ``-i`` takes the next word when nothing is attached."""
    reading = _Reading("bsd")
    i = 0
    while 0 <= i < len(args) and args[i].startswith("-") and args[i] != "-":
        if args[i] == "--":
            i += 1
            break
        i = -1 if args[i].startswith("--") else _short(reading, args, i)
    if i < 0:
        return None
    reading.words = list(args[i:])
    return reading


_GNU_FLAGS = frozenset({"--separate", "--unbuffered", "--follow-symlinks", "--sandbox"})


def _gnu_long(reading: _Reading, args: Sequence[str], i: int) -> int:
    """Read the long option at ``i``; the index after it, -1 when it is outside the subset."""
    name, eq, value = args[i].partition("=")
    if name == "--in-place":
        reading.in_place, reading.suffix = True, value
    elif name == "--regexp-extended" and not eq:
        reading.extended = True
    elif name in ("--expression", "--line-length"):
        if not eq:
            i += 1
            if i >= len(args):
                return -1
            value = args[i]
        if name == "--expression":
            reading.scripts.append(value)
    elif name not in _GNU_FLAGS or eq:
        return -1
    return i + 1


def _short(reading: _Reading, args: Sequence[str], i: int) -> int:
    """Read the short options bundled in the word at ``i``; the index after them, -1 when
    one is outside the subset (``-n``, ``-f``, ``-z``, ``-I``, …)."""
    arg = args[i]
    gnu = reading.dialect == "gnu"
    for at in range(1, len(arg)):
        ch, attached = arg[at], arg[at + 1 :]
        if ch in "Er":
            reading.extended = True
        elif ch in ("su" if gnu else "alu"):
            continue
        elif ch == "i" and gnu:
            reading.in_place, reading.suffix = True, attached
            return i + 1
        elif ch in ("el" if gnu else "ei"):
            if not attached:
                i += 1
                if i >= len(args):
                    return -1
            value = attached or args[i]
            if ch == "e":
                reading.scripts.append(value)
            elif ch == "i":
                reading.in_place, reading.suffix, reading.separate = True, value, not attached
            return i + 1
        else:
            return -1
    return i + 1
