"""Near-miss wrong answers for the answer checker's controls (see ``perturbed_answers``).

Each variant differs from the expected value by more than the default tolerance, so a
checker that accepts one is too lenient, not merely tolerant.
"""

from __future__ import annotations

import datetime as dt
import random
import re

from trajforge.verifiers.answer_text import Num, Value, normalize_text, parse_value

MARGIN = 1e-3
"""Relative change a numeric near-miss must exceed (ten times the default tolerance)."""


def perturb(value: Value, seed: int) -> list[str]:
    """Near misses of ``value``, deterministic in ``seed``, without duplicates."""
    rng = random.Random(seed)
    if value.kind == "number" and value.num is not None:
        found = _numbers(value.num, rng)
    elif value.kind == "date":
        found = _dates(value)
    elif value.kind == "bool":
        found = ["no" if normalize_text(value.text) in ("yes", "true", "y") else "yes"]
    elif value.kind == "list":
        found = _lists(value, rng)
    else:
        found = _texts(value.text, rng)
    seen = {normalize_text(value.text)}
    unique = []
    for text in found:
        if normalize_text(text) not in seen:
            seen.add(normalize_text(text))
            unique.append(text)
    return unique


def _far(a: float, b: float) -> bool:
    return abs(a - b) > max(MARGIN * abs(a), 1e-6)


def _numbers(num: Num, rng: random.Random) -> list[str]:
    values = [num.value * 1.01, num.value * 0.99, num.value + 1, num.value - 1]
    out = [_format(num, v) for v in values if _far(num.value, v)]
    digit = _digit_off(num, rng, set(out))
    if digit is not None:
        out.append(digit)
    return out


def _format(num: Num, value: float) -> str:
    """``value`` written like ``num`` (currency, unit, separators), with enough decimals to
    differ from ``num`` at the written precision."""
    decimals = num.decimals
    while round(value, decimals) == round(num.value, decimals) and decimals < num.decimals + 6:
        decimals += 1
    digits = f"{abs(value):,.{decimals}f}" if "," in num.text else f"{abs(value):.{decimals}f}"
    match = re.search(r"[\d.,]*\d", num.text)
    start, end = (match.start(), match.end()) if match else (0, len(num.text))
    prefix = num.text[:start].replace("-", "").replace("−", "")
    sign = "-" if value < 0 else ""
    if prefix[:1] in "$€£¥" and prefix:
        return f"{sign}{prefix}{digits}{num.text[end:]}"
    return f"{prefix}{sign}{digits}{num.text[end:]}"


def _digit_off(num: Num, rng: random.Random, taken: set[str]) -> str | None:
    """Change one digit by one where that moves the value past the margin."""
    match = re.search(r"[\d.,]*\d", num.text)
    if match is None:
        return None
    spots = [i for i in range(match.start(), match.end()) if num.text[i].isdigit()]
    rng.shuffle(spots)
    for i in spots:
        old = int(num.text[i])
        new = old + 1 if old < 9 else old - 1
        text = num.text[:i] + str(new) + num.text[i + 1 :]
        value = float(re.sub(r"[^\d.]", "", text[match.start() : match.end()]))
        if _far(abs(num.value), value) and text not in taken:
            return text
    return None


def _dates(value: Value) -> list[str]:
    if isinstance(value.date, dt.date):
        day = dt.timedelta(days=1)
        return [(value.date + day).isoformat(), (value.date - day).isoformat()]
    if isinstance(value.date, tuple):
        year, month = value.date
        nxt = (year + 1, 1) if month == 12 else (year, month + 1)
        prv = (year - 1, 12) if month == 1 else (year, month - 1)
        return [f"{y:04d}-{m:02d}" for y, m in (nxt, prv)]
    return []


def _texts(text: str, rng: random.Random) -> list[str]:
    letters = [i for i, c in enumerate(text) if c.isalpha()]
    if not letters:
        return [text + "0", "0" + text]
    drop = rng.choice(letters)
    swap = rng.choice(letters)
    shifted = chr(ord("a") + (ord(text[swap].lower()) - ord("a") + 1) % 26)
    if not text[swap].isascii():
        shifted = "x"
    dropped = text[:drop] + text[drop + 1 :]
    changed = text[:swap] + shifted + text[swap + 1 :]
    return [t for t in (dropped, changed) if normalize_text(t)]


def _lists(value: Value, rng: random.Random) -> list[str]:
    items = list(value.items)
    out = []
    if value.ordered and len(items) >= 2:
        i = rng.randrange(len(items) - 1)
        swapped = [*items[:i], items[i + 1], items[i], *items[i + 2 :]]
        if normalize_text(swapped[i]) != normalize_text(swapped[i + 1]):
            out.append(_join(swapped, ordered=True))
    drop = rng.randrange(len(items))
    out.append(_join(items[:drop] + items[drop + 1 :], value.ordered))
    out.append(_join([*items, items[drop]], value.ordered))
    target = rng.randrange(len(items))
    wrong = perturb(parse_value(items[target]), rng.randrange(1 << 30))[:1]
    if wrong:
        out.append(_join(items[:target] + wrong + items[target + 1 :], value.ordered))
    return out


def _join(items: list[str], ordered: bool) -> str:
    if ordered:
        return "\n".join(f"{n}. {item}" for n, item in enumerate(items, 1))
    return "\n".join(items)
