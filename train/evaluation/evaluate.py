"""One eval run: refuse incomplete inputs, freeze them, run both arms, write results + reports.

::

    OUT/
      config.json             the full resolved configuration
      deployment_units.json   one DeploymentUnit per arm (the frozen inputs)
      tasks/<id>/             the held-out tasks rebuilt from the dataset revision
      results.parquet         one row per attempt
      metrics.json            per family (and all) → per arm figures + adapter-minus-base
      report.md, report.html  tables, charts (inline SVG), failures per family
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.parquet as pq

from trajforge.errors import UsageError
from trajforge.protocols import Sandbox
from trajforge.records import DeploymentUnit, RolloutStatus
from trajforge.registry import SANDBOXES, create
from trajforge.train.evaluation.arms import deployment_units
from trajforge.train.evaluation.config import EvalConfig
from trajforge.train.evaluation.dataset import LoadedDataset, load_dataset
from trajforge.train.evaluation.metrics import compute
from trajforge.train.evaluation.report import render_html, render_md
from trajforge.train.evaluation.run import run_all

OUTPUTS = (
    "config.json",
    "deployment_units.json",
    "results.parquet",
    "metrics.json",
    "report.md",
    "report.html",
    "tasks",
)
RESULTS_SCHEMA = pa.schema(
    [
        ("arm", pa.string()),
        ("policy", pa.string()),
        ("task", pa.string()),
        ("family", pa.string()),
        ("attempt", pa.int64()),
        ("status", pa.string()),
        ("reward", pa.float64()),
        ("verifier_reward", pa.float64()),
        ("success", pa.bool_()),
        ("calls", pa.int64()),
        ("session_tool_calls", pa.int64()),
        ("blocked", pa.int64()),
        ("block_rules", pa.list_(pa.string())),
        ("wall_s", pa.float64()),
        ("reasons", pa.list_(pa.string())),
        ("answer", pa.string()),
        ("stderr_tail", pa.string()),
        ("rollout_id", pa.string()),
    ]
)


@dataclass(frozen=True)
class Prepared:
    """Everything checked before the first attempt runs."""

    config: EvalConfig
    units: dict[str, DeploymentUnit]
    dataset: LoadedDataset
    sandbox: Sandbox
    out: Path


def _clear(out: Path, overwrite: bool) -> None:
    existing = [name for name in OUTPUTS if (out / name).exists()]
    if existing and not overwrite:
        raise UsageError(
            f"output_dir {out}: already holds an eval run ({', '.join(existing)}); "
            "give a new --output-dir or --overwrite"
        )
    for name in existing:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()


def prepare(config: EvalConfig, overwrite: bool = False) -> Prepared:
    """Refuse to start on anything missing; freeze the inputs under the output folder."""
    units = deployment_units(config)
    sandbox: Sandbox = create(SANDBOXES, config.sandbox, "sandbox")
    problem = sandbox.available()
    if problem:
        raise UsageError(f"sandbox {config.sandbox!r} unavailable: {problem}")
    out = Path(config.output_dir).expanduser()
    _clear(out, overwrite)
    out.mkdir(parents=True, exist_ok=True)
    dataset = load_dataset(config.dataset, out)
    resolved = {
        **config.model_dump(mode="json"),
        "resolved": {
            "dataset_sha256": dataset.manifest_sha256,
            "tasks": [t.id for t in dataset.tasks],
        },
    }
    _write_json(out / "config.json", resolved)
    _write_json(
        out / "deployment_units.json",
        {name: unit.model_dump(mode="json") for name, unit in units.items()},
    )
    return Prepared(config, units, dataset, sandbox, out)


def _write_json(path: Path, data: Any) -> None:
    path.write_bytes(orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")


def info_of(prep: Prepared) -> dict[str, Any]:
    """The frozen inputs as shown in metrics.json and the reports."""
    cfg = prep.config
    return {
        "dataset": {**cfg.dataset.model_dump(mode="json"), "sha256": prep.dataset.manifest_sha256},
        "k": cfg.k,
        "budget": cfg.budget.model_dump(mode="json"),
        "sampling": cfg.sampling.model_dump(mode="json"),
        "bootstrap": cfg.bootstrap.model_dump(mode="json"),
        "deployment_units": {
            name: unit.model_dump(mode="json", exclude={"provenance"})
            for name, unit in prep.units.items()
        },
    }


def write_results(out: Path, rows: list[dict[str, Any]]) -> None:
    """``results.parquet``: one row per attempt."""
    table = pa.Table.from_pylist(rows, schema=RESULTS_SCHEMA)
    pq.write_table(table, out / "results.parquet", compression="zstd")


def execute(
    prep: Prepared, on_done: Callable[[dict[str, Any]], None] | None = None
) -> dict[str, Any]:
    """Run every attempt, write results, metrics and reports; returns metrics.json's content."""
    cfg = prep.config
    rows = run_all(cfg, prep.dataset.tasks, prep.sandbox, on_done)
    write_results(prep.out, rows)
    boot = cfg.bootstrap.model_dump()
    metrics = compute(rows, cfg.k, boot)
    info = info_of(prep)
    doc = {
        "run": info,
        "tasks": len(prep.dataset.tasks),
        "attempts": len(rows),
        "errors": sum(r["status"] == RolloutStatus.ERROR for r in rows),
        "metrics": metrics,
    }
    _write_json(prep.out / "metrics.json", doc)
    (prep.out / "report.md").write_text(render_md(info, metrics, rows))
    (prep.out / "report.html").write_text(render_html(info, metrics, rows))
    return doc
