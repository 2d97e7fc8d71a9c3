"""Commands that print a list of files, read as a test replay runs on the files it knows.

``find src -name '*.ts' | xargs sed -i …``, ``grep -rl foo src | while read f; …`` and
``sed -i … $(git ls-files)`` change files the command text does not name. The command that
listed them is a :class:`Producer`: the folders it searched (its roots, as written) and a test
that says of one known file whether the producer printed it: True (surely), False (surely not)
or None (perhaps: the test needs what replay does not know, such as a file's age, the
ignore rules ``rg`` and ``git grep`` follow, or a filter after it). ``find`` with ``-name`` /
``-path`` / ``-type f`` / ``-maxdepth`` (and ``!``, ``-o``, parentheses) and ``grep -l`` of a
fixed string are decided; anything else replay cannot read lists perhaps any file.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from trajforge.reconstruct.shell_globs import fnmatch_regex, is_glob, restore
from trajforge.reconstruct.shell_grep import git_producer, grep_producer, searcher_producer
from trajforge.reconstruct.shell_listing import ANYWHERE, Producer, Verdict

_FILTERS = frozenset({"grep", "egrep", "fgrep", "sort", "uniq", "head", "tail", "cat", "tee"})
"""Commands that pass on some of the lines they read, unchanged."""


def producer(argv: Sequence[str], before: Producer | None) -> Producer:
    """What the command ``argv`` (shielded words, program first) printed as file names;
    ``before``: the producer piped into it, if any."""
    program = posixpath.basename(restore(argv[0])) if argv else ""
    args = list(argv[1:])
    if program == "find":
        return find_producer(args)
    if program in ("grep", "egrep", "fgrep"):
        found = grep_producer(args, program)
        if found is not None:
            return found
    if program in ("rg", "ag", "ack"):
        return searcher_producer(args)
    if program == "git":
        return git_producer(args)
    if program == "echo":  # one line: a list only to xargs, perhaps
        return _listed([w for w in args if w[:1] != "-"]).weakened()
    if before is not None and program in _FILTERS and not (program == "cat" and args):
        return before.weakened()
    return ANYWHERE


def _listed(words: list[str]) -> Producer:
    """``echo a.ts b.ts``: exactly the words (each a root, listed itself)."""
    return Producer(tuple(words), lambda p, rel, c: rel == "")


def _positional(args: Sequence[str]) -> list[str]:
    return [a for a in args if a[:1] != "-"]


# find


_GLOBAL = {"-maxdepth": 1, "-mindepth": 1, "-depth": 0, "-xdev": 0, "-mount": 0, "-noleaf": 0,
           "-follow": 0, "-regextype": 1, "-ignore_readdir_race": 0, "-daystart": 0}  # fmt: skip
_ACTIONS = {"-print": 0, "-print0": 0, "-ls": 0, "-delete": 0, "-quit": 0, "-printf": 1,
            "-fprint": 1, "-fprint0": 1, "-fls": 1, "-fprintf": 2}  # fmt: skip
_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})

Item = tuple[str, str, int]
"""(printed path, base name, depth below the root) of a file find may visit."""
Node = Callable[[Item], Verdict]


@dataclass
class _Find:
    """``find``'s expression while it is read."""

    tokens: list[str]
    at: int = 0
    exact: bool = True
    acts: int = 0
    """Actions read so far: one inside a branch of ``-o`` makes what is printed unclear."""
    low: int = 0
    high: int | None = None

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        self.at += 1
        return self.tokens[self.at - 1] if self.at <= len(self.tokens) else ""


def find_producer(args: Sequence[str]) -> Producer:
    """``find ROOTS EXPR``: the files it prints (or runs ``-exec`` / ``-delete`` on)."""
    words = list(args)
    while words and words[0] in ("-H", "-L", "-P"):
        words = words[1:]
    n = next((i for i, w in enumerate(words) if restore(w)[:1] in ("-", "(", ")", "!")), None)
    roots, tokens = (words[:n], words[n:]) if n is not None else (words, [])
    state = _Find([restore(t) for t in tokens])
    try:
        node = _or(state) if state.tokens else _always
    except (ValueError, IndexError):
        return Producer(tuple(roots) or (".",))
    exact = state.exact and not any(is_glob(t) for t in tokens)
    low, high = state.low, state.high

    def test(printed: str, rel: str, content: str | None) -> Verdict:
        depth = rel.count("/") + 1 if rel else 0
        if depth < low or (high is not None and depth > high):
            return False
        verdict = node((printed, posixpath.basename(printed), depth))
        return verdict if exact or verdict is False else None

    return Producer(tuple(roots) or (".",), test)


def _always(item: Item) -> Verdict:
    return True


def _or(state: _Find) -> Node:
    acts = state.acts
    parts = [_and(state)]
    while state.peek() in ("-o", "-or", ","):
        state.exact = state.exact and state.take() != ","
        parts.append(_and(state))
    if len(parts) == 1:
        return parts[0]
    state.exact = state.exact and state.acts == acts

    def either(item: Item) -> Verdict:
        verdicts = [p(item) for p in parts]
        return True if True in verdicts else (None if None in verdicts else False)

    return either


def _and(state: _Find) -> Node:
    parts = [_unary(state)]
    while state.peek() not in (None, "-o", "-or", ",", ")"):
        if state.peek() in ("-a", "-and"):
            state.take()
        parts.append(_unary(state))

    def both(item: Item) -> Verdict:
        verdicts = [p(item) for p in parts]
        return False if False in verdicts else (None if None in verdicts else True)

    return parts[0] if len(parts) == 1 else both


def _unary(state: _Find) -> Node:
    token = state.take()
    if token in ("!", "-not"):
        inner = _unary(state)
        return lambda item: None if (v := inner(item)) is None else not v
    if token == "(":
        inner = _or(state)
        if state.take() != ")":
            raise ValueError("unbalanced parentheses")
        return inner
    return _primary(state, token)


def _primary(state: _Find, token: str) -> Node:
    if token in ("-name", "-iname", "-path", "-wholename", "-ipath", "-iwholename"):
        return _pattern(state, token, state.take())
    if token == "-type":
        kind = state.take()
        return _always if kind == "f" else lambda item: None
    if token in ("-maxdepth", "-mindepth"):
        value = int(state.take())
        state.high, state.low = (value, state.low) if token == "-maxdepth" else (state.high, value)
        return _always
    if token in _GLOBAL:
        state.at += _GLOBAL[token]
        return _always
    if token in _ACTIONS or token in _EXEC:
        state.acts += 1
        state.at += _ACTIONS.get(token, 0)
        while token in _EXEC and state.peek() not in (None, ";", "+"):
            state.take()
        state.at += token in _EXEC and state.peek() is not None
        return _always
    if token in ("-true", "-false"):
        return lambda item: token == "-true"
    if token == "-prune":
        state.exact = False
        return _always
    if not token.startswith("-"):
        raise ValueError(f"not a primary: {token}")
    if state.peek() is not None and state.peek()[:1] not in ("-", "(", ")", "!"):  # type: ignore[index]
        state.take()  # -mtime -1, -newer f, -size +1k: a value replay cannot test
    return lambda item: None


def _pattern(state: _Find, token: str, pattern: str) -> Node:
    regex = fnmatch_regex(pattern)
    if regex is None:
        state.exact = False
        regex = fnmatch_regex(pattern, loose=True)
    assert regex is not None
    if token.startswith("-i"):
        regex = re.compile(regex.pattern, regex.flags | re.IGNORECASE)
        state.exact = state.exact and pattern.isascii()
    whole = token not in ("-name", "-iname")
    return lambda item: bool(regex.fullmatch(item[0] if whole else item[1]))
