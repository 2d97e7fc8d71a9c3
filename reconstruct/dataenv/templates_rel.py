"""Question templates over dates and across tables: date windows, joins, top-k rankings."""

from __future__ import annotations

import datetime as dt
import random

from trajforge.reconstruct.dataenv.tables import Join, Table
from trajforge.reconstruct.dataenv.templates import (
    AGGS,
    ROUND,
    Ctx,
    Draft,
    Template,
    missing_note,
    pick,
)

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")  # fmt: skip


def _date_lit(day: dt.date) -> str:
    return f"dt.date({day.year}, {day.month}, {day.day})"


def _dated(ctx: Ctx, rng: random.Random) -> tuple[Table, str, dt.date, dt.date] | None:
    t = pick(rng, [t for t in ctx.tables if t.date_cols and t.measures])
    if t is None:
        return None
    col = rng.choice(t.date_cols)
    series = t.frame[col].drop_nulls()
    if series.len() < 10:
        return None
    return t, col, series.min(), series.max()  # type: ignore[return-value]


def window_total(ctx: Ctx, rng: random.Random) -> Draft | None:
    found = _dated(ctx, rng)
    if found is None:
        return None
    t, col, first, last = found
    length = rng.choice((7, 14, 30, 90))
    span = (last - first).days - length
    if span <= 0:
        return None
    start = first + dt.timedelta(days=rng.randrange(span))
    end = start + dt.timedelta(days=length - 1)
    m = rng.choice(t.measures)
    code = (
        f"result = {t.var}.filter(pl.col({col!r}).is_between({{a}}, {{b}}, closed={{c!r}}))"
        f".select(pl.col({m!r}).sum()).item()"
    )
    a, b = _date_lit(start), _date_lit(end)
    shift = dt.timedelta(days=length)
    return Draft(
        "window",
        2,
        f"What is the total {m} of the rows in {t.name} whose {col} is between {start} and "
        f"{end}, both days included?{missing_note(t, m)}"
        + (ROUND if t.frame.schema[m].is_float() else ""),
        (t,),
        code.format(a=a, b=b, c="both"),
        perturbed=(
            code.format(a=a, b=b, c="left"),
            code.format(a=_date_lit(start + shift), b=_date_lit(end + shift), c="both"),
        ),
    )


def window_month_count(ctx: Ctx, rng: random.Random) -> Draft | None:
    found = _dated(ctx, rng)
    if found is None:
        return None
    t, col, _, _ = found
    months = sorted({(d.year, d.month) for d in t.frame[col].drop_nulls().to_list()})
    if len(months) < 3:
        return None
    i = rng.randrange(1, len(months) - 1)
    code = (
        f"result = {t.var}.filter((pl.col({col!r}).dt.year() == {{y}}) & "
        f"(pl.col({col!r}).dt.month() == {{m}})).height"
    )
    (y, m), (ny, nm), (py, pm) = months[i], months[i + 1], months[i - 1]
    return Draft(
        "window",
        2,
        f"How many rows in {t.name} have their {col} in {MONTHS[m - 1]} {y}?",
        (t,),
        code.format(y=y, m=m),
        perturbed=(code.format(y=ny, m=nm), code.format(y=py, m=pm)),
    )


def window_best_month(ctx: Ctx, rng: random.Random) -> Draft | None:
    found = _dated(ctx, rng)
    if found is None:
        return None
    t, col, _, _ = found
    m = rng.choice(t.measures)
    monthly = f'{t.var}.with_columns(pl.col({col!r}).dt.strftime("%Y-%m").alias("_month"))'
    code = f'result = top({monthly}.group_by("_month").agg({{agg}}), "_month", {m!r}, 1{{d}})[0]'
    total = f"pl.col({m!r}).sum()"
    return Draft(
        "window",
        3,
        f"Which calendar month had the highest total {m} in {t.name}, by {col}? Answer as YYYY-MM.",
        (t,),
        code.format(agg=total, d=""),
        perturbed=(
            code.format(agg=total, d=", descending=False"),
            code.format(agg=f"pl.len().alias({m!r})", d=""),
        ),
    )


def _join_cat(ctx: Ctx, rng: random.Random) -> tuple[Join, str, str, str, str] | None:
    usable = [
        (j, c)
        for j in ctx.joins
        for c in sorted(j.dim.categories)
        if c not in j.fact.frame.columns and j.fact.measures
    ]
    chosen = pick(rng, usable)
    if chosen is None:
        return None
    join, col = chosen
    v, other = rng.sample(list(join.dim.categories[col]), 2)
    return join, col, v, other, rng.choice(join.fact.measures)


def _joined(join: Join, column: str) -> str:
    return (
        f"{join.fact.var}.join({join.dim.var}.select({join.key!r}, {column!r}), "
        f"on={join.key!r}, how='inner')"
    )


def join_total(ctx: Ctx, rng: random.Random) -> Draft | None:
    found = _join_cat(ctx, rng)
    if found is None:
        return None
    join, col, v, other, m = found
    agg = rng.choice(tuple(AGGS))
    flip = "mean" if agg == "sum" else "sum"
    code = f"result = {_joined(join, col)}.filter(pl.col({col!r}) == {{v!r}})"
    code += f".select(pl.col({m!r}).{{agg}}()).item()"
    note = ROUND if agg == "mean" or join.fact.frame.schema[m].is_float() else ""
    return Draft(
        "join",
        3,
        f"Match each row of {join.fact.name} to {join.dim.name} on {join.key}. What is the "
        f'{AGGS[agg]} {m} of the rows whose {col} (from {join.dim.name}) is "{v}"?'
        f"{missing_note(join.fact, m)}{note}",
        (join.fact, join.dim),
        code.format(v=v, agg=agg),
        perturbed=(code.format(v=other, agg=agg), code.format(v=v, agg=flip)),
    )


def join_argmax(ctx: Ctx, rng: random.Random) -> Draft | None:
    found = _join_cat(ctx, rng)
    if found is None:
        return None
    join, col, _, _, m = found
    grouped = f"{_joined(join, col)}.group_by({col!r}).agg({{agg}})"
    code = f"result = top({grouped}, {col!r}, {m!r}, 1{{d}})[0]"
    total = f"pl.col({m!r}).sum()"
    return Draft(
        "join",
        3,
        f"Match each row of {join.fact.name} to {join.dim.name} on {join.key}. Which {col} "
        f"has the highest total {m}? Answer with the {col} value only.",
        (join.fact, join.dim),
        code.format(agg=total, d=""),
        perturbed=(
            code.format(agg=total, d=", descending=False"),
            code.format(agg=f"pl.len().alias({m!r})", d=""),
        ),
    )


def top_k(ctx: Ctx, rng: random.Random) -> Draft | None:
    k = rng.choice((3, 5))
    joins = [j for j in ctx.joins if j.dim.labels and j.fact.measures]
    if joins and rng.random() < 0.5:
        join = rng.choice(joins)
        label, m = rng.choice(join.dim.labels), rng.choice(join.fact.measures)
        frame, difficulty = _joined(join, label), 3
        tables: tuple[Table, ...] = (join.fact, join.dim)
        where = f"Match each row of {join.fact.name} to {join.dim.name} on {join.key}. "
        what = f"{label} values (from {join.dim.name})"
    else:
        t = pick(rng, [t for t in ctx.tables if t.measures and (t.categories or _refs(ctx, t))])
        if t is None:
            return None
        label = rng.choice(sorted(t.categories) + _refs(ctx, t))
        m, frame, tables, difficulty = rng.choice(t.measures), t.var, (t,), 2
        where, what = f"In {t.name}, ", f"{label} values"
    code = f"result = top({frame}.group_by({label!r}).agg({{agg}}), {label!r}, {m!r}, {{k}}{{d}})"
    total = f"pl.col({m!r}).sum()"
    return Draft(
        "topk",
        difficulty,
        f"{where}{'List' if where.endswith('. ') else 'list'} the {k} {what} with the highest "
        f"total {m}, highest first, one per line.",
        tables,
        code.format(agg=total, k=k, d=""),
        perturbed=(
            code.format(agg=total, k=k, d=", descending=False"),
            code.format(agg=f"pl.col({m!r}).mean()", k=k, d=""),
        ),
    )


def _refs(ctx: Ctx, t: Table) -> list[str]:
    """Columns of ``t`` that refer to another table's key (e.g. ``customer_id`` in orders)."""
    return sorted({j.key for j in ctx.joins if j.fact is t})


RELATIONAL: dict[str, tuple[Template, ...]] = {
    "window": (window_total, window_month_count, window_best_month),
    "join": (join_total, join_argmax),
    "topk": (top_k,),
}
"""Date-window, join and ranking template families."""
