"""Secret scrubbing: every text trajforge writes passes through here first.

Each rule's match starts at a literal anchor (``hf_``, ``sk-``, ``-----BEGIN``, ``key``,
``token``, ``://`` ...). One grouped regex pass over the lowercased text finds the anchors;
the combined rule pattern then runs only there, which keeps ordinary code at well over
50 MB/s. Candidates that need a second look (``sk-`` words without digits, ``NAME_KEY =
value`` assignments, URL credentials that are placeholders) are judged before redaction, so
code such as ``MAX_TOKENS=4096`` or ``sort_key = "name"`` comes out unchanged. A secret is
replaced by ``[REDACTED:<kind>]``; :attr:`Scrubber.counts` counts the redactions by kind."""

from __future__ import annotations

import collections
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

_NAME_WORDS = ("password", "passwd", "secret", "token", "pass", "key")


def _word_variants() -> str:
    words = [w for base in _NAME_WORDS for w in (base, base.upper(), base.capitalize())]
    return "|".join(words)


# Each rule: (kind, pattern). The secret is the group named ``<kind>_v`` when the pattern has
# one, else the whole match. Order matters: at one position the first rule that matches wins.
_RULES: tuple[tuple[str, str], ...] = (
    (
        "private_key",
        r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
        r"(?:(?:[A-Za-z0-9+/=:,\s\-]|\\[nr]){0,65536}?-----END[A-Z0-9 ]{0,40}PRIVATE KEY"
        r"(?: BLOCK)?-----|(?:(?:\s|\\[nr])+(?:[A-Za-z0-9+/=]{8,}|[A-Za-z-]+: [^\n\\]*))+)",
    ),
    ("hf_token", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{30,}"),
    ("sk_key", r"(?<![A-Za-z0-9_-])sk-(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    ("aws_access_key_id", r"(?<![A-Z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("github_token", r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_\w{30,})"),
    ("gitlab_token", r"(?<![A-Za-z0-9_])glpat-[A-Za-z0-9_\-]{20,}"),
    ("slack_token", r"(?<![A-Za-z0-9_])xox[baprs]-[A-Za-z0-9\-]{10,}"),
    ("google_api_key", r"(?<![A-Za-z0-9_])AIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])"),
    (
        "aws_secret_key",
        r"(?i:aws_?secret_?access_?key)\\?[\"']?\s*[:=]\s*\\?[\"']?"
        r"(?P<aws_secret_key_v>[A-Za-z0-9/+=]{40})(?![A-Za-z0-9/+=])",
    ),
    (
        "bearer_token",
        r"(?:\b[Bb]earer|\b[Aa]uthorization\\?[\"']?\s*[:=]\s*\\?[\"']?(?:[Bb]asic|[Tt]oken))"
        r"\s+(?P<bearer_token_v>[A-Za-z0-9\-._~+/]{16,}=*)",
    ),
    (
        "url_credentials",
        r"://(?P<url_credentials_v>[^\s:/@\"'<>]{1,256}:[^\s/@\"'<>]{1,256})@",
    ),
    (
        "secret_assignment",
        r"(?:(?<=[_.\-])|(?<![A-Za-z0-9])|(?<=[a-z0-9])(?=[A-Z]))"
        rf"(?:{_word_variants()})(?![A-Za-z0-9])"
        r"\\?[\"']?\s*(?::(?=[\s\"'\\])\s*(?:[A-Za-z_][\w.\[\]| ]{0,40}?=(?!=)\s*)?|:?=>?)"
        r"\s*\\?[\"']?(?=(?P<secret_assignment_v>[^\s\"'\\`,;(){}\[\]<>*]{16,}))",
    ),
)

_PATTERN = re.compile("|".join(f"(?P<{kind}>{pattern})" for kind, pattern in _RULES))
_TOKEN_START = re.compile("|".join(p for k, p in _RULES[:8]))

# Every rule's match starts at one of these literals (compared lowercased). Finding them first
# is what makes scrubbing fast: the combined pattern only runs where an anchor occurs.
_ANCHORS = (
    "-----begin", "hf_", "sk-", "akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "github_pat_", "glpat-", "xox", "aiza", "aws", "bearer", "authorization", "://",
    "key", "token", "secret", "pass",
)  # fmt: skip


_FREQUENT = "tsaphg:-kxb"  # anchor first letters, most frequent in code and logs first


def _anchor_pattern(words: list[str]) -> re.Pattern[str]:
    """Alternation grouped by first character, so the regex engine skips other text fast."""
    groups: dict[str, list[str]] = {}
    for word in sorted(set(words), key=len, reverse=True):
        groups.setdefault(word[0], []).append(re.escape(word[1:]))
    order = sorted(groups, key=lambda c: _FREQUENT.find(c.lower()) % 100)  # common first
    return re.compile("|".join(f"{re.escape(c)}(?:{'|'.join(groups[c])})" for c in order))


_ANCHOR_LOWER = _anchor_pattern(list(_ANCHORS))
_ANCHOR_CASED = _anchor_pattern(
    [v for a in _ANCHORS for v in (a, a.upper(), a.capitalize())] + ["AIza"]
)


def _candidates(s: str) -> list[int]:
    """Positions where a rule may match."""
    low = s.lower()
    if len(low) == len(s):  # lowercasing kept every position (no expanding characters)
        return [m.start() for m in _ANCHOR_LOWER.finditer(low)]
    return [m.start() for m in _ANCHOR_CASED.finditer(s)]


_PLACEHOLDER = re.compile(r"\$\{?\w+\}?|\{\{?\s*[\w.]*\s*\}?\}|%\(\w+\)s|\*+|x+|\.\.\.")
_CODE_REFERENCE = re.compile(  # names, not secrets: no digits, dotted.names, snake_words_2
    r"[A-Za-z_.:\-]+|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"
    r"|[a-z]+\d*(?:[_\-][a-z]+\d*)*(?:[_\-]\d+)?|[A-Z]+\d*(?:_[A-Z]+\d*)*(?:_\d+)?"
)
_FILE_NAME = re.compile(r"\.[a-z]{2,4}$")
_SHORT_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_KEY_MATERIAL = re.compile(r"[A-Za-z0-9+/]{16,}")
_HAS_DIGIT = re.compile(r"\d")
_ENTROPY_MIN = 3.5  # bits per character; assigned values must also be 16+ chars


def shannon_entropy(s: str) -> float:
    """Bits per character of ``s``'s character distribution."""
    if not s:
        return 0.0
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in collections.Counter(s).values())


def _private_key_kind(value: str) -> str | None:
    return "private_key" if _KEY_MATERIAL.search(value) else None  # not an empty template


def _sk_kind(value: str) -> str | None:
    if not _HAS_DIGIT.search(value[3:]):
        return None  # "sk-learn-..." style words, not a key
    return "anthropic_key" if value.startswith("sk-ant-") else "openai_key"


def _bearer_kind(value: str) -> str | None:
    return "bearer_token" if _HAS_DIGIT.search(value) else None


def _url_kind(value: str) -> str | None:
    password = value.partition(":")[2]
    return None if _PLACEHOLDER.fullmatch(password) else "url_credentials"


def _assignment_kind(value: str) -> str | None:
    if value.startswith("eyJ"):  # a JWT
        return "secret_assignment"
    if value[0] in "$%/~." or "://" in value or _CODE_REFERENCE.fullmatch(value):
        return None  # variable reference, path, URL, or an identifier / dotted name
    if _FILE_NAME.search(value):
        return None  # "server.pem", "keys/app.json"
    if len(value) < 32 and _SHORT_HEX.fullmatch(value):
        return None  # short hex: ids and digests, not keys
    if shannon_entropy(value) < _ENTROPY_MIN:
        return None
    return "secret_assignment"


_CHECKS: dict[str, Callable[[str], str | None]] = {
    "private_key": _private_key_kind,
    "sk_key": _sk_kind,
    "bearer_token": _bearer_kind,
    "url_credentials": _url_kind,
    "secret_assignment": _assignment_kind,
}


def _judge(m: re.Match[str], s: str) -> tuple[int, int, str] | None:
    """(start, end, kind) of the secret in a rule's match, or None when it is not one."""
    rule = m.lastgroup or ""
    value_group = f"{rule}_v"
    has_value = value_group in _PATTERN.groupindex
    start, end = m.span(value_group) if has_value else m.span()
    check = _CHECKS.get(rule)
    kind = check(s[start:end]) if check else rule
    if kind is not None and has_value and _TOKEN_START.match(s, start):
        return None  # a known token follows the name: its own rule names it
    if rule == "secret_assignment" and s[end : end + 1] in ("(", "["):
        return None  # a call or subscript: code, not a value
    return None if kind is None else (start, end, kind)


@dataclass
class Scrubber:
    """Redacts secrets from text and nested values, counting redactions by kind."""

    counts: collections.Counter[str] = field(default_factory=collections.Counter)
    """Kind → number of redactions so far."""

    def text(self, s: str) -> str:
        """``s`` with every secret replaced by ``[REDACTED:<kind>]``."""
        if not s:
            return s
        out: list[str] = []
        done = 0
        for pos in _candidates(s):
            if pos < done:
                continue
            m = _PATTERN.match(s, pos)
            found = _judge(m, s) if m else None
            if found is None:
                continue
            start, end, kind = found
            out += [s[done:start], f"[REDACTED:{kind}]"]
            self.counts[kind] += 1
            done = end
        if not out:
            return s
        out.append(s[done:])
        return "".join(out)

    def value(self, obj: Any) -> Any:
        """Scrub every string inside dicts, lists and tuples (keys too); other values as is."""
        if isinstance(obj, str):
            return self.text(obj)
        if isinstance(obj, dict):
            return {self.value(k): self.value(v) for k, v in obj.items()}
        if isinstance(obj, list):
            return [self.value(v) for v in obj]
        if isinstance(obj, tuple):
            return tuple(self.value(v) for v in obj)
        return obj


def scrub_text(s: str) -> str:
    """``s`` with every secret redacted (a throwaway :class:`Scrubber`)."""
    return Scrubber().text(s)
