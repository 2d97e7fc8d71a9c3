"""The stored oracle query: a self-contained polars script that prints the answer.

``oracle/query.py`` = :data:`PRELUDE` (loading and answer formatting), one ``load()`` line
per table, the template's body (which sets ``result``) and one ``show(result, …)`` line.
Run it in the task workspace with ``python3 query.py``. The generator executes the very
same text in-process (:func:`run_inline`) to compute the expected answer.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence
from pathlib import Path

PRELUDE = '''\
"""Oracle query of a trajforge data task. Run in the task workspace: python3 query.py"""

import datetime as dt
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent


def load(name, dates=()):
    """Read a table next to this script; ISO date strings and datetimes become dates."""
    path = HERE / name
    if name.endswith(".parquet"):
        frame = pl.read_parquet(path)
    elif name.endswith((".jsonl", ".ndjson")):
        frame = pl.read_ndjson(path)
    else:
        frame = pl.read_csv(path, try_parse_dates=True)
    fix = [
        pl.col(c).str.to_date("%Y-%m-%d", strict=False)
        if frame.schema[c] == pl.String
        else pl.col(c).dt.date()
        for c in dates
    ]
    return frame.with_columns(fix) if fix else frame


def top(frame, label, by, k, descending=True):
    """The ``k`` labels ranked by ``by``; refuses a tie that would make the ranking ambiguous."""
    ranked = frame.drop_nulls([label, by]).sort(by, descending=descending)
    values = ranked[by].to_list()
    if len(values) < k:
        raise ValueError(f"only {len(values)} ranked rows, {k} asked")
    if len(set(values[: k + 1])) < min(k + 1, len(values)):
        raise ValueError(f"tie in the top {k} by {by}")
    return ranked[label].head(k).to_list()


def show(value, decimals=2, unit=""):
    """Print the answer: numbers rounded, dates in ISO form, lists numbered."""
    if isinstance(value, list):
        for n, item in enumerate(value, 1):
            print(f"{n}. {item}")
        return
    if value is None:
        raise ValueError("the query produced no value")
    if isinstance(value, bool):
        print("yes" if value else "no")
    elif isinstance(value, int):
        print(f"{value}{unit}")
    elif isinstance(value, float):
        scaled = abs(value) * 10**decimals
        if abs(scaled - int(scaled) - 0.5) < 1e-6:
            raise ValueError(f"{value!r} lies on a rounding boundary at {decimals} decimals")
        print(f"{value:.{decimals}f}{unit}")
    elif isinstance(value, (dt.date, dt.datetime)):
        print(value.isoformat())
    else:
        print(value)

'''


def render(loads: Sequence[tuple[str, str, tuple[str, ...]]], body: str, show_args: str) -> str:
    """The full script: prelude, ``var = load(name, dates)`` lines, body, ``show`` line."""
    lines = [PRELUDE]
    for var, name, dates in loads:
        extra = f", dates={dates!r}" if dates else ""
        lines.append(f"{var} = load({name!r}{extra})\n")
    lines.append(body.strip() + "\n")
    lines.append(f"show(result{', ' + show_args if show_args else ''})\n")
    return "".join(lines)


def run_inline(script: str, folder: Path) -> str:
    """Execute ``script`` as if it were ``folder/query.py``; returns what it printed.

    Exceptions from the query propagate (the caller drops the draft).
    """
    code = compile(script, str(folder / "query.py"), "exec")
    namespace = {"__name__": "__main__", "__file__": str(folder / "query.py")}
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        exec(code, namespace)
    return buffer.getvalue().strip()
