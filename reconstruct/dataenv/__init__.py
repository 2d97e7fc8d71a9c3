"""Data-analysis environments: question/answer tasks generated from tabular files.

``build`` turns CSV / parquet / JSON-lines tables (or the bundled demo tables) into task
folders whose oracle is a stored polars query (``oracle/query.py``);
``trajforge.verifiers.dataenv_validate`` re-executes those queries in the sandbox. See
``docs/qa.md``.
"""

from __future__ import annotations

from trajforge.reconstruct.dataenv.generate import (
    FAMILIES,
    ORDER,
    BuildReport,
    build,
    default_inputs,
)

__all__ = ["FAMILIES", "ORDER", "BuildReport", "build", "default_inputs"]
