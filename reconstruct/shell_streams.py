"""Words that stand for the files another command listed.

``find src -name '*.ts' | xargs sed -i …``, ``find … -exec sed -i … {} +``, ``find … -delete``,
``grep -rl foo src | while read f; do sed -i … "$f"; done``, ``for f in $(git ls-files); …``
and ``sed -i … $(grep -rl foo .)`` change files their text does not name. Each such word is
replaced by a placeholder (a private character) bound to the :class:`~shell_select.Producer`
that listed the files and the folder it ran in; :func:`selected` turns a change of a
placeholder into changes that carry a :class:`~shell_select.Selection`, which replay runs on
the files it knows. A placeholder inside a longer word (``"src/$f"``, ``"$f.bak"``), or an
expansion of a loop variable replay cannot compute (``${f%.ts}``), matches any file whose path
fits the rest of the word (:data:`WILD`): perhaps changed.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from trajforge.reconstruct.shell import (
    SimpleCommand,
    find_actions,
    simple_commands,
    xargs_command,
)
from trajforge.reconstruct.shell_globs import is_glob, restore, shield
from trajforge.reconstruct.shell_listing import ANYWHERE, Producer, Selection
from trajforge.reconstruct.shell_select import producer

if TYPE_CHECKING:
    from trajforge.reconstruct.shell_writes import Change

WILD = chr(0xE0FF)
"""Any text: what a loop variable's expansion replay cannot compute stands for."""
_FIRST = 0xE100
HOLDS = re.compile(f"[{WILD}{chr(_FIRST)}-{chr(_FIRST + 0xFF)}]")
"""A word holding a placeholder."""
_ACTIVE = re.compile(r"[$`]")


@dataclass
class Streams:
    """The lists of files a command line's placeholders stand for."""

    bound: dict[str, tuple[Producer, str | None]] = field(default_factory=dict)
    """placeholder → (the producer, the folder its names are relative to)."""

    def bind(self, listed: Producer, cwd: str | None) -> str:
        if len(self.bound) >= 0xFF:
            return WILD
        mark = chr(_FIRST + len(self.bound))
        self.bound[mark] = (listed, cwd)
        return mark


def substitutions(cmds: Sequence[SimpleCommand], streams: Streams) -> list[SimpleCommand]:
    """``cmds`` with each ``$(…)`` that ends a command's words (``sed -i … $(grep -l …)``,
    ``for f in $(find …)``) replaced by a placeholder for what its commands listed, and each
    backquoted command likewise (its words taken out)."""
    found = []
    for n, cmd in enumerate(cmds):
        argv = [_quoted(w, streams) for w in _backquoted(cmd.argv, streams)]
        if argv[-1:] == ["$"] and n + 1 < len(cmds) and cmds[n + 1].depth > cmd.depth:
            inner = []
            for later in cmds[n + 1 :]:
                if later.depth <= cmd.depth:
                    break
                inner.append(later)
            argv = [*argv[:-1], streams.bind(chain(inner), None)]
        found.append(replace(cmd, argv=argv))
    return found


def _quoted(word: str, streams: Streams) -> str:
    """``"$(…)"``, one word: a placeholder for what its commands listed."""
    text = restore(word)
    if not (word[:1] == "$" and word[1:2] != "(" and text[:2] == "$(" and text[-1:] == ")"):
        return word
    return streams.bind(chain(simple_commands(shield(text[2:-1]))), None)


def _backquoted(argv: list[str], streams: Streams) -> list[str]:
    """``argv`` with each run of words between active backquotes replaced by one placeholder."""
    out: list[str] = []
    inner: list[str] | None = None
    for word in argv:
        if inner is None and word.startswith("`"):
            inner = []
            word = word[1:]
        if inner is None:
            out.append(word)
            continue
        closed = word.endswith("`")
        inner.append(word[:-1] if closed else word)
        if closed:
            out.append(streams.bind(producer([w for w in inner if w], None), None))
            inner = None
    return out if inner is None else [*out, streams.bind(ANYWHERE, None)]


def chain(cmds: Sequence[SimpleCommand]) -> Producer:
    """What the last pipeline of ``cmds`` printed (a ``cd`` among them: anything)."""
    listed: Producer | None = None
    for n, cmd in enumerate(cmds):
        before = listed if n and cmds[n - 1].piped else None
        if cmd.argv and restore(cmd.argv[0]) == "cd":
            return ANYWHERE
        listed = producer(cmd.argv, before)
    return listed or ANYWHERE


def runs(
    argv: list[str], stream: Producer | None, streams: Streams, cwd: str | None
) -> list[list[str]]:
    """The commands ``argv`` runs on listed files, each file word a placeholder: ``xargs
    CMD`` (the input appended, or put for its ``-I`` string), ``find … -exec CMD {} ;`` and
    ``find … -delete``; ``[argv]`` for any other command."""
    program = posixpath.basename(restore(argv[0])) if argv else ""
    if program == "xargs":
        command, mark = xargs_command(argv[1:])
        ph = streams.bind(stream or ANYWHERE, cwd)
        if mark is None:
            return [[*command, ph]] if command else []
        return [[_put(w, mark, ph) for w in command]]
    if program != "find":
        return [argv]
    ph = streams.bind(producer(argv, None), cwd)
    words = [restore(a) if restore(a) in (";", "+") else a for a in argv[1:]]
    found = [[_put(w, "{}", ph) for w in command] for command, _ in find_actions(words)]
    return found + ([["rm", ph]] if "-delete" in argv else [])


def _put(word: str, mark: str, ph: str) -> str:
    """``word`` with ``mark`` (as written, quoted or not) replaced by the placeholder."""
    return word.replace(mark, ph).replace(shield(f"'{mark}'")[1:-1], ph)


_READ_VALUED = frozenset({"-d", "-p", "-t", "-n", "-N", "-u", "-a"})


def read_loop(argv: list[str], stream: Producer | None, streams: Streams, cwd: str | None) -> (
    list[tuple[str, list[str]]] | None
):  # fmt: skip
    """``while read [-r] VAR; do``: the loop variables and what each stands for (the
    lines of the input piped into the loop; with several variables, any text); None when
    ``argv`` (keywords taken off) is no ``read``."""
    words = [w for w in argv if not re.match(r"^\w+=", w)]
    if words[:1] != ["read"]:
        return None
    names, i = [], 1
    while i < len(words):
        if words[i] in _READ_VALUED:
            i += 1
        elif words[i][:1] != "-":
            names.append(words[i])
        i += 1
    listed = stream if stream is not None and len(names) == 1 else ANYWHERE
    return [(name, [streams.bind(listed, cwd)]) for name in names or ["REPLY"]]


def loop_words(words: list[str], streams: Streams, cwd: str | None) -> list[str]:
    """A ``for`` loop's list with every word replay cannot read (``$FILES``, a substitution
    it could not bind) replaced by a placeholder for any file."""
    return [w if HOLDS.search(w) or not _ACTIVE.search(w) else streams.bind(ANYWHERE, cwd)
            for w in words]  # fmt: skip


def selected(
    cwd: str | None, change: Change, streams: Streams, place: Callable[[str], str | None]
) -> list[Change]:
    """``change`` whose words hold placeholders, as changes that carry a selection (a move
    or copy into a placeholder: what it wrote is unknown, and what a move took away).
    ``place``: the path a literal word names under ``cwd`` (None: none that can be known)."""
    source = change.source
    if source is None:
        return _words(cwd, change, change.path, streams)
    if not HOLDS.search(change.path):
        dest = place(change.path)
        return _words(cwd, replace(change, path=dest), source, streams) if dest else []
    written = replace(change, kind="write", source=None, into=False)
    made = _words(cwd, written, change.path, streams)
    if change.kind == "move" and HOLDS.search(source):
        made += _words(cwd, written, source, streams)
    elif change.kind == "move" and (gone := place(source)) is not None:
        made.append(replace(written, path=gone))
    return made


def _words(cwd: str | None, change: Change, word: str, streams: Streams) -> list[Change]:
    """The changes ``word`` (with a placeholder) names, each with its selection."""
    bound = streams.bound.get(word)
    if bound is not None and bound[1] in (None, cwd):
        listed, _ = bound
        return _listed(cwd, change, listed)
    return [_wild(cwd, change, word)]


def _listed(cwd: str | None, change: Change, listed: Producer) -> list[Change]:
    if listed.anywhere or cwd is None or any(_ACTIVE.search(r) for r in listed.roots):
        return [_set(change, ".", Selection(listed.test, anywhere=True))]
    made = []
    for root in listed.roots:
        path = restore(root) if not is_glob(root) else root
        placed = path if path.startswith(("/", "~")) else posixpath.join(cwd, path)
        selection = Selection(listed.test, printed=restore(root))
        made.append(_set(change, posixpath.normpath(placed), selection, is_glob(root)))
    return made


def _wild(cwd: str | None, change: Change, word: str) -> Change:
    """A word holding a placeholder among other text: any file that fits the text around it
    is perhaps changed (under the folder its literal start names)."""
    text = restore(word)
    start = HOLDS.search(text)
    head = text[: start.start()] if start else text
    folder = posixpath.dirname(head) if "/" in head else ""
    pattern = "".join(".*" if HOLDS.fullmatch(ch) else re.escape(ch) for ch in text[len(folder) :])
    regex = re.compile(pattern.lstrip("/") if folder else pattern, re.DOTALL)

    def test(printed: str, rel: str, content: str | None) -> bool | None:
        return None if regex.fullmatch(rel) else False

    if not folder or cwd is None:
        return _set(change, ".", Selection(test, anywhere=True))
    placed = folder if folder.startswith(("/", "~")) else posixpath.join(cwd, folder)
    return _set(change, posixpath.normpath(placed), Selection(test, printed=folder))


def _set(change: Change, path: str, selection: Selection, glob: bool = False) -> Change:
    """``change`` of the files ``selection`` picks under ``path``."""
    if change.source is not None:
        return replace(change, source=path, select=selection, glob=glob)
    return replace(change, path=path, select=selection, glob=glob)
