"""``trajforge eval --config FILE.toml``: adapter vs base inside the same harness, per family."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from trajforge.cli.common import EXIT_PARTIAL, err, out, print_json, progress


def eval_cmd(
    config: Path = typer.Option(..., "--config", "-c", help="Eval configuration (TOML)."),
    output_dir: Path | None = typer.Option(
        None, "--output-dir", "-o", help="Where results go (overrides output_dir)."
    ),
    overrides: list[str] = typer.Option(
        [], "--set", help="Override a setting, e.g. --set k=3 --set budget.max_steps=8."
    ),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Replace an earlier run's files in the output folder."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the metrics summary as JSON."),
) -> None:
    """Run k attempts per held-out task for both arms; write results.parquet and reports."""
    from trajforge.train.evaluation.config import load_config
    from trajforge.train.evaluation.evaluate import execute, prepare

    settings = load_config(config, overrides)
    if output_dir is not None:
        settings = settings.model_copy(update={"output_dir": str(output_dir)})
    prep = prepare(settings, overwrite)
    total = len(prep.dataset.tasks) * settings.k * 2
    err.print(
        f"eval: {len(prep.dataset.tasks)} tasks × {settings.k} attempts × 2 arms "
        f"via {settings.harness} → {prep.out}"
    )
    bar = progress(iter(range(total)), total, "eval", quiet=as_json)

    def advance(_row: dict[str, Any]) -> None:
        next(bar, None)

    doc = execute(prep, advance)
    list(bar)  # close the progress bar
    if as_json:
        print_json({"output_dir": str(prep.out), **doc})
    else:
        _print(doc, prep.out)
    if doc["errors"]:
        err.print(f"[yellow]{doc['errors']} attempt(s) unscored (status error): see report.md")
        raise typer.Exit(EXIT_PARTIAL)


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _print(doc: dict[str, Any], where: Path) -> None:
    k = doc["run"]["k"]
    confidence = round(100 * doc["run"]["bootstrap"]["confidence"])
    table = Table(title="adapter vs base (success = reward 1)")
    heads = ("family", "tasks", "base", "adapter", "Δ", f"{confidence}% CI", f"pass@{k} b/a")
    for col in heads:
        table.add_column(col, no_wrap=True)
    for family, group in doc["metrics"].items():
        b, a, d = group["base"], group["adapter"], group["difference"]
        ci = d["success_ci"]
        table.add_row(
            family,
            str(b["tasks"]),
            _fmt(b["success_rate"]),
            _fmt(a["success_rate"]),
            _fmt(d["success_rate"]),
            "–" if ci is None else f"[{ci[0]:+.2f},{ci[1]:+.2f}]",
            f"{_fmt(b[f'pass_at_{k}'])}/{_fmt(a[f'pass_at_{k}'])}",
        )
    out.print(table)
    out.print(f"results: {where / 'results.parquet'}; report: {where / 'report.html'}")


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_cmd)
