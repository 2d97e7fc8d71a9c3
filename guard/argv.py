"""What every command handler of the guard shares: the :class:`Sink` it reports to, the
handler type, and the argv helpers (operands, path words, copies and moves).

:mod:`.commands` dispatches argv to handlers here and in :mod:`.remote`, :mod:`.envcmds` and
:mod:`.search`; they all import from this module, never from each other.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Protocol

from trajforge.guard.effects import EffectKind, has_glob


class Sink(Protocol):
    """What command handlers report to: effects, and nested code to analyse."""

    def path(self, word: str) -> str:
        """Canonical form of a path word."""
        ...

    def add(
        self,
        kind: EffectKind,
        target: str,
        detail: str = "",
        tree: bool = False,
        whole: bool = False,
    ) -> None:
        """Record one effect (``whole``: a write replacing the whole file)."""
        ...

    def shell(self, text: str, via: str) -> None:
        """Analyse ``text`` as shell code."""
        ...

    def python(self, code: str, via: str) -> None:
        """Analyse ``code`` as Python."""
        ...

    def argv(self, argv: Sequence[str], via: str) -> None:
        """Analyse ``argv`` as one more command."""
        ...

    def script(self, path: str, via: str) -> bool:
        """Analyse a file the agent wrote earlier in the rollout; False when unknown."""
        ...

    def stdin_text(self) -> str | None:
        """Text on the command's stdin when statically known (heredoc, decoded pipe)."""
        ...

    def own_ref(self, name: str) -> bool:
        """True for a git branch or tag the agent created in this rollout (or this command)."""
        ...


Handler = Callable[[Sink, str, list[str]], None]


def operands(args: Sequence[str], with_value: frozenset[str] = frozenset()) -> list[str]:
    """Non-option words; options listed in ``with_value`` consume the next word."""
    out: list[str] = []
    skip = False
    only = False
    for word in args:
        if skip:
            skip = False
        elif only or not word.startswith("-") or word == "-":
            out.append(word)
        elif word == "--":
            only = True
        elif word in with_value:
            skip = True
    return out


def paths(sink: Sink, kind: EffectKind, words: Sequence[str], tree: bool = False) -> None:
    for word in words:
        if word and word != "-" and not word.startswith("/dev/"):
            path = sink.path(word)
            sink.add(kind, path, tree=tree)
            if kind in ("read", "list") and has_glob(path):
                glob_search(sink, path)


def glob_search(sink: Sink, path: str) -> None:
    """``ls ~/*/*.jsonl``: a glob looks names up under its fixed leading folder."""
    parts = path.split("/")
    fixed = next(i for i, part in enumerate(parts) if has_glob(part))
    root = "/".join(parts[:fixed]) or "/"
    sink.add("search", root, detail="glob " + "/".join(parts[fixed:]))


def copy_move(sink: Sink, prog: str, args: list[str]) -> None:
    words = operands(args, frozenset({"-t", "--target-directory", "-S", "--suffix"}))
    if len(words) < 2:
        return
    *sources, dest = words
    tree = any(re.fullmatch(r"-[a-zA-Z]*[rRa][a-zA-Z]*|--recursive|--archive", a) for a in args)
    for src in sources:
        sink.add("delete" if prog == "mv" else "read", sink.path(src), tree=tree)
    sink.add("write", sink.path(dest), tree=tree, whole=True)
