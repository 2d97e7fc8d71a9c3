"""Shell words that bash would expand as globs, and their expansion over known paths.

The shell lexer removes quotes, after which ``'*.ts'`` (a literal name) and ``*.ts`` (a glob)
are the same word. :func:`shield` first swaps every special character the shell takes
literally (quoted or backslash-escaped ``* ? [ ] $ \\```) for a private stand-in, so after
lexing an active ``*`` is a glob and an active ``$`` an expansion, and a quoted or escaped
``(``, ``;`` or ``|`` (``find \\( … \\) -exec … \\;``) is a word, not an operator;
:func:`restore` gives the literal text back.

Patterns are matched as bash matches them without ``globstar``: ``*`` and ``?`` never cross a
``/`` (``**`` is ``*``), a name starting with ``.`` is matched only by a literal ``.``, and a
bracket holds characters and digit ranges (``[ab]``, ``[!x]``, ``[0-9]``); letter ranges and
classes, whose meaning follows the locale, are left out (None: not a pattern replay can
expand).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping

from trajforge.reconstruct.shell import HEREDOC, strip_comments

_STAND_IN = {ch: chr(0xE000 + n) for n, ch in enumerate("*?[]$`{}();<>|&")}
QUOTED_BRACES = (_STAND_IN["{"], _STAND_IN["}"])
"""``{`` and ``}`` as :func:`shield` writes them inside quotes (``"${f}"``)."""
_RESTORE = str.maketrans({v: k for k, v in _STAND_IN.items()})
_GLOB = re.compile(r"[*?\[]")
_DIGITS = "0123456789"
_EXPANDING = re.compile(r"[$`{}]")
"""Active characters that make a word unknowable: expansions and brace lists."""


def shield(command: str) -> str:
    """``command`` (here-documents and comments taken out, as the lexer does) with the special
    characters the shell takes literally swapped for stand-ins. Inside double quotes ``\\$``
    and ``\\``` become the literal character, as bash reads them (``\\<newline>``: nothing)."""
    text = HEREDOC.sub(lambda m: f" {m.group(3)}", strip_comments(command))
    out: list[str] = []
    quote, i = "", 0
    while i < len(text):
        ch, nxt = text[i], text[i + 1 : i + 2]
        if ch == "\\" and quote != "'" and nxt:
            if quote and nxt == "\n":
                i += 2
                continue
            kept = "" if quote and nxt in "$`" else "\\"
            out.append(kept + _STAND_IN.get(nxt, nxt))
            i += 2
            continue
        if quote and ch == quote:
            quote = ""
        elif not quote and ch in "'\"":
            quote = ch
        elif quote == "'" or (quote and ch not in "$`"):
            ch = _STAND_IN.get(ch, ch)
        out.append(ch)
        i += 1
    return "".join(out)


def restore(word: str) -> str:
    """The literal text of a shielded word."""
    return word.translate(_RESTORE)


def is_glob(word: str) -> bool:
    """A shielded word bash expands as a pattern (and nothing else: no variable, no brace
    list, no quoted special character in it)."""
    return bool(_GLOB.search(word)) and not _EXPANDING.search(word) and restore(word) == word


def is_literal(word: str) -> bool:
    """A shielded word bash passes as it is written (no active expansion or pattern)."""
    return not _GLOB.search(word) and not _EXPANDING.search(word)


def compile_pattern(pattern: str, loose: bool = False) -> re.Pattern[str] | None:
    """A path pattern (``/``-separated) as a regular expression for ``fullmatch``; None
    when it holds something replay does not expand (``loose``: such a part matches any one
    character, so the expression matches at least what bash's would)."""
    parts = []
    for segment in pattern.split("/"):
        part = _segment(segment, loose)
        if part is None:
            return None
        parts.append(part)
    return re.compile("/".join(parts))


def expand(pattern: str, paths: Iterable[str], loose: bool = False) -> list[str] | None:
    """The paths, and folders of paths, that ``pattern`` matches, sorted; None when the
    pattern cannot be expanded (``loose``: a superset of the matches instead)."""
    regex = compile_pattern(pattern, loose)
    if regex is None:
        return None
    depth = pattern.count("/") + 1
    found = set()
    for path in paths:
        parts = path.split("/")
        if len(parts) >= depth:
            candidate = "/".join(parts[:depth])
            if regex.fullmatch(candidate):
                found.add(candidate)
    return sorted(found)


def fnmatch_regex(pattern: str, loose: bool = False) -> re.Pattern[str] | None:
    """``find``'s reading of a pattern (``-name``, ``-path``): fnmatch without special
    slashes or dots, so ``*`` crosses ``/`` and matches a leading ``.``; None when it holds
    what replay does not expand (``loose``: such a part matches any one character)."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 1
        elif ch in "*?":
            out.append(".*" if ch == "*" else ".")
        elif ch == "[":
            end = _bracket_end(pattern, i)
            plain = end is not None and _plain(pattern[i + 1 : end])
            if end is not None and not plain and not loose:
                return None
            out.append(_bracket(pattern[i + 1 : end]).replace("^/", "^") if plain and end else ".")
            i = end if end is not None else i
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out), re.DOTALL)


_SEQUENCE = re.compile(
    r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?|([a-zA-Z])\.\.([a-zA-Z])(?:\.\.(-?\d+))?"
)
BRACE_LIMIT = 512
"""Most words one brace expansion may make; a larger one is left unexpanded (no file)."""


def braces(word: str) -> list[str]:
    """Bash's brace expansion of a shielded word: ``src/{a,b}.ts`` → ``src/a.ts src/b.ts``,
    ``f{,.bak}``, ``{1..3}``, nested lists; ``${x}``, ``{}`` and ``{a}`` are no lists. Quoted
    braces are stand-ins, so never expanded. More than :data:`BRACE_LIMIT` words: ``[word]``."""
    found = _brace(word)
    if found is None:
        return [word]
    prefix, items, suffix = found
    words = [w for item in items for w in braces(prefix + item + suffix)]
    return words if len(words) <= BRACE_LIMIT else [word]


def _brace(word: str) -> tuple[str, list[str], str] | None:
    """(text before, the list's items, text after) of the first brace list in ``word``."""
    start = 0
    while (open_at := word.find("{", start)) >= 0:
        close, commas = _brace_close(word, open_at)
        if close is None:
            return None
        if open_at > 0 and word[open_at - 1] == "$":  # ${x}: a parameter, not a list
            start = close + 1
            continue
        body = word[open_at + 1 : close]
        items = _split_at(body, commas, open_at + 1) if commas else _sequence(body)
        if items is not None:
            return word[:open_at], items, word[close + 1 :]
        start = open_at + 1
    return None


def _brace_close(word: str, open_at: int) -> tuple[int | None, list[int]]:
    """Index of the ``}`` closing the ``{`` at ``open_at``, and its top-level commas."""
    depth, commas = 0, list[int]()
    for i in range(open_at, len(word)):
        if word[i] == "{":
            depth += 1
        elif word[i] == "}":
            depth -= 1
            if depth == 0:
                return i, commas
        elif word[i] == "," and depth == 1:
            commas.append(i)
    return None, commas


def _split_at(body: str, commas: list[int], offset: int) -> list[str]:
    bounds = [offset - 1, *commas, offset + len(body)]
    return [body[a - offset + 1 : b - offset] for a, b in itertools.pairwise(bounds)]


def _sequence(body: str) -> list[str] | None:
    """``1..3``, ``01..10``, ``a..e``, ``1..9..2``: the words of a sequence expression."""
    match = _SEQUENCE.fullmatch(body)
    if match is None:
        return None
    first, last, step, low, high, letter_step = match.groups()
    if low is not None:
        by = abs(int(letter_step or 1)) or 1
        a, b = ord(low), ord(high)
        return [chr(c) for c in range(a, b + (1 if b >= a else -1), by if b >= a else -by)]
    a, b, by = int(first), int(last), abs(int(step or 1)) or 1
    if abs(b - a) // by >= BRACE_LIMIT:
        return None
    padded = any(len(n.lstrip("-")) > 1 and n.lstrip("-")[0] == "0" for n in (first, last))
    width = max(len(first), len(last)) if padded else 0
    numbers = range(a, b + (1 if b >= a else -1), by if b >= a else -by)
    return [f"{n:0{width}d}" for n in numbers]


def unseen(globbed: Iterable[tuple[int, str, bool]], firsts: Mapping[str, int]) -> dict[str, int]:
    """Files replay first learned of after a glob that could have matched them: path → the
    earliest such glob's event index. ``globbed``: (event index, pattern, folders too: a
    path under a matching folder counts); ``firsts``: path → the event it was first seen at
    (files that existed by then: read, edited or changed by a command). What was read after
    the glob need not be what was there before it (untracked files, or no repository)."""
    found: dict[str, int] = {}
    for index, pattern, tree in globbed:
        regex = compile_pattern(pattern, loose=True)
        depth = pattern.count("/") + 1
        for path, first in firsts.items():
            parts = path.split("/")
            if regex is None or first <= index or len(parts) < depth:
                continue
            if (len(parts) == depth or tree) and regex.fullmatch("/".join(parts[:depth])):
                found[path] = min(index, found.get(path, index))
    return found


def _segment(segment: str, loose: bool = False) -> str | None:
    if not _GLOB.search(segment):
        return None if "]" in segment and not loose else re.escape(segment)
    out = [] if segment.startswith(".") else [r"(?!\.)"]
    i = 0
    while i < len(segment):
        ch = segment[i]
        if ch == "*":
            while segment[i + 1 : i + 2] == "*":
                i += 1
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = _bracket_end(segment, i)
            plain = end is not None and _plain(segment[i + 1 : end])
            if not plain and not loose:
                return None
            out.append(_bracket(segment[i + 1 : end]) if plain and end else "[^/]")
            i = end if end is not None else i
        elif ch == "]" and not loose:
            return None
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def _bracket_end(segment: str, start: int) -> int | None:
    """Index of the ``]`` closing the bracket at ``start`` (None: bash reads a literal ``[``)."""
    i = start + 1
    i += segment[i : i + 1] in ("!", "^")
    i += segment[i : i + 1] == "]"
    end = segment.find("]", i)
    return end if end >= 0 else None


def _plain(body: str) -> bool:
    """A bracket's content that replay reads the same in every locale: characters and digit
    ranges, no class, no letter range, no backslash."""
    body = body[1:] if body[:1] in ("!", "^") else body
    if "[" in body or "\\" in body:
        return False
    for at in range(1, len(body) - 1):
        low, high = body[at - 1], body[at + 1]
        if body[at] == "-" and not (low in _DIGITS and high in _DIGITS and low <= high):
            return False
    return True


def _bracket(body: str) -> str:
    negated = body[:1] in ("!", "^")
    body = body[1:] if negated else body
    items, i = [], 0
    while i < len(body):
        if body[i + 1 : i + 2] == "-" and i + 2 < len(body):
            items.append(f"{body[i]}-{body[i + 2]}")
            i += 3
        else:
            items.append(re.escape(body[i]))
            i += 1
    return "[" + ("^/" if negated else "") + "".join(items) + "]"
