"""``trajforge train --config FILE.toml``: GRPO + LoRA with the harness in the loop."""

from __future__ import annotations

import sys
from contextlib import redirect_stdout
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import typer

from trajforge.cli.common import EXIT_PARTIAL, err, out, print_json
from trajforge.errors import UsageError


def train(
    config: Path = typer.Option(..., "--config", help="Train config (TOML); see examples/."),
    output_dir: Path | None = typer.Option(
        None, "--output-dir", help="Override the config's output_dir."
    ),
    overrides: list[str] = typer.Option(
        [], "--set", help="Override a setting: KEY.SUB=VALUE (e.g. grpo.learning_rate=1e-5)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Train a rank-32 LoRA adapter with GRPO; the task's hidden verifier is the reward."""
    from trajforge.train.config import load_train_config

    settings = load_train_config(config, overrides, output_dir)
    missing = [m for m in ("torch", "trl", "peft", "datasets") if find_spec(m) is None]
    if missing:
        raise UsageError(
            f"training needs {', '.join(missing)}: pip install torch==2.13.0 (CPU) or a CUDA "
            "build first, then pip install -e '.[train]'"
        )
    from trajforge.train import ranks
    from trajforge.train.trainer import train as run

    if ranks.is_main():
        err.print(
            f"training {settings.model.base} in {settings.harness} on {settings.dataset.path} "
            f"({settings.dataset.split}), {settings.trainer.max_steps} steps"
            + (f", {ranks.world()} processes" if ranks.world() > 1 else "")
        )
    with redirect_stdout(sys.stderr):  # the trainer prints its logs; stdout is for results
        summary = run(settings)
    if summary is None:  # not the main process: it prints the results
        return
    if as_json:
        print_json(summary)
    else:
        _print(summary)
    if summary["metrics"]["scored"] == 0:
        err.print("no rollout was scored: every one was an infrastructure error")
        raise typer.Exit(EXIT_PARTIAL)


def _print(summary: dict[str, Any]) -> None:
    metrics = summary["metrics"]
    out.print(f"adapter → {summary['adapter']}")
    out.print(
        f"  rollouts {metrics['rollouts']} (scored {metrics['scored']}), mean reward "
        f"{metrics['mean_reward']}, block rate {metrics['block_rate']}"
    )
    for family, row in metrics["per_family"].items():
        out.print(f"  {family}: success {row['success_rate']} over {row['scored']} scored")


def register(app: typer.Typer) -> None:
    app.command("train")(train)
