"""A sed script of ``s`` commands: the content ``sed -i`` writes, computed line by line as sed
computes it, as GNU or BSD sed (``dialect``) reads the script; :mod:`sed_call` says which.

The script: ``s/RE/REPLACEMENT/FLAGS`` commands (any ASCII delimiter that is not a letter,
digit, blank, backslash or ``&``), separated by ``;`` or newlines, with ``#`` comment lines;
flags ``g``, a number, ``I``/``i``. RE is a BRE, or an ERE under ``-E``/``-r``, within the
subset of :mod:`sed_regex`; the replacement holds ``&``, ``\\1``..``\\9``, escaped punctuation
and, in GNU sed, ``\\n`` and ``\\t``. Everything else (addresses, other commands, the
``p``/``w``/``e``/``m`` flags, ``\\L``/``\\U``, ``\\0``, an empty RE) makes the script
unknown. So do the places where the two seds may differ: an escaped delimiter that is special
in a regular expression, a bracket expression holding the delimiter, a number with ``g`` or
an RE that can match nothing repeated (BSD), a last line without a newline (BSD: macOS sed
may add it).

Each line is edited as GNU sed edits it (an empty match right after a match is skipped); an RE
that needs a newline matches no line, whatever else it holds.
Text beyond ASCII is edited twice, over characters (a UTF-8 locale) and over bytes (the C
locale, where ``.`` is one byte), and is known when both agree; an RE with a class, the ``I``
flag or repeated empty matches is applied to ASCII text only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from trajforge.reconstruct.sed_regex import Dialect, Unsupported, translate

_SPECIAL = frozenset(".[]*^$\\+?(){}|")
"""Characters an escaped delimiter may not be: their escape means something in some RE."""


@dataclass(frozen=True)
class Substitution:
    """One ``s`` command."""

    regex: re.Pattern[str]
    replacement: tuple[str | int, ...]
    """Literal text, or the number of a group (0: the whole match, ``&``)."""
    occurrence: int = 1
    every: bool = False
    ascii_only: bool = False
    """Applied only to ASCII text (its matches may depend on the locale otherwise)."""

    def apply(self, line: str) -> str:
        """``line`` with the command applied, as GNU sed does: an empty match right after the
        previous match is no match."""
        out: list[str] = []
        last = pos = count = 0
        previous = -1
        while pos <= len(line):
            match = self.regex.search(line, pos)
            if match is None:
                break
            start, end = match.span()
            if start == end == previous:
                pos = start + 1
                continue
            count += 1
            if count >= self.occurrence:
                out += [line[last:start], *_expanded(self.replacement, match)]
                last = end
                if not self.every:
                    break
            previous = end
            pos = end if end > start else end + 1
        out.append(line[last:])
        return "".join(out)


def _expanded(replacement: tuple[str | int, ...], match: re.Match[str]) -> list[str]:
    return [p if isinstance(p, str) else match.group(p) or "" for p in replacement]


@dataclass(frozen=True)
class Program:
    """A script as one sed reads it."""

    dialect: Dialect
    commands: tuple[Substitution, ...]
    """The commands over characters (sed in a UTF-8 locale)."""
    bytewise: tuple[Substitution, ...] | None = None
    """The commands over UTF-8 bytes read as Latin-1 (sed in the C locale, where ``.`` is
    one byte); None when the script is ASCII, so the same commands."""

    def apply(self, text: str) -> str | None:
        """The file's new content; None when it cannot be told (see the module). Text that
        is not ASCII is edited in both locales and known when they agree."""
        if not text:
            return text
        if self.dialect == "bsd" and not text.endswith("\n"):
            return None
        chars = _run(self.commands, text)
        if text.isascii() and self.bytewise is None:
            return chars
        if not text.isascii() and any(c.ascii_only for c in self.commands):
            return None
        try:
            raw = text.encode("utf-8").decode("latin-1")
            done = _run(self.bytewise or self.commands, raw).encode("latin-1").decode("utf-8")
        except UnicodeError:
            return None
        return chars if chars == done else None


def _run(commands: tuple[Substitution, ...], text: str) -> str:
    lines = text.split("\n")
    ends = text.endswith("\n")
    if ends:
        lines.pop()
    done = []
    for line in lines:
        for command in commands:
            line = command.apply(line)
        done.append(line)
    return "\n".join(done) + ("\n" if ends else "")


@dataclass(frozen=True)
class SedScript:
    """A script as every plausible sed read it: its result is known when all agree."""

    readings: tuple[Program, ...]

    def apply(self, text: str) -> str | None:
        results = {program.apply(text) for program in self.readings}
        return results.pop() if len(results) == 1 else None


def parse(script: str, extended: bool, dialect: Dialect) -> Program | None:
    """``script`` as ``dialect`` sed reads it; None unless it is only ``s`` commands within
    the subset."""
    if re.match(r"#n(\n|$)", script):
        return None  # the first line `#n` is -n
    commands = _commands(script, extended, dialect)
    if commands is None or script.isascii():
        return Program(dialect, commands) if commands is not None else None
    try:
        raw = script.encode("utf-8").decode("latin-1")
    except UnicodeError:
        return None
    bytewise = _commands(raw, extended, dialect)
    return Program(dialect, commands, bytewise) if bytewise is not None else None


def _commands(script: str, extended: bool, dialect: Dialect) -> tuple[Substitution, ...] | None:
    commands = []
    i = 0
    try:
        while i < len(script):
            ch = script[i]
            if ch in " \t\n;":
                i += 1
            elif ch == "#":
                end = script.find("\n", i)
                i = len(script) if end < 0 else end
            elif ch == "s":
                command, i = _substitution(script, i + 1, extended, dialect)
                commands.append(command)
            else:
                return None
    except (ValueError, IndexError):  # Unsupported, or a script cut short
        return None
    return tuple(commands)


def _substitution(
    script: str, i: int, extended: bool, dialect: Dialect
) -> tuple[Substitution, int]:
    delim = script[i]
    if delim.isalnum() or delim.isspace() or delim in "\\&" or not delim.isascii():
        raise Unsupported("delimiter")
    regex, i = _regex_part(script, i + 1, delim)
    replacement, i = _replacement(script, i, delim, dialect)
    every, occurrence, icase, i = _flags(script, i)
    if regex and _needs_newline(regex, extended):
        # no line holds a newline: it matches nothing, whatever the rest of it means
        return Substitution(_NOTHING, (), occurrence, every), i
    translated = translate(regex, extended, dialect) if regex else None
    if translated is None:
        raise Unsupported("regular expression")
    if any(isinstance(p, int) and p > translated.groups for p in replacement):
        raise Unsupported("reference to a missing group")
    if occurrence > 1 and every and dialect == "bsd":
        raise Unsupported("number and g")
    flags = re.DOTALL | (re.IGNORECASE if icase else 0)
    compiled = re.compile(translated.pattern, flags)
    repeated_empty = (every or occurrence > 1) and compiled.fullmatch("") is not None
    if repeated_empty and dialect == "bsd":
        raise Unsupported("repeated empty matches")
    # classes and case beyond ASCII follow the locale; GNU steps over a byte after an empty match
    sensitive = translated.ascii_only or icase or repeated_empty
    return Substitution(compiled, replacement, occurrence, every, sensitive), i


_NOTHING = re.compile(r"(?!)")
"""A regular expression that matches nothing."""


def _needs_newline(regex: str, extended: bool) -> bool:
    """Whether every match of ``regex`` holds a newline: a ``\\n`` outside bracket expressions
    and groups, not quantified, in an RE without alternatives. Each line is edited apart
    (no ``N``), so such an RE matches nothing (``s/addChild(new Spacer(1));\\n\\t\\t…/…/``
    in BSD sed, whose ``\\t`` is not a tab, changes nothing either way)."""
    if "|" in regex:
        return False
    quantifiers = "*?+{" if extended else "*"
    i = depth = 0
    while i < len(regex):
        ch, nxt = regex[i], regex[i + 1 : i + 2]
        if ch == "[":
            i = _bracket_end(regex, i)
            continue
        if ch == "\\":
            follows = regex[i + 2 : i + 3]
            quantified = follows in quantifiers or regex[i + 2 : i + 4] in ("\\{", "\\?", "\\+")
            if nxt == "n" and depth == 0 and not quantified:
                return True
            depth += {"(": 1, ")": -1}.get(nxt, 0) if not extended else 0
            i += 2
            continue
        depth += {"(": 1, ")": -1}.get(ch, 0) if extended else 0
        i += 1
    return False


def _regex_part(script: str, i: int, delim: str) -> tuple[str, int]:
    """The RE up to the closing delimiter (escaped delimiters made plain); the index after."""
    out: list[str] = []
    while script[i] != delim:
        ch = script[i]
        if ch == "\n":
            raise Unsupported("newline in RE")
        if ch == "\\":
            nxt = script[i + 1]
            if nxt == delim and delim in _SPECIAL:
                raise Unsupported("escaped special delimiter")
            out.append(nxt if nxt == delim else ch + nxt)
            i += 2
        elif ch == "[":
            end = _bracket_end(script, i)
            if delim in script[i:end]:
                raise Unsupported("delimiter in a bracket expression")
            out.append(script[i:end])
            i = end
        else:
            out.append(ch)
            i += 1
    return "".join(out), i + 1


def _bracket_end(script: str, i: int) -> int:
    """The index after the bracket expression starting at ``i``."""
    j = i + 1
    j += script[j] == "^"
    j += script[j] == "]"
    while script[j] != "]":
        if script[j] == "\n":
            raise Unsupported("newline in a bracket expression")
        if script[j] == "[" and script[j + 1] in ":.=":
            j = script.index(script[j + 1] + "]", j + 2) + 2
        else:
            j += 1
    return j + 1


def _replacement(
    script: str, i: int, delim: str, dialect: Dialect
) -> tuple[tuple[str | int, ...], int]:
    parts: list[str | int] = []
    while script[i] != delim:
        ch = script[i]
        if ch == "\n":
            raise Unsupported("newline in replacement")
        if ch == "&":
            parts.append(0)
        elif ch == "\\":
            i += 1
            parts.append(_replacement_escape(script[i], delim, dialect))
        else:
            parts.append(ch)
        i += 1
    return tuple(parts), i + 1


def _replacement_escape(nxt: str, delim: str, dialect: Dialect) -> str | int:
    if nxt == delim or nxt in "&\\":
        return nxt
    if nxt in "123456789":
        return int(nxt)
    if dialect == "gnu" and nxt in "nt":
        return "\n" if nxt == "n" else "\t"
    if nxt.isalnum() or nxt.isspace():
        raise Unsupported(f"replacement escape \\{nxt}")
    return nxt


def _flags(script: str, i: int) -> tuple[bool, int, bool, int]:
    """(g, occurrence, I, index of the end of the command)."""
    every = icase = False
    number = ""
    while i < len(script) and script[i] not in ";\n":
        ch = script[i]
        if ch == "g" and not every:
            every = True
        elif ch in "123456789" and not number:
            end = i
            while end < len(script) and script[end] in "0123456789":
                end += 1
            number, i = script[i:end], end - 1
        elif ch in "Ii" and not icase:
            icase = True
        elif ch in " \t":
            rest = script[i:].lstrip(" \t")
            if rest[:1] not in ("", ";", "\n"):
                raise Unsupported("text after the flags")
            return every, int(number or 1), icase, len(script) - len(rest)
        else:
            raise Unsupported(f"flag {ch!r}")
        i += 1
    return every, int(number or 1), icase, i
