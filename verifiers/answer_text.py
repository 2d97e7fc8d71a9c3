"""Tokens of free-text answers: numbers with units, dates, list items, markdown, clauses.

The pieces :mod:`trajforge.verifiers.answer` builds its rules from. Everything here is pure
string work (no I/O); ``docs/qa.md`` states the rules in prose.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass

CURRENCY = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
UNIT_WORDS = {
    "usd": "USD", "dollar": "USD", "dollars": "USD", "eur": "EUR", "euro": "EUR",
    "euros": "EUR", "gbp": "GBP", "jpy": "JPY", "yen": "JPY", "%": "%", "percent": "%",
    "pct": "%", "ms": "ms", "s": "s", "sec": "s", "secs": "s", "seconds": "s", "second": "s",
    "min": "min", "mins": "min", "minutes": "min", "minute": "min", "h": "h", "hours": "h",
    "hour": "h", "days": "d", "day": "d", "kb": "KB", "mb": "MB", "gb": "GB", "kg": "kg",
    "g": "g", "km": "km", "m": "m",
}  # fmt: skip
_UNIT_ALT = "|".join(sorted((re.escape(u) for u in UNIT_WORDS if u != "%"), key=len, reverse=True))
NUMBER = re.compile(
    r"(?<![\w.\-/])(?P<sign>[-+−])?(?P<cur>[$€£¥])?\s?(?P<sign2>[-+−])?"
    r"(?P<num>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?P<exp>[eE][-+]?\d+)?"
    rf"(?:\s?(?P<unit>%|(?:{_UNIT_ALT})(?![\w])))?(?![\w.]\w|\w)",
    re.IGNORECASE,
)
RANGE_DASH = re.compile(r"(?<=\d)[-–](?=[$€£¥]?\d)")
MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec"
_MON = rf"(?:{MONTHS})[a-z]*\.?"
DATE_PATTERNS = (
    re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?\b"),
    re.compile(r"\b\d{4}/\d{1,2}/\d{1,2}\b"),
    re.compile(r"\b\d{4}-\d{2}\b(?!-)"),
    re.compile(rf"\b{_MON}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b", re.IGNORECASE),
    re.compile(rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MON}\s+\d{{4}}\b", re.IGNORECASE),
    re.compile(rf"\b{_MON}\s+\d{{4}}\b", re.IGNORECASE),
    re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b"),
)
LIST_MARKER = re.compile(r"(?m)^[ \t]*(?:(?P<n>\d{1,3})[.)]|[-*•+])[ \t]+(?=\S)")
INLINE_RANK = re.compile(r"(?:^|(?<=[\s,;]))(?P<n>\d{1,2})[.)][ \t]+(?=[^\d\s])")
COPULA = re.compile(
    r"(?:\b(?:is|are|was|were|equals?|totaled|totalled|comes to|came to|amounts to"
    r"|stands at)\b|:|=|→)",
    re.IGNORECASE,
)
CONTINUATION = re.compile(
    r"(?:,\s*|\s+)(?:which|that|who|where|while|since|because|followed|with|accounting|"
    r"representing|compared|ahead|making|giving|based|from|across|over|out of|per|for|in|"
    r"on|at|among|between|during)\b|\s+\(|\s+[—–]\s+|\s+-\s+|;",
    re.IGNORECASE,
)
HEDGES = re.compile(
    r"^(?:approximately|approx\.?|about|around|roughly|exactly|just|only|~|≈|nearly|almost)\s*",
    re.IGNORECASE,
)
NON_VALUE_START = re.compile(
    r"^(?:in|on|at|based|because|from|not|that|this|it|to|by|as|when|where|stored|saved|"
    r"located|shown|below|above|here|there|computed|calculated|the following|as follows)\b",
    re.IGNORECASE,
)
SEPARATOR_ONLY = re.compile(
    r"^(?:[\s,;/|&+]|\bor\b|\band\b|\bto\b|\bvs\.?|-|–|—|\(|\)|\[|\]|approximately|about|"
    r"around|roughly|maybe|perhaps|possibly|either|\bnor\b|\bmaybe\b|\n|\*|`)*$",
    re.IGNORECASE,
)
BOOLS = {"yes": True, "true": True, "y": True, "no": False, "false": False, "n": False}


@dataclass(frozen=True)
class Num:
    """One number found in text."""

    value: float
    unit: str | None
    decimals: int
    sig: int
    text: str
    start: int
    end: int


def strip_markdown(text: str) -> str:
    """Text without emphasis, code marks, headings, quotes and ``\\boxed{}`` wrappers."""
    text = unicodedata.normalize("NFKC", text).replace("\r\n", "\n")
    text = re.sub(r"```[a-zA-Z0-9_-]*\n?", "", text)
    text = re.sub(r"\\boxed\{([^{}]*)\}", r"\1", text)
    text = re.sub(r"(\*\*|__|`)", "", text)
    text = re.sub(r"(?m)^\s{0,3}(?:#{1,6}|>)\s*", "", text)
    return text.strip()


def mask_dates(text: str) -> str:
    """``text`` with every date or time replaced by ``#`` characters (same length)."""
    for pattern in DATE_PATTERNS:
        text = pattern.sub(lambda m: "#" * len(m.group(0)), text)
    return text


def rank_markers(text: str) -> list[re.Match[str]]:
    """Numbered-list markers of a ranked list: two or more ``N.``/``N)`` lines, or inline
    markers starting ``1. … 2. …``; a lone ``5. Then`` is a sentence, not a list."""
    lines = [m for m in LIST_MARKER.finditer(text) if m.group("n")]
    if len(lines) >= 2:
        return lines
    inline = list(INLINE_RANK.finditer(text))
    if len(inline) >= 2 and [m.group("n") for m in inline[:2]] == ["1", "2"]:
        return inline
    return []


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def mask_markers(text: str) -> str:
    """``text`` with list markers (ranks ``1.``/``2)``, bullets ``-``/``*``) blanked out."""
    spans = [m.span() for m in rank_markers(text)]
    spans += [m.span() for m in LIST_MARKER.finditer(text) if not m.group("n")]
    return _blank(text, spans)


def find_numbers(text: str) -> list[Num]:
    """Numbers in ``text``, skipping dates, times, list markers and identifiers (C-102, Q3)."""
    masked = RANGE_DASH.sub(" ", mask_markers(mask_dates(text)))
    found = []
    for m in NUMBER.finditer(masked):
        raw = m.group("num")
        digits = raw.replace(",", "")
        sign = -1.0 if (m.group("sign") or m.group("sign2")) in ("-", "−") else 1.0
        value = sign * float(digits + (m.group("exp") or ""))
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        sig = len(digits.replace(".", "").lstrip("0")) or 1
        unit = _unit(m.group("cur"), m.group("unit"))
        found.append(Num(value, unit, decimals, sig, m.group(0).strip(), m.start(), m.end()))
    return found


def _unit(currency: str | None, word: str | None) -> str | None:
    if word:
        return UNIT_WORDS.get(word.lower(), word.lower())
    return CURRENCY.get(currency) if currency else None


def number_runs(text: str, nums: list[Num]) -> list[list[Num]]:
    """Groups of numbers separated only by separators and hedges ("136.5, 137 or 138")."""
    runs: list[list[Num]] = []
    for num in nums:
        if runs and SEPARATOR_ONLY.match(text[runs[-1][-1].end : num.start]):
            runs[-1].append(num)
        else:
            runs.append([num])
    return runs


MONTH_NUMBER = {
    name: n
    for n, names in enumerate(
        (("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"),
         ("may",), ("jun", "june"), ("jul", "july"), ("aug", "august"),
         ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
         ("dec", "december")),
        1,
    )
    for name in names
}  # fmt: skip
DATE_SHAPES = (
    (re.compile(r"(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})(?:[T ][\d:.]+)?"), True),
    (re.compile(r"(?P<y>\d{4})/(?P<m>\d{1,2})/(?P<d>\d{1,2})"), True),
    (re.compile(r"(?P<mn>[a-z]+)\.? (?P<d>\d{1,2}) (?P<y>\d{4})"), True),
    (re.compile(r"(?P<d>\d{1,2}) (?P<mn>[a-z]+)\.? (?P<y>\d{4})"), True),
    (re.compile(r"(?P<y>\d{4})-(?P<m>\d{2})"), False),
    (re.compile(r"(?P<mn>[a-z]+)\.? (?P<y>\d{4})"), False),
)


def parse_date(text: str) -> dt.date | tuple[int, int] | None:
    """A date (or a ``(year, month)`` pair) written in one of the common forms."""
    if len(text) > 40 or not re.search(r"\d{4}", text):
        return None
    text = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", text.strip().rstrip(".")).replace(",", "")
    text = re.sub(r"\s+", " ", text).lower()
    for shape, has_day in DATE_SHAPES:
        m = shape.fullmatch(text)
        if m is None:
            continue
        parts = m.groupdict()
        month = MONTH_NUMBER.get(parts["mn"], 0) if "mn" in parts else int(parts["m"])
        try:
            if has_day:
                return dt.date(int(parts["y"]), month, int(parts["d"]))
            return (int(parts["y"]), month) if 1 <= month <= 12 else None
        except ValueError:
            return None
    return None


def normalize_text(text: str) -> str:
    """Case-folded, whitespace-collapsed text without surrounding quotes and punctuation."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"\s+", " ", text).strip()
    return text.strip(" \t\"'`*_.,;:!?()[]{}")


def split_items(text: str) -> tuple[list[str], bool]:
    """List items of an answer and whether the list is ranked (numbered items).

    Newlines and semicolons separate items first; otherwise commas (not thousands
    separators), `` and `` and `` or ``. A numbered list (``1. a``/``1) a``) is ordered.
    """
    text = text.strip()
    ordered = bool(rank_markers(text))
    body = mask_markers(text)
    if "\n" in body.strip() or ";" in body:
        parts = re.split(r"\s*[\n;]\s*", body)
    else:
        parts = re.split(r"(?<!\d),\s*|,(?!\d{3}(?:\D|$))\s*|,\s+|\s+(?:and|or|&)\s+", body)
    items = [p.strip().rstrip(".").strip() for p in parts]
    items = [re.sub(r"^(?:and|or)\s+", "", p, flags=re.IGNORECASE) for p in items if p]
    return [p for p in items if normalize_text(p)], ordered


def sentences(text: str) -> list[str]:
    """Sentences of ``text`` (split after ``.!?`` before a capital, digit or symbol, and lines)."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z0-9$€£\"'(*])|\n+", text)
    return [p.strip() for p in parts if p.strip()]


def cut_clause(clause: str) -> str:
    """The value part of a clause: up to a continuation, parenthesis, dash or sentence end."""
    clause = HEDGES.sub("", clause.strip())
    masked = mask_dates(clause)
    stop = CONTINUATION.search(masked)
    if stop is not None and stop.start() > 0:
        clause = clause[: stop.start()]
    return clause.strip().rstrip(".!?,:").strip()


def value_clauses(text: str) -> list[str]:
    """Clauses that follow a copula (``is``, ``are``, ``:``, ``=``) and start with a value."""
    found = []
    for sentence in sentences(text):
        for match in COPULA.finditer(sentence):
            clause = cut_clause(sentence[match.end() :])
            if clause and looks_like_value(clause):
                found.append(clause)
                break
    return found


def looks_like_value(clause: str) -> bool:
    """True for a clause that reads as an answer value rather than more prose."""
    if NON_VALUE_START.match(clause):
        return False
    nums = find_numbers(clause)
    if nums and nums[0].start <= 1:
        return True
    if parse_date(clause) is not None:
        return True
    return len(clause.split()) <= 8


def tidy(text: str) -> str:
    """Trimmed text with runs of spaces collapsed and trailing punctuation removed."""
    return re.sub(r"[ \t]+", " ", text.strip()).strip().rstrip(".!,;:").strip()


# --- values -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A parsed expected answer."""

    kind: str  # number | date | bool | text | list
    text: str
    num: Num | None = None
    date: dt.date | tuple[int, int] | None = None
    items: tuple[str, ...] = ()
    ordered: bool = False


def parse_value(text: str) -> Value:
    """Classify an (already extracted) answer value."""
    text = tidy(text)
    date = parse_date(text)
    if date is not None:
        return Value("date", text, date=date)
    nums = find_numbers(text)
    if len(nums) == 1 and not re.sub(r"[\s.,;:~≈()]", "", _outside(text, nums[0])):
        return Value("number", text, num=nums[0])
    if normalize_text(text) in BOOLS:
        return Value("bool", text)
    items, ordered = split_items(text)
    if len(items) > 1:
        return Value("list", text, items=tuple(items), ordered=ordered)
    return Value("text", text)


def _outside(text: str, num: Num) -> str:
    return text[: num.start] + text[num.end :]
