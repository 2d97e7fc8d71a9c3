"""Loops in a command line: the commands a loop's body runs, one per word of its list.

``for f in a.ts b.ts; do sed -i … "$f"; done`` runs its body once per word; a word the list
holds as a placeholder (:mod:`shell_streams`: ``$(find …)``, ``while read f``) stands for the
files another command listed. An expansion of the variable that replay does not compute
(``${f%.ts}.js``, ``${f/x/y}``) is :data:`~shell_streams.WILD`: any text. A script run by
``sh -c`` / ``bash -c`` is read as a command line of its own, its ``$1`` … the words after it.
"""

from __future__ import annotations

import re
import shlex

from trajforge.reconstruct.shell_globs import QUOTED_BRACES, restore
from trajforge.reconstruct.shell_streams import WILD

_KEYWORDS = frozenset({"do", "then", "else", "elif", "{", "!", "if", "while", "until"})
"""Shell words that open the simple command after them (``do sed -i … "$f"``)."""
_OPEN, _CLOSE = f"{{{QUOTED_BRACES[0]}", f"}}{QUOTED_BRACES[1]}"

Loop = list[tuple[str, list[str]]]
"""The variables one loop header sets, each with the words it takes in turn."""


def unkeyworded(argv: list[str]) -> list[str]:
    """``argv`` without the shell keywords before its program."""
    n = 0
    while n < len(argv) and argv[n] in _KEYWORDS:
        n += 1
    return argv[n:]


def iterations(argv: list[str], loops: list[Loop]) -> list[list[str]]:
    """The commands the loops around ``argv`` run: one per word where ``argv`` uses a loop's
    variable (``$f``, ``${f}``; each word as the list spelled it, so a glob in the list is
    expanded where the files are read), else ``argv`` once."""
    runs = [argv]
    for name, words in (pair for loop in loops for pair in loop):
        var = re.escape(name)
        uses = re.compile(rf"\$(?:{var}\b|[{_OPEN}]{var}[{_CLOSE}])")
        computed = re.compile(rf"\$[{_OPEN}]{var}(?![\w{_CLOSE}])[^{_CLOSE}]*[{_CLOSE}]")
        runs = [[computed.sub(WILD, a) for a in run] for run in runs]
        if any(uses.search(a) for a in argv):
            escaped = [w.replace("\\", "\\\\") for w in words]  # literal in re.sub
            runs = [[uses.sub(w, a) for a in run] for run in runs for w in escaped]
    return runs


_SHELLS = frozenset({"sh", "bash", "zsh", "dash"})
_POSITIONAL = re.compile(r'"\$(?:\{(\d)\}|(\d)|(@|\*))"|\$(?:\{(\d)\}|(\d)|(@|\*))')


def shell_script(program: str, args: list[str]) -> str | None:
    """The script ``sh -c SCRIPT NAME ARGS…`` runs (shielded words), its ``$1`` … ``$@``
    replaced by the words after it (``find … -exec sh -c '… "$1"' _ {} +``); None for any
    other command."""
    at = 0
    while at < len(args) and args[at][:1] == "-" and args[at][1:].isalpha():
        at += 1
        if "c" in args[at - 1][1:]:
            break
    else:
        return None
    if program not in _SHELLS or at >= len(args):
        return None
    script, params = args[at], [_quoted(w) for w in args[at + 1 :]]

    def put(match: re.Match[str]) -> str:
        digit = next((g for g in match.groups() if g and g.isdigit()), None)
        if digit is None:
            return " ".join(params[1:])
        n = int(digit)
        return params[n] if n < len(params) else "''"

    return _POSITIONAL.sub(put, restore(script))


def _quoted(word: str) -> str:
    """A shielded word as shell text that reads back as it (a placeholder as it is)."""
    text = restore(word)
    return text if not text or all(ord(ch) >= 0xE000 for ch in text) else shlex.quote(text)
