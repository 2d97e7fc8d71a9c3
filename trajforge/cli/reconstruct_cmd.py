"""``trajforge reconstruct``: sessions → task candidates."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from trajforge.cli.common import err, out, print_json, progress
from trajforge.config import read_toml
from trajforge.errors import UsageError
from trajforge.executors import ExecutorConfig, make_executor
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.baserepo import load_base
from trajforge.reconstruct.hub_dumps import Fetched, HubOptions, HubRef, fetch, is_hub, parse_ref
from trajforge.reconstruct.inputs import expand_paths
from trajforge.reconstruct.repos import RepoSearch, check_dirs, parse_map
from trajforge.reconstruct.summary import SessionOutcome
from trajforge.records import FAMILIES
from trajforge.registry import EXECUTORS, FORMATS

SESSION_LINES = 50
"""Sessions listed one per line in the table output (``--json`` has every one)."""
FORMAT_HELP = "auto|" + "|".join(FORMATS)
EXECUTOR_HELP = "|".join(EXECUTORS) + ": where inputs are processed (ray needs the ray extra)."


def reconstruct(
    paths: list[str] = typer.Argument(
        ...,
        metavar="PATH",
        help="Session files, directories, .gz, or Hub datasets hf://datasets/ORG/NAME\\[@REV]\\[/PATH].",
    ),
    output: Path = typer.Option(..., "-o", "--output", help="Output folder (OUT)."),
    fmt: str = typer.Option("auto", "--format", help=FORMAT_HELP),
    base_repo: str | None = typer.Option(
        None, "--base-repo", help="DIR\\[@REV]: git checkout the sessions started from."
    ),
    repos: list[str] = typer.Option(
        [], "--repos", help="Folder of git checkouts the sessions ran in (repeatable)."
    ),
    repo_map: list[str] = typer.Option(
        [], "--repo-map", help="OLD=DIR: a recorded cwd prefix lives at DIR here (repeatable)."
    ),
    config_file: Path | None = typer.Option(
        None, "--config", help="TOML with \\[reconstruct] repos = \\[...], repo_map = {OLD = DIR}."
    ),
    executor_name: str = typer.Option("local", "--executor", help=EXECUTOR_HELP),
    jobs: int = typer.Option(
        1,
        "-j",
        "--jobs",
        min=1,
        help="Inputs at a time (local executor: a process pool; 1 = inline).",
    ),
    ray_address: str | None = typer.Option(
        None, "--ray-address", help="Ray cluster address (default: RAY_ADDRESS, else local)."
    ),
    include: list[str] = typer.Option(
        [],
        "--include",
        help="hf:// inputs: glob of files to read (default *.jsonl, *.json, "
        "*.jsonl.gz; repeatable).",
    ),
    exclude: list[str] = typer.Option(
        [], "--exclude", help="hf:// inputs: glob of files not to read (repeatable)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Parse sessions, replay their workspaces and write task candidates to OUT/tasks/."""
    if fmt != "auto" and fmt not in FORMATS:
        raise typer.BadParameter(
            f"unknown format {fmt!r}; known: {FORMAT_HELP}", param_hint="--format"
        )
    if executor_name not in EXECUTORS:
        known = ", ".join(EXECUTORS)
        raise typer.BadParameter(
            f"unknown executor {executor_name!r}; known: {known}", param_hint="--executor"
        )
    base = load_base(base_repo) if base_repo else None
    search = repo_search(repos, repo_map, config_file)
    config = ExecutorConfig(jobs=jobs, address=ray_address)
    executor = make_executor(executor_name, config)
    local = [Path(p) for p in paths if not is_hub(p)]
    refs = [parse_ref(p) for p in paths if is_hub(p)]  # a malformed one fails before any work
    hub = fetch_all(refs, HubOptions(include=tuple(include), exclude=tuple(exclude)), output,
                    quiet=as_json)  # fmt: skip
    inputs, _ = expand_paths(local)
    count = len(inputs) + sum(len(f.files) for f in hub)
    bar = iter(progress(range(count), count, "reconstruct", quiet=as_json))
    next(bar, None)

    def advance(_path: Path) -> None:
        next(bar, None)

    try:
        spec = pipeline.ReconstructSpec(fmt=fmt, base=base, repos=search)
        summary = pipeline.run(local, output, spec, advance, executor, hub)
    finally:
        executor.close()
    if as_json:
        print_json(summary.model_dump(mode="json"))
    else:
        _print_summary(summary, output)
    raise typer.Exit(summary.exit_code())


def _print_summary(summary: pipeline.ReconstructSummary, output: Path) -> None:
    table = Table(title="candidates per harness and family")
    counted = {f for per in summary.candidates.values() for f in per}
    families = [f for f in FAMILIES if f in counted]  # data tasks come from `dataenv build`
    table.add_column("harness")
    table.add_column("sessions", justify="right")
    for family in families:
        table.add_column(family, justify="right")
    for harness, count in sorted(summary.sessions.items()):
        per = summary.candidates.get(harness, {})
        table.add_row(harness, str(count), *(str(per.get(f, 0)) for f in families))
    out.print(table)
    _print_datasets(summary)
    _print_triage(summary)
    _print_repos(summary)
    _print_sessions(summary)
    out.print(
        f"tasks written: {summary.written} (already present: {summary.existing})"
        f" → {output / 'tasks'}"
    )
    if summary.redactions:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(summary.redactions.items()))
        out.print(f"secrets redacted: {kinds}")
    if summary.skipped_records:
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(summary.skipped_records.items()))
        out.print(f"records skipped: {kinds}")
    if summary.divergences:
        out.print(f"replay divergences: {summary.divergences} (listed in each task.json)")
    for warning in summary.warnings:
        err.print(f"[yellow]warning:[/yellow] {warning}")
    for item in summary.inputs:
        if item.error:
            err.print(f"[red]failed:[/red] {item.error}")
    for cand in summary.failed_candidates:
        err.print(f"[red]failed candidate ({cand.stage}):[/red] {cand.file}: {cand.reason}")


def repo_search(
    repos: list[str], repo_map: list[str], config_file: Path | None
) -> RepoSearch | None:
    """``--repos`` / ``--repo-map`` after the config ``[reconstruct]`` keys; None: unused."""
    dirs, pairs = list(repos), list(repo_map)
    if config_file is not None:
        table = read_toml(config_file, UsageError, "config file").get("reconstruct", {})
        if not isinstance(table, dict) or not set(table) <= {"repos", "repo_map"}:
            raise UsageError(
                f"{config_file}: [reconstruct] takes repos = [...] and repo_map = {{}}"
            )
        listed, mapped = table.get("repos", []), table.get("repo_map", {})
        if not isinstance(listed, list) or not isinstance(mapped, dict):
            raise UsageError(f"{config_file}: repos must be a list, repo_map a table OLD = DIR")
        dirs = [str(d) for d in listed] + dirs
        pairs = [f"{old}={new}" for old, new in mapped.items()] + pairs
    if not dirs and not pairs:
        return None
    return RepoSearch(dirs=check_dirs(dirs), mapping=tuple(parse_map(p) for p in pairs))


def register(app: typer.Typer) -> None:
    app.command("reconstruct")(reconstruct)


def _print_triage(summary: pipeline.ReconstructSummary) -> None:
    """Episodes triage dropped, per harness and reason, and the turns it merged."""
    reasons = sorted({r for c in summary.triage.values() for r in c.dropped})
    if not reasons and not any(c.merged for c in summary.triage.values()):
        return
    table = Table(title="triage: episodes that are not tasks, by reason")
    table.add_column("harness")
    table.add_column("merged", justify="right")
    for reason in reasons:
        table.add_column(reason.replace("_", " "), justify="right")
    for harness, counts in sorted(summary.triage.items()):
        cells = (str(counts.dropped.get(r, 0)) for r in reasons)
        table.add_row(harness, str(counts.merged), *cells)
    out.print(table)


def _print_repos(summary: pipeline.ReconstructSummary) -> None:
    """Sessions per harness by repository outcome (``--repos``)."""
    if not summary.repos:
        return
    statuses = ("found", "ambiguous", "not_found")
    table = Table(title="repositories (--repos): sessions by outcome")
    table.add_column("harness")
    for status in statuses:
        table.add_column(status.replace("_", " "), justify="right")
    for harness, counts in sorted(summary.repos.items()):
        table.add_row(harness, *(str(counts.get(s, 0)) for s in statuses))
    out.print(table)


def fetch_all(refs: list[HubRef], options: HubOptions, output: Path, quiet: bool) -> list[Fetched]:
    """Every dataset input fetched in turn, with the Hub client's download bars on stderr
    (none with ``--json``); one that cannot be read is its row's error."""
    if not refs:
        return []
    from huggingface_hub.utils import disable_progress_bars

    if quiet:
        disable_progress_bars()
    fetched = []
    for ref in refs:
        if not quiet:
            err.print(f"fetching {ref.text}")
        fetched.append(fetch(ref, options, output / "inputs"))
    return fetched


def _print_datasets(summary: pipeline.ReconstructSummary) -> None:
    """Each Hub dataset input: the commit it resolved to, the files read, its licence."""
    for row in summary.datasets:
        if row.error is not None:
            continue  # said with the failed inputs
        source = f" (read back from the parquet at {row.parquet})" if row.parquet else ""
        license = (
            f"licence {row.license}"
            if row.license
            else "[yellow]no licence in its dataset card[/yellow]"
        )
        out.print(
            f"{row.url} → commit {row.commit}: {row.files} session file(s){source}; {license}"
        )


def _print_sessions(summary: pipeline.ReconstructSummary) -> None:
    """One line per session (the first :data:`SESSION_LINES`): repository, files, episodes."""
    rows = summary.session_rows
    if not rows:
        return
    out.print(f"sessions ({len(rows)}): repository, files recovered, episodes kept and dropped")
    for row in rows[:SESSION_LINES]:
        out.print(f"  {session_line(row)}", markup=False)
    if len(rows) > SESSION_LINES:
        out.print(f"  ... and {len(rows) - SESSION_LINES} more, see --json")


def session_line(row: SessionOutcome) -> str:
    """``file#session  harness  repo: …  files R/N recovered  kept K (…)  dropped D (…)``."""
    name = "/".join(row.file.rstrip("/").split("/")[-2:])  # folder/file: session.jsonl is common
    if row.session and row.session not in name:  # ids often share a time prefix: the end
        name = f"{name}#{row.session if len(row.session) <= 10 else '…' + row.session[-8:]}"
    parts = [name, row.harness, f"repo: {_repo_text(row)}"]
    if row.error is not None:
        return "  ".join([*parts, f"failed: {row.error}"])
    files = row.files
    recovered = f"files {files.recovered}/{files.needed} recovered" if files.needed else "files -"
    pairs = ((files.partial, "partial"), (files.missing, "missing"))
    lacking = [f"{n} {what}" for n, what in pairs if n]
    parts.append(recovered + (f" ({', '.join(lacking)})" if lacking else ""))
    parts.append(_counted("kept", row.kept, len(row.kept)))
    parts.append(_counted("dropped", row.dropped, 3))
    if row.failed:
        parts.append(f"failed {row.failed}")
    return "  ".join(parts)


def _repo_text(row: SessionOutcome) -> str:
    if row.repo is None:
        return "not looked for"
    if row.found_by == "base_repo":
        return "from --base-repo"
    if row.repo == "found":
        commit = f" @{row.commit[:7]}" if row.commit else ""
        return f"found by {row.found_by}{commit}"
    if row.repo == "ambiguous":
        where = row.repository.rstrip("/").rsplit("/", 1)[-1] if row.repository else "?"
        return f"ambiguous commit in {where}"
    return "not found"


def _counted(label: str, counts: Mapping[Any, int], shown: int) -> str:
    """``dropped 5 (live_state 3, conversation 1, +1 more)``: the total and its largest parts."""
    total = sum(counts.values())
    if not total:
        return f"{label} 0"
    top = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))[:shown]
    parts = [f"{key} {n}" for key, n in top]
    rest = total - sum(n for _, n in top)
    return f"{label} {total} ({', '.join(parts + ([f'+{rest} more'] if rest else []))})"
