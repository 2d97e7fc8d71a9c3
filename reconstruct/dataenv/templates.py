"""Question templates over single tables: filters, group-bys, percentiles, null handling.

A template draws its parameters from ``rng`` and returns a :class:`Draft` (question, polars
body setting ``result``, near-miss bodies for the perturbed-query control) or None when the
tables have no columns of the kinds it needs.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from trajforge.reconstruct.dataenv.tables import Join, Table

T = TypeVar("T")
ROUND = " Round to 2 decimal places."
AGGS = {"sum": "total", "mean": "average"}


@dataclass(frozen=True)
class Ctx:
    """What templates draw from: the profiled tables and the joins between them."""

    tables: tuple[Table, ...]
    joins: tuple[Join, ...]


@dataclass(frozen=True)
class Draft:
    """A generated question before it is run."""

    template: str
    """Template family: filter, groupby, join, topk, percentile, window, nulls."""
    difficulty: int
    """1 (one operation) … 3 (joins, windows with ranking)."""
    question: str
    """The question the agent is asked."""
    tables: tuple[Table, ...]
    """Tables the question needs (copied into the workspace)."""
    body: str
    """Polars code that sets ``result``."""
    show: str = ""
    """Extra arguments of ``show(result, …)`` (``decimals=1, unit='%'``)."""
    perturbed: tuple[str, ...] = ()
    """Near-miss bodies: plausible mistakes whose answers must be rejected."""


Template = Callable[[Ctx, random.Random], Draft | None]


def pick(rng: random.Random, items: Sequence[T]) -> T | None:
    """A random item, or None for an empty sequence."""
    return rng.choice(items) if items else None


def nice(value: float) -> float | int:
    """``value`` rounded to two significant digits (a threshold people would write)."""
    if value == 0 or not math.isfinite(value):
        return 0
    digits = 1 - math.floor(math.log10(abs(value)))
    rounded = round(value, digits)
    return int(rounded) if rounded == int(rounded) else rounded


def missing_note(table: Table, column: str) -> str:
    """The sentence on missing values when ``column`` has some."""
    return f" Missing {column} values are ignored." if column in table.nullable else ""


def round_note(table: Table, column: str, agg: str) -> str:
    """The rounding sentence when the answer may not be a whole number."""
    if agg in ("mean", "quantile") or table.frame.schema[column].is_float():
        return ROUND
    return ""


def _with(ctx: Ctx, rng: random.Random, need: Callable[[Table], bool]) -> Table | None:
    return pick(rng, [t for t in ctx.tables if need(t)])


def _cat_value(t: Table, rng: random.Random) -> tuple[str, str, str] | None:
    col = pick(rng, sorted(t.categories))
    if col is None:
        return None
    v, other = rng.sample(list(t.categories[col]), 2)
    return col, v, other


def filter_count(ctx: Ctx, rng: random.Random) -> Draft | None:
    t = _with(ctx, rng, lambda t: bool(t.categories))
    chosen = _cat_value(t, rng) if t else None
    if t is None or chosen is None:
        return None
    col, v, other = chosen
    rows = f"{t.var}.filter(pl.col({col!r}) {{op}} {{v!r}}).height"
    return Draft(
        "filter",
        1,
        f'How many rows in {t.name} have {col} equal to "{v}"?',
        (t,),
        "result = " + rows.format(op="==", v=v),
        perturbed=(
            "result = " + rows.format(op="==", v=other),
            "result = " + rows.format(op="!=", v=v),
        ),
    )


def filter_agg(ctx: Ctx, rng: random.Random) -> Draft | None:
    t = _with(ctx, rng, lambda t: bool(t.categories and t.measures))
    chosen = _cat_value(t, rng) if t else None
    if t is None or chosen is None:
        return None
    col, v, other = chosen
    m, m2 = rng.choice(t.measures), rng.choice(t.measures)
    x = nice(float(t.frame[m2].quantile(rng.choice((0.25, 0.5, 0.75))) or 0))
    agg = rng.choice(tuple(AGGS))
    flip = "mean" if agg == "sum" else "sum"
    code = f"result = {t.var}.filter((pl.col({col!r}) == {{v!r}}) & (pl.col({m2!r}) {{op}} {x!r}))"
    code += f".select(pl.col({m!r}).{{agg}}()).item()"
    question = (
        f'What is the {AGGS[agg]} {m} over the rows of {t.name} where {col} is "{v}" and '
        f"{m2} is greater than {x}?{missing_note(t, m)}{round_note(t, m, agg)}"
    )
    return Draft(
        "filter",
        2,
        question,
        (t,),
        code.format(v=v, op=">", agg=agg),
        perturbed=(
            code.format(v=v, op=">=", agg=agg),
            code.format(v=other, op=">", agg=agg),
            code.format(v=v, op=">", agg=flip),
        ),
    )


def group_value(ctx: Ctx, rng: random.Random) -> Draft | None:
    t = _with(ctx, rng, lambda t: bool(t.categories and t.measures))
    chosen = _cat_value(t, rng) if t else None
    if t is None or chosen is None:
        return None
    col, v, other = chosen
    m, agg = rng.choice(t.measures), rng.choice(tuple(AGGS))
    code = f"result = {t.var}.group_by({col!r}).agg(pl.col({m!r}).{{agg}}())"
    code += f".filter(pl.col({col!r}) == {{v!r}})[{m!r}].item()"
    flip = "mean" if agg == "sum" else "sum"
    return Draft(
        "groupby",
        1,
        f'Grouping {t.name} by {col}, what is the {AGGS[agg]} {m} of the group "{v}"?'
        f"{missing_note(t, m)}{round_note(t, m, agg)}",
        (t,),
        code.format(agg=agg, v=v),
        perturbed=(code.format(agg=agg, v=other), code.format(agg=flip, v=v)),
    )


def group_argmax(ctx: Ctx, rng: random.Random) -> Draft | None:
    t = _with(ctx, rng, lambda t: bool(t.categories and t.measures))
    if t is None:
        return None
    col, m = rng.choice(sorted(t.categories)), rng.choice(t.measures)
    agg = rng.choice(tuple(AGGS))
    flip = "mean" if agg == "sum" else "sum"
    code = f"result = top({t.var}.group_by({col!r}).agg(pl.col({m!r}).{{agg}}()), "
    code += f"{col!r}, {m!r}, 1{{desc}})[0]"
    return Draft(
        "groupby",
        2,
        f"In {t.name}, which {col} has the highest {AGGS[agg]} {m}?{missing_note(t, col)}"
        f"{missing_note(t, m)} Answer with the {col} value only.",
        (t,),
        code.format(agg=agg, desc=""),
        perturbed=(code.format(agg=agg, desc=", descending=False"), code.format(agg=flip, desc="")),
    )


def percentile(ctx: Ctx, rng: random.Random) -> Draft | None:
    t = _with(ctx, rng, lambda t: bool(t.measures))
    if t is None:
        return None
    m = rng.choice(t.measures)
    q = rng.choice((0.1, 0.25, 0.5, 0.75, 0.9, 0.95))
    near = round(q + 0.05 if q < 0.9 else q - 0.05, 2)
    frame, where, difficulty = t.var, "", 2
    chosen = _cat_value(t, rng) if t.categories and rng.random() < 0.4 else None
    if chosen is not None:
        col, v, _ = chosen
        frame, where, difficulty = (
            f"{t.var}.filter(pl.col({col!r}) == {v!r})",
            f' where {col} is "{v}"',
            3,
        )
    code = f"result = {frame}.select(pl.col({m!r}).quantile({{q}}, interpolation={{how!r}})).item()"
    what = "median" if q == 0.5 else f"{round(q * 100)}th percentile"
    return Draft(
        "percentile",
        difficulty,
        f"What is the {what} of {m} over the rows of {t.name}{where}, using linear "
        f"interpolation between values and ignoring missing values?{ROUND}",
        (t,),
        code.format(q=q, how="linear"),
        perturbed=(code.format(q=near, how="linear"), code.format(q=q, how="lower")),
    )


def nulls_count(ctx: Ctx, rng: random.Random) -> Draft | None:
    t = _with(ctx, rng, lambda t: bool(t.nullable))
    if t is None:
        return None
    col = rng.choice(t.nullable)
    share = rng.random() < 0.5
    if share:
        code = f"result = 100 * {t.var}[{col!r}].{{fn}}() / {t.var}.height"
        question = (
            f"What percentage of the rows in {t.name} have a missing {col}? "
            "Round to 1 decimal place."
        )
        show = "decimals=1, unit='%'"
    else:
        code = f"result = {t.var}[{col!r}].{{fn}}()"
        question = f"How many rows in {t.name} have a missing (null) {col}?"
        show = ""
    others = [c for c in t.nullable if c != col]
    perturbed = [code.format(fn="count")]
    if others:
        perturbed.append(code.replace(repr(col), repr(rng.choice(others))).format(fn="null_count"))
    return Draft(
        "nulls",
        2 if share else 1,
        question,
        (t,),
        code.format(fn="null_count"),
        show,
        tuple(perturbed),
    )


def nulls_mean(ctx: Ctx, rng: random.Random) -> Draft | None:
    t = _with(ctx, rng, lambda t: bool(set(t.measures) & set(t.nullable)))
    if t is None:
        return None
    m = rng.choice([c for c in t.measures if c in t.nullable])
    zero = f"result = {t.var}.select(pl.col({m!r}).fill_null(0).mean()).item()"
    skip = f"result = {t.var}.select(pl.col({m!r}).mean()).item()"
    median = (
        f"result = {t.var}.select(pl.col({m!r}).fill_null(pl.col({m!r}).median()).mean()).item()"
    )
    if rng.random() < 0.5:
        question = f"What is the average {m} in {t.name} when missing {m} values count as 0?"
        body, perturbed = zero, (skip, median)
    else:
        question = f"What is the average {m} in {t.name}, leaving out rows where {m} is missing?"
        body, perturbed = skip, (zero, median)
    return Draft("nulls", 2, question + ROUND, (t,), body, perturbed=perturbed)


SINGLE: dict[str, tuple[Template, ...]] = {
    "filter": (filter_count, filter_agg),
    "groupby": (group_value, group_argmax),
    "percentile": (percentile,),
    "nulls": (nulls_count, nulls_mean),
}
"""Single-table template families and their templates."""
