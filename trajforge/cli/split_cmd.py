"""``trajforge split``, ``trajforge push`` and ``trajforge export harbor|atif|sts``."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import typer

from trajforge.cli.common import EXIT_PARTIAL, EXIT_UNUSABLE, err, out, print_json, progress
from trajforge.errors import RecordError, UsageError
from trajforge.records import DatasetManifest, DatasetVersions, Status, load_record
from trajforge.splits import atif, harbor, sts
from trajforge.splits import split as split_stage
from trajforge.splits.atif import ExportOutcome
from trajforge.splits.push import push as push_dataset
from trajforge.splits.select import DEFAULT_HELD_OUT_SHARE
from trajforge.splits.tasks import load_tasks

DEFAULT_PERCENT = round(DEFAULT_HELD_OUT_SHARE * 100)


def versions() -> DatasetVersions:
    """Versions of the sandbox image and guard bundle available in this install."""
    from trajforge.verifiers.sandbox import image

    sandbox = f"{image.IMAGE_TAG}@recipe:{image.recipe_hash()[:12]}"
    from trajforge.guard import bundle_version

    guard = bundle_version()
    return DatasetVersions(sandbox_image=sandbox, guard_bundle=guard)


def split(
    source: Path = typer.Argument(..., help="OUT folder holding tasks/<id>/ (validated)."),
    dataset: Path = typer.Option(..., "-o", "--output", help="Dataset folder to write."),
    eval_per_family: list[str] = typer.Option(
        [],
        "--eval-per-family",
        help="Held-out size: N (each family), build=3,repair=2, or coding=40,data_analysis=150"
        f" (default: {DEFAULT_PERCENT}% of each family that spans 2+ groups;"
        " 0 holds out nothing).",
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the held-out selection."),
    near: float = typer.Option(0.8, "--near-threshold", help="MinHash similarity for near dups."),
    revision: str | None = typer.Option(None, "--revision", help="Revision name (default r-HASH)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Dedup accepted tasks, hold out test tasks group-aware, write parquet + card + manifest."""
    spec = split_stage.SplitSpec(tuple(eval_per_family), seed, near)
    summary = split_stage.run(source, dataset, spec, versions(), revision)
    if as_json:
        print_json(summary.model_dump(mode="json"))
    else:
        for config, per in summary.counts.items():
            for name, families in per.items():
                spread = ", ".join(f"{f} {n}" for f, n in families.items()) or "none"
                out.print(f"{config}/{name}: {sum(families.values())} tasks ({spread})")
        y = summary.yields
        out.print(
            f"candidates {y['candidates']}, accepted {y['by_status'].get(Status.ACCEPTED, 0)}, "
            f"duplicates removed {y['duplicates_exact']} exact + {y['duplicates_near']} near, "
            f"kept {y['kept']} → {dataset} (revision {summary.revision})"
        )
        held = [
            f"{f} {h.held_out} of {h.tasks} ({h.held_out_groups} of {h.groups} groups)"
            for f, h in summary.held_out.items()
            if h.held_out
        ]
        out.print(f"held out ({summary.holdout_rule}): {', '.join(held) or 'none'}")
        for family, why in summary.not_held_out.items():
            out.print(f"not held out: {family}: {why}")
        for line in summary.shortfalls:
            err.print(f"[yellow]shortfall:[/yellow] {line}")
    for problem in summary.problems:
        err.print(f"[red]unreadable:[/red] {problem}")
    raise typer.Exit(summary.exit_code())


def push(
    dataset: Path = typer.Argument(..., help="Dataset folder written by `trajforge split`."),
    to: str = typer.Option(..., "--to", help="hf://datasets/ORG/NAME or a local directory."),
    revision: str | None = typer.Option(
        None, "--revision", help="Tag/branch name (default: the manifest's revision)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Publish a dataset folder as a revision of a Hub dataset or a local git repository."""
    if revision is None:
        try:
            revision = load_record(DatasetManifest, dataset / "manifest.json").revision
        except RecordError as exc:
            raise UsageError(f"{dataset}: not a dataset folder ({exc})") from None
    result = push_dataset(dataset, to, revision)
    if as_json:
        print_json(result.model_dump(mode="json"))
    elif result.created:
        out.print(f"pushed {dataset} → {result.target} @ {result.revision} ({result.commit[:12]})")
    else:
        out.print(
            f"unchanged: {result.target} @ {result.revision} already has this content"
            f" ({result.commit[:12]}); no new commit"
        )


export_app = typer.Typer(help="Export tasks or sessions to other formats.", no_args_is_help=True)


@export_app.command("harbor")
def export_harbor(
    source: Path = typer.Argument(..., help="OUT folder holding tasks/<id>/."),
    target: Path = typer.Option(..., "-o", "--output", help="Folder for Harbor task dirs."),
    as_json: bool = typer.Option(False, "--json", help="Print outcomes as JSON."),
) -> None:
    """Write every accepted task as a Harbor task directory."""
    report = load_tasks(source)
    items = report.accepted
    outcomes = list(
        progress(harbor.export(items, target), len(items), "export harbor", quiet=as_json)
    )
    skipped = {k: v for k, v in report.by_status.items() if k != Status.ACCEPTED and v}
    failed = [o for o in outcomes if o.status != Status.ACCEPTED]
    if as_json:
        print_json(
            {
                "exported": [asdict(o) for o in outcomes],
                "skipped": skipped,
                "problems": report.problems,
            }
        )
    else:
        out.print(f"exported {len(outcomes) - len(failed)} Harbor tasks → {target}")
        if skipped:
            out.print(
                "not accepted (skipped): " + ", ".join(f"{k} {v}" for k, v in skipped.items())
            )
        for o in failed:
            err.print(f"[yellow]not exported:[/yellow] {o.task_id}: {o.reason}")
    if not items and not report.problems:
        err.print(f"[red]error:[/red] {source}: no accepted tasks to export")
        raise typer.Exit(EXIT_UNUSABLE)
    raise typer.Exit(EXIT_PARTIAL if failed or report.problems else 0)


@export_app.command("atif")
def export_atif(
    paths: list[Path] = typer.Argument(..., help="Session files or folders (any harness)."),
    target: Path = typer.Option(..., "-o", "--output", help="Folder for ATIF JSON files."),
    as_json: bool = typer.Option(False, "--json", help="Print outcomes as JSON."),
) -> None:
    """Write every session as an ATIF (Agent Trajectory Interchange Format) trajectory."""
    outcomes = list(progress(atif.export(paths, target), None, "export atif", quiet=as_json))
    _exported(outcomes, target, as_json, ("trajectories", "ATIF trajectories"))


@export_app.command("sts")
def export_sts(
    paths: list[Path] = typer.Argument(..., help="Session files or folders (any harness)."),
    target: Path = typer.Option(..., "-o", "--output", help="Folder for STS JSONL files."),
    as_json: bool = typer.Option(False, "--json", help="Print outcomes as JSON."),
) -> None:
    """Write every session as a Hub session trace (Session Trace Simple Format, JSONL)."""
    outcomes = list(progress(sts.export(paths, target), None, "export sts", quiet=as_json))
    _exported(outcomes, target, as_json, ("sessions", "STS session traces"))


def _exported(
    outcomes: list[ExportOutcome], target: Path, as_json: bool, names: tuple[str, str]
) -> None:
    """Say what a session export wrote and failed; exit 0, 1 (some inputs failed) or 2."""
    written = sum(len(o.written) for o in outcomes)
    failed = [o for o in outcomes if o.status != Status.ACCEPTED]
    if as_json:
        print_json({"inputs": [asdict(o) for o in outcomes], names[0]: written})
    else:
        out.print(f"wrote {written} {names[1]} → {target}")
        for o in failed:
            err.print(f"[red]failed:[/red] {o.reason}")
    if not written:
        raise typer.Exit(EXIT_UNUSABLE)
    raise typer.Exit(EXIT_PARTIAL if failed else 0)


def register(app: typer.Typer) -> None:
    app.command("split")(split)
    app.command("push")(push)
    app.add_typer(export_app, name="export")
