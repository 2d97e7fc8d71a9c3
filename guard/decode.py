"""Static evaluation of the text a pipeline stage produces: echo, printf, base64 / hex decoding.

Used to see through ``echo ... | base64 -d | sh``, ``printf '\\x72\\x6d' | bash`` and
``bash -c "$(echo ... | xxd -r -p)"``: when every stage before a shell is one of these, the
command text the shell would run is known and is analysed like any other command.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from collections.abc import Sequence

_PRINTF_ESC = re.compile(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|u[0-9a-fA-F]{4}|.)", re.DOTALL)
_SIMPLE_ESC = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "a": "\a", "e": "\x1b", "0": "\0"}
_FORMAT = re.compile(r"%(%|[-+ #0]*\d*(?:\.\d+)?[sbdqc])")


def unescape(text: str) -> str:
    """Expand backslash escapes the way ``printf`` / ``echo -e`` / ``$'...'`` do."""

    def one(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] == "x":
            return chr(int(code[1:], 16))
        if code[0] == "u" and len(code) == 5:
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        return _SIMPLE_ESC.get(code, "\\" + code)

    return _PRINTF_ESC.sub(one, text)


def printf_text(args: Sequence[str]) -> str:
    """Output of ``printf FORMAT ARGS...`` for the %s / %b / %d conversions."""
    if not args:
        return ""
    fmt, rest = unescape(args[0]), list(args[1:])
    out: list[str] = []
    while True:
        pos = 0
        for m in _FORMAT.finditer(fmt):
            out.append(fmt[pos : m.start()])
            pos = m.end()
            spec = m.group(1)
            if spec == "%":
                out.append("%")
                continue
            value = rest.pop(0) if rest else ""
            out.append(unescape(value) if spec.endswith("b") else value)
        out.append(fmt[pos:])
        if not rest or not _FORMAT.search(fmt):
            return "".join(out)


def echo_text(args: Sequence[str]) -> str:
    """Output of ``echo [-n] [-e] ARGS...``."""
    words = list(args)
    newline, escapes = True, False
    while words and re.fullmatch(r"-[neE]+", words[0]):
        flags = words.pop(0)
        newline = newline and "n" not in flags
        escapes = "e" in flags or (escapes and "E" not in flags)
    text = " ".join(words)
    return (unescape(text) if escapes else text) + ("\n" if newline else "")


def b64decode(text: str) -> str | None:
    """Decoded base64 text, or None when it is not base64 of UTF-8 text."""
    raw = "".join(text.split())
    try:
        return base64.b64decode(raw + "=" * (-len(raw) % 4), validate=True).decode()
    except (binascii.Error, ValueError, UnicodeDecodeError):
        try:
            return base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode()
        except (binascii.Error, ValueError, UnicodeDecodeError):
            return None


def hexdecode(text: str) -> str | None:
    """Decoded plain hex (``xxd -r -p``), or None."""
    raw = "".join(text.split())
    try:
        return bytes.fromhex(raw).decode()
    except (ValueError, UnicodeDecodeError):
        return None


def transform(argv: Sequence[str], stdin: str | None) -> str | None:
    """Output of a decoding / producing stage, or None when it is not one we can evaluate."""
    if not argv:
        return None
    prog, args = argv[0].rsplit("/", 1)[-1], list(argv[1:])
    if prog == "echo":
        return echo_text(args)
    if prog == "printf":
        return printf_text(args)
    if prog in ("cat", "tee") and not [a for a in args if a != "-"]:
        return stdin
    if stdin is None:
        return None
    if prog in ("base64", "base32") and {"-d", "--decode", "-D"} & set(args):
        return b64decode(stdin) if prog == "base64" else None
    if prog == "openssl" and args[:1] in (["base64"], ["enc"]) and "-d" in args:
        return b64decode(stdin)
    if prog == "xxd" and "-r" in " ".join(args):
        return hexdecode(stdin)
    if prog == "rev":
        return "\n".join(line[::-1] for line in stdin.rstrip("\n").split("\n")) + "\n"
    if prog == "tr" and args == ["A-Za-z", "N-ZA-Mn-za-m"]:
        return codecs.encode(stdin, "rot13")
    return None
