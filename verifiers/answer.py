"""The answer checker for qa and data tasks: does a given answer state the expected value?

``check_answer`` reduces both sides to their key value (:func:`extract_answer`) and compares
by kind: numbers with tolerance, rounding and units; dates in any common form; yes/no;
names case- and whitespace-insensitively with aliases; lists as sets, or in order when the
expected is a numbered (ranked) list. Answers that list several candidate numbers fail.
``docs/qa.md`` states every rule with examples.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from trajforge.verifiers.answer_perturb import perturb
from trajforge.verifiers.answer_text import (
    BOOLS,
    COPULA,
    DATE_PATTERNS,
    LIST_MARKER,
    Num,
    Value,
    cut_clause,
    find_numbers,
    mask_dates,
    normalize_text,
    number_runs,
    parse_date,
    parse_value,
    rank_markers,
    split_items,
    strip_markdown,
    tidy,
    value_clauses,
)

NEGATION = re.compile(r"(?:\bnot|\bno|n't|\bnever|\bisnt)\s+(?:the\s+|a\s+)?$", re.IGNORECASE)
HEDGE = re.compile(
    r"\b(?:or|could|might|maybe|perhaps|possibly|alternatively|either|unsure|not sure)\b",
    re.IGNORECASE,
)
"""Words that offer alternatives; with several distinct numbers present, a shotgun."""
MAX_ANSWER = 20_000
"""A longer given answer fails outright: answers are values, not transcripts."""
SHORT_OUTPUT = 5000
"""Outputs up to this many characters are also read as an answer (``Alice, Bob`` on a line)."""
LOOSE = ("bare", "whole", "number")
"""Ways a key was found that leave room for a sentence merely containing the value."""


class AnswerCheck(BaseModel):
    """Outcome of checking one answer against the expected one."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    passed: bool
    """The given answer states the expected value (and nothing that competes with it)."""
    reason: str
    """Why, e.g. ``number 136.5 matches 136.50 within tolerance`` or ``expected 136.5, got 137``."""
    expected: str
    """The expected key value as extracted (what was compared)."""
    given: str
    """The given answer as received."""


@dataclass(frozen=True)
class Tol:
    """Numeric tolerance of one check."""

    rel: float
    abs: float


# --- extraction -------------------------------------------------------------------------


def extract_answer(text: str) -> str:
    """The answer value of a final assistant message.

    ``"The total is 136.50."`` → ``"136.50"``; ``"**Answer:** Alice"`` → ``"Alice"``; a
    numbered list → its items as ``"1. a\\n2. b"``; a bare value comes back as it is.
    When no key value can be told apart, the whole (cleaned) text comes back.
    """
    return _key(text)[0]


def _key(text: str) -> tuple[str, str]:
    """(value, how) where how says which rule found it."""
    clean = strip_markdown(text)
    if not clean:
        return "", "empty"
    finders = (
        ("marked", _marked),
        ("list", _listed),
        ("bold", lambda _: _bold(text)),
        ("bare", _bare),
        ("asserted", _asserted),
        ("number", _single_number),
    )
    for how, finder in finders:
        value = finder(clean)
        if value:
            return value, how
    return tidy(clean), "whole"


def _marked(clean: str) -> str | None:
    found = re.findall(r"(?im)\b(?:final answer|answer|result)\s*(?:is|:|=)[ \t]*(.+)$", clean)
    return _reduce(cut_clause(found[-1])) if found and cut_clause(found[-1]) else None


def _listed(clean: str) -> str | None:
    lines = clean.split("\n")
    block: list[str] = []
    for line in lines:
        if LIST_MARKER.match(line):
            block.append(line)
        elif line.strip() and block and not LIST_MARKER.match(line):
            block = [] if len(block) < 2 else block
            if len(block) >= 2:
                break
    if len(block) < 2:
        return None
    text = "\n".join(block)
    items = [cut_clause(LIST_MARKER.sub("", line)) for line in block]
    if rank_markers(text):
        return "\n".join(f"{n}. {item}" for n, item in enumerate(items, 1))
    return "\n".join(items)


def _bold(raw: str) -> str | None:
    spans = [s.strip() for s in re.findall(r"\*\*(.+?)\*\*|__(.+?)__", raw) for s in s if s]
    values = {tidy(s) for s in spans if not s.rstrip().endswith(":") and tidy(s)}
    if len(values) != 1:
        return None
    value = values.pop()
    return _reduce(cut_clause(value)) if not COPULA.search(mask_dates(value)) else None


def _bare(clean: str) -> str | None:
    if COPULA.search(mask_dates(clean)):
        return None
    lines = [line.strip() for line in clean.split("\n") if line.strip()]
    if len(lines) > 1:
        return "\n".join(lines) if all(len(line.split()) <= 5 for line in lines) else None
    words = clean.split()
    items, _ = split_items(clean)
    if len(words) <= 5 or (len(items) > 1 and all(len(i.split()) <= 4 for i in items)):
        return tidy(clean)
    return None


def _asserted(clean: str) -> str | None:
    clauses = value_clauses(clean)
    return _reduce(clauses[-1]) if clauses else None


def _single_number(clean: str) -> str | None:
    nums = find_numbers(clean)
    if len(nums) == 1:
        return nums[0].text
    dates = {m.group(0) for p in DATE_PATTERNS[:6] for m in p.finditer(clean)}
    return dates.pop() if not nums and len(dates) == 1 else None


def _reduce(clause: str) -> str:
    """A clause that starts with a number → that number (or run of numbers) with its unit."""
    clause = tidy(clause)
    if parse_date(clause) is not None:
        return clause
    nums = find_numbers(clause)
    if nums and nums[0].start <= 1:
        run = number_runs(clause, nums)[0]
        return ", ".join(n.text for n in run)
    return clause


# --- comparison -------------------------------------------------------------------------


def check_answer(
    expected: str,
    given: str,
    *,
    aliases: Sequence[str] = (),
    rel_tol: float = 1e-4,
    abs_tol: float = 1e-6,
) -> AnswerCheck:
    """Whether ``given`` states the ``expected`` answer (see ``docs/qa.md`` for the rules)."""
    exp_text = extract_answer(expected)

    def result(passed: bool, reason: str) -> AnswerCheck:
        return AnswerCheck(passed=passed, reason=reason, expected=exp_text, given=given)

    if not exp_text:
        return result(False, "the expected answer is empty")
    if not strip_markdown(given):
        return result(False, "empty answer")
    if len(given) > MAX_ANSWER:
        return result(False, f"answer too long ({len(given)} characters; at most {MAX_ANSWER})")
    tol = Tol(rel_tol, abs_tol)
    ok, reason = match(parse_value(exp_text), given, tol)
    if ok:
        return result(True, reason)
    for alias in aliases:
        alias_value = extract_answer(alias)
        if alias_value and match(parse_value(alias_value), given, tol)[0]:
            return result(True, f"matches alias {alias_value!r}")
    return result(False, reason)


def match(exp: Value, given: str, tol: Tol) -> tuple[bool, str]:
    """Compare a parsed expected value with a given answer."""
    if exp.kind == "number" and exp.num is not None:
        return _match_number(exp.num, given, tol)
    if exp.kind == "list":
        return _match_list(exp, given, tol)
    key, how = _key(given)
    if exp.kind == "date":
        return _match_date(exp, given, key)
    if exp.kind == "bool":
        got = BOOLS.get(normalize_text(key))
        ok = got is not None and got == BOOLS[normalize_text(exp.text)]
        return ok, f"{'yes/no matches' if ok else 'expected'} {exp.text!r}, got {key!r}"
    return _match_text(exp.text, given, key, how)


def _match_number(e: Num, given: str, tol: Tol) -> tuple[bool, str]:
    clean = strip_markdown(given)
    nums = find_numbers(clean)
    if not nums:
        return False, f"expected {e.text}, got no number"
    for run in number_runs(clean, nums):
        if len({round(n.value, 9) for n in run}) > 1:
            listed = ", ".join(n.text for n in run)
            return False, f"answer lists several candidate numbers ({listed}); one is expected"
    if HEDGE.search(mask_dates(clean)) and len({round(n.value, 9) for n in nums}) > 1:
        listed = ", ".join(n.text for n in nums)
        return False, f"answer hedges between several numbers ({listed}); one is expected"
    key_nums = find_numbers(_key(given)[0])
    if len(key_nums) > 1:
        return False, f"answer gives several numbers ({', '.join(n.text for n in key_nums)})"
    if not key_nums and len(nums) > 1:
        return False, f"cannot tell which number in the answer is meant (expected {e.text})"
    return num_close(e, key_nums[0] if key_nums else nums[0], tol)


def num_close(e: Num, g: Num, tol: Tol) -> tuple[bool, str]:
    """Compare two numbers: units, exact integers, tolerance, rounding, percent scaling."""
    if e.unit and g.unit and e.unit != g.unit:
        return False, f"unit mismatch: expected {e.text}, got {g.text}"
    if e.decimals == 0 and g.decimals == 0:  # integers as written are exact (abs_tol only)
        if math.isclose(e.value, g.value, rel_tol=0.0, abs_tol=tol.abs):
            return True, f"number {g.text} matches {e.text} exactly"
        return False, f"expected {e.text}, got {g.text}"
    how = _same(e, g, tol)
    if how:
        return True, f"number {g.text} matches {e.text} {how}"
    scaled = _as_percent(e, g)
    if scaled is not None and _same(e, scaled, tol):
        return True, f"number {g.text} matches {e.text} as a percentage"
    return False, f"expected {e.text}, got {g.text}"


def _same(e: Num, g: Num, tol: Tol) -> str:
    """How ``g`` equals ``e`` ("within tolerance", "rounded to N decimals"), or ""."""
    if math.isclose(e.value, g.value, rel_tol=tol.rel, abs_tol=tol.abs):
        return "within tolerance"
    if e.decimals != g.decimals and _rounded(e, g):
        return f"rounded to {min(e.decimals, g.decimals)} decimals"
    return ""


def _as_percent(e: Num, g: Num) -> Num | None:
    """``g`` rescaled when exactly one side is a percentage (``12%`` ↔ ``0.12``)."""
    if e.unit == "%" and g.unit is None:
        value, decimals = g.value * 100, max(g.decimals - 2, 0)
    elif e.unit is None and g.unit == "%":
        value, decimals = g.value / 100, g.decimals + 2
    else:
        return None
    return Num(value, e.unit, decimals, g.sig, g.text, g.start, g.end)


def _rounded(e: Num, g: Num) -> bool:
    """One side is the other rounded to its decimals: a less precise expected (≥1 decimal)
    accepts any more precise given; a less precise given needs ≥1 decimal and ≥3
    significant digits (so ``0.0`` never matches ``0.03``)."""
    coarse, fine = (e, g) if e.decimals < g.decimals else (g, e)
    if coarse.decimals < 1 or (coarse is g and coarse.sig < 3):
        return False
    half = 0.5 * 10.0 ** (-coarse.decimals)
    return abs(fine.value - coarse.value) <= half * (1 + 1e-9)


def _match_date(exp: Value, given: str, key: str) -> tuple[bool, str]:
    got = parse_date(key)
    if got is None:
        clean = strip_markdown(given)
        found = {parse_date(m.group(0)) for p in DATE_PATTERNS[:6] for m in p.finditer(clean)}
        found.discard(None)
        if len(found) > 1:
            return False, f"answer gives several dates; expected {exp.text}"
        got = found.pop() if found else None
    if got is None:
        return False, f"expected date {exp.text}, got no date"
    if got == exp.date:
        return True, f"date {key!r} matches {exp.text}"
    return False, f"expected {exp.text}, got {key}"


def _match_text(expected: str, given: str, key: str, how: str) -> tuple[bool, str]:
    want = normalize_text(expected)
    if normalize_text(key) == want:
        return True, f"text {key!r} matches {expected!r}"
    items, _ = split_items(key)
    if len(items) > 1 and any(normalize_text(i) == want for i in items):
        return False, f"answer lists several candidates ({', '.join(items)}); one is expected"
    if how not in LOOSE:
        return False, f"expected {expected!r}, got {key!r}"
    whole = normalize_text(strip_markdown(given))
    hit = re.search(rf"(?<!\w){re.escape(want)}(?!\w)", whole)
    if hit is None:
        return False, f"expected {expected!r}, got {key!r}"
    if NEGATION.search(whole[: hit.start()]):
        return False, f"answer negates {expected!r}"
    if len(split_items(whole)[0]) > 1:
        return False, f"answer names several candidates beside {expected!r}"
    return True, f"answer contains {expected!r}"


def _match_list(exp: Value, given: str, tol: Tol) -> tuple[bool, str]:
    key, _ = _key(given)
    got, _ = split_items(key)
    if len(got) <= 1:
        got, _ = split_items(strip_markdown(given))
    if len(got) != len(exp.items):
        return False, f"expected {len(exp.items)} items ({', '.join(exp.items)}), got {len(got)}"
    if exp.ordered:
        for n, (want, have) in enumerate(zip(exp.items, got, strict=True), 1):
            if not item_equal(want, have, tol):
                return False, f"item {n}: expected {want!r}, got {have!r} (order matters)"
        return True, f"all {len(got)} items match in order"
    unused = list(got)
    for want in exp.items:
        hit = next((h for h in unused if item_equal(want, h, tol)), None)
        if hit is None:
            return False, f"missing item {want!r} (got {', '.join(got)})"
        unused.remove(hit)
    return True, f"all {len(got)} items match (any order)"


def item_equal(want: str, have: str, tol: Tol) -> bool:
    """One list item against another, by the kind of the expected item."""
    exp = parse_value(want)
    have = cut_clause(have)
    if exp.kind == "number" and exp.num is not None:
        nums = find_numbers(have)
        return len(nums) == 1 and num_close(exp.num, nums[0], tol)[0]
    if exp.kind == "date":
        return parse_date(have) == exp.date
    return normalize_text(have) == normalize_text(want)


# --- controls ---------------------------------------------------------------------------


def perturbed_answers(expected: str, seed: int) -> list[str]:
    """Near-miss wrong answers that must fail: value ±1 %, ±1, one digit off, list items
    swapped or dropped, a date a day or month off, a name one letter off."""
    value = extract_answer(expected)
    return perturb(parse_value(value), seed) if value else []


def reproduces(answer: str, output: str) -> bool:
    """Whether a re-executed command's ``output`` contains the answer value.

    Unlike :func:`check_answer` this looks for the value anywhere in the output (a printed
    table may hold many numbers): a number within tolerance, the date, the name as a whole
    phrase, or every list item (in order for a ranked list).
    """
    value = extract_answer(answer)
    clean = strip_markdown(output)
    if not value or not clean:
        return False
    exp = parse_value(value)
    tol = Tol(1e-4, 1e-6)
    found = _items_in_order(exp, clean, tol) if exp.kind == "list" else _contains(value, clean, tol)
    return found or (len(clean) <= SHORT_OUTPUT and check_answer(value, output).passed)


def _contains(want: str, text: str, tol: Tol) -> bool:
    exp = parse_value(want)
    if exp.kind == "number" and exp.num is not None:
        num = exp.num
        return any(num_close(num, n, tol)[0] for n in find_numbers(text))
    if exp.kind == "date":
        found = (parse_date(m.group(0)) for p in DATE_PATTERNS[:6] for m in p.finditer(text))
        return exp.date in set(found)
    pattern = rf"(?<!\w){re.escape(normalize_text(want))}(?!\w)"
    return re.search(pattern, normalize_text(text)) is not None


def _items_in_order(exp: Value, text: str, tol: Tol) -> bool:
    lines = [line for line in text.split("\n") if line.strip()]
    position = -1
    for item in exp.items:
        hits = [i for i, line in enumerate(lines) if _contains(cut_clause(item), line, tol)]
        if not hits:
            return False
        later = [i for i in hits if i > position]
        if exp.ordered and not later:
            return False
        position = later[0] if later else hits[0]
    return True
