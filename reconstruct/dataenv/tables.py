"""Load tabular inputs (CSV, parquet, JSON lines) and profile their columns for templates.

A bad file raises :class:`~trajforge.errors.UsageError` naming the file and what is wrong.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from trajforge.errors import UsageError
from trajforge.records import sha256_hex
from trajforge.scrub import Scrubber

SUFFIXES = {".csv": "csv", ".parquet": "parquet", ".jsonl": "jsonl", ".ndjson": "jsonl"}
BUNDLED = Path(__file__).resolve().parent / "data"
BUNDLED_FILES = ("orders.csv", "customers.jsonl", "products.parquet")
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
MAX_CATEGORIES = 30


@dataclass(frozen=True)
class Table:
    """One input table and the roles of its columns."""

    name: str
    """File name in the task workspace (``orders.csv``)."""
    var: str
    """Python identifier used for it in oracle queries (``orders``)."""
    frame: pl.DataFrame
    """The loaded rows (ISO date strings converted to dates)."""
    sha256: str
    """Hash of the file bytes written to workspaces."""
    dates_to_parse: tuple[str, ...] = ()
    """Columns ``load()`` in the query turns into dates."""
    measures: tuple[str, ...] = ()
    """Numeric columns that are not identifiers."""
    categories: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """String columns with few distinct values → their sorted values."""
    date_cols: tuple[str, ...] = ()
    """Date columns."""
    keys: tuple[str, ...] = ()
    """Columns whose non-null values are unique (identifiers)."""
    labels: tuple[str, ...] = ()
    """Unique string columns that are not named like identifiers (names, titles)."""
    nullable: tuple[str, ...] = ()
    """Columns with missing values."""


def stage_inputs(paths: list[Path], library: Path, scrub: Scrubber) -> list[Path]:
    """Copy the inputs into ``library`` under their file names (text formats scrubbed)."""
    seen: dict[str, Path] = {}
    staged = []
    for path in paths:
        kind = SUFFIXES.get(path.suffix.lower())
        if kind is None:
            known = ", ".join(sorted(SUFFIXES))
            raise UsageError(f"{path}: unsupported data file type {path.suffix!r} ({known})")
        if not path.is_file():
            raise UsageError(f"{path}: no such data file")
        if path.name in seen:
            raise UsageError(f"{path}: same file name as {seen[path.name]}; rename one of them")
        seen[path.name] = path
        target = library / path.name
        if kind == "parquet":
            shutil.copyfile(path, target)
        else:
            try:
                text = path.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                raise UsageError(f"{path}: not UTF-8 text ({exc.reason})") from None
            target.write_text(scrub.text(text), encoding="utf-8")
        staged.append(target)
    return staged


def load_table(path: Path, shown: Path | None = None) -> Table:
    """Read and profile one staged file; errors name ``shown`` (the user's path)."""
    frame, parse = _read(path, shown or path)
    if frame.height == 0 or frame.width == 0:
        raise UsageError(f"{shown or path}: the table is empty")
    var = re.sub(r"\W", "_", path.stem).strip("_").lower() or "table"
    if var[0].isdigit() or var in {"pl", "dt", "load", "show", "top", "result", "sys"}:
        var = f"t_{var}"
    return _profile(path.name, var, frame, sha256_hex(path.read_bytes()), parse)


def _read(path: Path, shown: Path) -> tuple[pl.DataFrame, tuple[str, ...]]:
    kind = SUFFIXES[path.suffix.lower()]
    try:
        if kind == "parquet":
            frame = pl.read_parquet(path)
        elif kind == "jsonl":
            frame = pl.read_ndjson(path)
        else:
            frame = pl.read_csv(path, try_parse_dates=True)
    except (pl.exceptions.PolarsError, OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"{shown}: cannot read as {kind}: {first}") from None
    return coerce_dates(frame)


def coerce_dates(frame: pl.DataFrame) -> tuple[pl.DataFrame, tuple[str, ...]]:
    """Turn ISO date strings and datetimes into dates; returns the converted column names."""
    parse = []
    for name, dtype in frame.schema.items():
        if dtype == pl.String:
            values = frame[name].drop_nulls().head(200).to_list()
            if values and all(ISO_DATE.match(v) for v in values):
                parse.append(name)
        elif dtype == pl.Datetime:
            parse.append(name)
    exprs = [
        pl.col(c).str.to_date("%Y-%m-%d", strict=False)
        if frame.schema[c] == pl.String
        else pl.col(c).dt.date()
        for c in parse
    ]
    return (frame.with_columns(exprs) if exprs else frame), tuple(parse)


def _profile(
    name: str, var: str, frame: pl.DataFrame, digest: str, parse: tuple[str, ...]
) -> Table:
    measures, categories, dates, keys, labels, nullable = [], {}, [], [], [], []
    for col, dtype in frame.schema.items():
        series = frame[col]
        if series.null_count():
            nullable.append(col)
        unique = series.drop_nulls().n_unique() == series.drop_nulls().len() > 1
        ident = bool(re.search(r"(^|_)(id|key|code|uuid)$", col.lower()))
        if unique and (ident or dtype == pl.String):
            keys.append(col)
        if dtype.is_numeric() and not ident and series.drop_nulls().n_unique() > 5:
            measures.append(col)
        elif dtype == pl.Date:
            dates.append(col)
        elif dtype == pl.String and not unique:
            values = series.drop_nulls().unique().sort().to_list()
            if 2 <= len(values) <= MAX_CATEGORIES and all(len(v) <= 40 for v in values):
                categories[col] = tuple(values)
        elif dtype == pl.String and unique and not ident:
            labels.append(col)
    return Table(
        name=name,
        var=var,
        frame=frame,
        sha256=digest,
        dates_to_parse=tuple(c for c in parse if c in dates),
        measures=tuple(measures),
        categories=categories,
        date_cols=tuple(dates),
        keys=tuple(keys),
        labels=tuple(labels),
        nullable=tuple(nullable),
    )


@dataclass(frozen=True)
class Join:
    """A fact table whose ``key`` column refers to a unique column of a dimension table."""

    fact: Table
    dim: Table
    key: str


def find_joins(tables: list[Table]) -> list[Join]:
    """Pairs of tables sharing a column that is unique in one and repeated in the other."""
    joins = []
    for dim in tables:
        for fact in tables:
            if fact is dim:
                continue
            for key in dim.keys:
                shared = key in fact.frame.columns and key not in fact.keys
                if shared and fact.frame.schema[key] == dim.frame.schema[key]:
                    joins.append(Join(fact, dim, key))
    return joins
