"""The answer checker for reconstructed qa tasks: does an answer state the key's facts?

A reconstructed qa task stores an :class:`~trajforge.records.AnswerKey`: the grounded facts
its question asks for (``8`` and ``MAX_WORKERS`` for "How many workers does the pool start by
default, and which setting controls it?"). An answer passes when it states every required
fact — numbers by value (``8``, ``8.0``, ``eight``, ``8 times``), identifiers and paths as
whole words (case-insensitive, a path also by its file name), yes/no by its polarity — and
contradicts none: a required number offered among alternatives (``4 or 8``), a negated fact
(``not MAX_WORKERS``) or the opposite polarity fails, and so does a list of more than
:data:`MAX_NAMES` names for a key that requires one. ``docs/qa.md`` has the rules.
"""

from __future__ import annotations

import math
import posixpath
import re

from trajforge.reconstruct.facts import NAME_KINDS, names_stated
from trajforge.reconstruct.triage_rules_qa import first_sentence_denies
from trajforge.records import AnswerKey, Fact
from trajforge.verifiers.answer import HEDGE, MAX_ANSWER, NEGATION, AnswerCheck
from trajforge.verifiers.answer_text import Num, find_numbers, number_runs, strip_markdown

CHECKER_VERSION = 3
"""Bumped when the fact checker's rules change (2: at most :data:`MAX_NAMES` names; 3: a "no"
stated by denial, :attr:`Fact.denies`): part of every validation cache key."""
MAX_NAMES = 20
"""An answer to a key that requires a name may state at most this many distinct identifiers
and paths: more is a list to pick from, not an answer (2 % of the real corpus's assistant
messages name more)."""
UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
    "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18,
    "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "once": 1, "twice": 2, "a dozen": 12,
}  # fmt: skip
"""Number words an answer may use instead of digits ("eight workers", "twice")."""
NUMBER_WORDS = re.compile(
    r"(?i)\b(?P<tens>twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)[- ](?P<unit>one|two|"
    r"three|four|five|six|seven|eight|nine)\b|\b(?P<word>"
    + "|".join(sorted(UNITS, key=len)[::-1])
    + r")\b(?:\s+hundred\b)?"
)
YES = re.compile(r"(?i)^\W*(?:yes|yep|yeah|correct|exactly|right|true|indeed|it does|they do)\b")
NO = re.compile(r"(?i)^\W*(?:no|nope|false|not quite|incorrect|it does not|it doesn't)\b")


def _numbers(text: str) -> list[float]:
    """Values stated in digits or words."""
    values = [n.value for n in find_numbers(text)]
    for m in NUMBER_WORDS.finditer(text):
        if m.group("tens"):
            values.append(UNITS[m.group("tens").lower()] + UNITS[m.group("unit").lower()])
        else:
            base = UNITS[m.group("word").lower()]
            values.append(base * 100 if m.group(0).lower().endswith("hundred") else base)
    return values


def _same(expected: float, given: float, decimals: int) -> bool:
    """Equal as stated: an integer exactly; a decimal when the given rounds to it (136.5 and
    136.496 for 136.50, never 136.51)."""
    if decimals == 0:
        return expected == given
    return math.isclose(round(given, decimals), expected, rel_tol=1e-12, abs_tol=1e-12)


def _number(fact: Fact, given: str) -> str | None:
    """None when the number is stated and not among alternatives; else why not."""
    (want,) = find_numbers(fact.value.replace("%", " %")) or [Num(math.nan, None, 0, 1, "", 0, 0)]
    if math.isnan(want.value):
        return f"the key's number {fact.value!r} cannot be read"
    stated = [v for v in _numbers(given) if _same(want.value, v, want.decimals)]
    if not stated:
        return f"expected the number {fact.value}"
    nums = find_numbers(given)
    for run in number_runs(given, nums):
        values = {n.value for n in run}
        if len(values) > 1 and any(_same(want.value, v, want.decimals) for v in values):
            return f"the number {fact.value} is offered among alternatives"
    distinct = {round(v, 6) for v in _numbers(given)}
    if HEDGE.search(given) and len(distinct) > 1:
        return f"the number {fact.value} is hedged among {len(distinct)} values"
    return None


def _word(fact: Fact, given: str) -> str | None:
    """None when the identifier or path is named and not negated; else why not."""
    value = fact.value.rstrip("()").strip("`'\"")
    names = [value]
    if fact.kind == "path":
        names.append(posixpath.basename(value.rstrip("/")))
    if "." in value and fact.kind == "identifier":
        names.append(value.rsplit(".", 1)[1])  # crypto.getRandomValues → getRandomValues
    for name in dict.fromkeys(n for n in names if len(n) >= 3):
        pattern = re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", re.IGNORECASE)
        for m in pattern.finditer(given):
            if not NEGATION.search(given[max(0, m.start() - 12) : m.start()]):
                return None
        if pattern.search(given):
            return f"{fact.value} is negated"
    return f"expected {fact.kind} {fact.value}"


def _polarity(fact: Fact, given: str) -> str | None:
    said_yes = bool(YES.search(given))
    said_no = bool(NO.search(given)) or (
        fact.value == "no" and fact.denies is not None and first_sentence_denies(given, fact.denies)
    )
    if fact.value == "yes" and said_yes and not said_no:
        return None
    if fact.value == "no" and said_no and not said_yes:
        return None
    if fact.denies and fact.value == "no":
        return f"expected the answer to start with no or deny {fact.denies!r}"
    return f"expected the answer to start with {fact.value}"


def _listed(key: AnswerKey, given: str) -> str | None:
    """Why ``given`` is a list to pick the key's names from, or None."""
    if not any(f.kind in NAME_KINDS for f in key.required):
        return None
    named = names_stated(given)
    if len(named) <= MAX_NAMES:
        return None
    return f"names {len(named)} identifiers and paths, more than {MAX_NAMES}: a list"


def check_key(key: AnswerKey, given: str) -> AnswerCheck:
    """Whether ``given`` states every required fact of ``key`` and contradicts none."""
    expected = "; ".join(f"{f.kind} {f.value}" for f in key.required)
    text = strip_markdown(given)
    if not text.strip():
        return AnswerCheck(passed=False, reason="empty answer", expected=expected, given=given)
    if len(given) > MAX_ANSWER:
        return AnswerCheck(passed=False, reason="answer too long", expected=expected, given=given)
    if (listed := _listed(key, given)) is not None:
        return AnswerCheck(passed=False, reason=listed, expected=expected, given=given)
    problems = []
    for fact in key.required:
        if fact.kind == "number":
            problem = _number(fact, text)
        elif fact.kind == "polarity":
            problem = _polarity(fact, text)
        else:
            problem = _word(fact, text)
        if problem:
            problems.append(problem)
    if problems:
        return AnswerCheck(passed=False, reason="; ".join(problems), expected=expected, given=given)
    return AnswerCheck(passed=True, reason=f"states {expected}", expected=expected, given=given)
