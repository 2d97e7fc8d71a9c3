"""``trajforge demo``: the whole flow that exists so far, offline, on the bundled sample dumps.

Reconstruct the samples and generate data-analysis tasks from the bundled tables, validate every
candidate (mined hidden tests, the control matrix in the sandbox), print the yield funnel per
family, split the accepted tasks into a dataset revision, push it to a local git hub, evaluate
(scripted replay vs give-up, in pi) and train (a tiny local model, two GRPO steps) on the pushed
revision, and audit the sample sessions with the guard.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import typer
from rich.table import Table

import trajforge
from trajforge.cli.common import EXIT_PARTIAL, Stages, err, out, print_json, progress
from trajforge.cli.demo_learn import print_learn
from trajforge.errors import UsageError
from trajforge.protocols import Sandbox
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.dataenv.generate import build as build_data
from trajforge.records import Status
from trajforge.registry import create
from trajforge.taskdir import load_task, task_dirs
from trajforge.verifiers.validate import report, run
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.context import Context, ContextSpec, build_context

SAMPLES = Path(trajforge.__file__).parent / "samples"
DATA_TASKS = 20
REVISION = "demo"
HELD_OUT = ("build=1,extend=1,repair=1,data_analysis=5",)
"""Held-out tasks per family and config in the demo revision (group-aware, seeded). The
samples' one qa task is never held out: the train stage learns on it (a share of "coding"
left which family it fell to to the seed and to how many tasks the samples yield)."""
DEMO_CONFIG = ValidateConfig(max_mutants=8)
"""Default rules, fewer mutants per task so the demo stays quick."""


STAGES = ("reconstruct", "data tasks", "validate", "split", "push", "replay", "eval", "train",
          "guard")  # fmt: skip
"""The demo's stages, each announced by one line on stderr as it starts."""


def demo(
    output: Path = typer.Option(Path("demo-out"), "-o", "--output", help="Where to write tasks."),
    backend: str = typer.Option("local", "--sandbox", help="Sandbox backend for validation."),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    stop_after: str = typer.Option(
        "guard", "--stop-after", help=f"Last stage to run, from validate on: {', '.join(STAGES)}."
    ),
) -> None:
    """Reconstruct the bundled sample sessions, then validate every task in the sandbox."""
    if stop_after not in STAGES[STAGES.index("validate") :]:
        raise UsageError(f"--stop-after {stop_after!r}: not one of {', '.join(STAGES[2:])}")
    stages = Stages(STAGES)
    with stages.run("reconstruct", f"the bundled sample sessions → {output}/tasks"):
        summary = pipeline.run([SAMPLES], output)
    with stages.run("data tasks", f"{DATA_TASKS} questions over the bundled tables"):
        data = build_data([], output, count=DATA_TASKS, seed=0)
    dataenv = {"tasks": len(data.ids), "written": len(data.written), "families": data.families}
    ctx = build_context(ContextSpec(backend, DEMO_CONFIG, out_dir=str(output), probe=False))
    sandbox = ctx.sandbox
    problem = sandbox.available()
    validation: dict[str, object] = {}
    rows: list[run.TaskRow] = []
    if problem:
        err.print(f"[yellow]sandbox {backend} unavailable, validation skipped:[/yellow] {problem}")
    else:
        total = len(task_dirs(output))
        with stages.run("validate", f"{total} candidates, control matrix in the {backend} sandbox"):
            validation, rows = _validate(output, ctx, as_json)
    later: dict[str, object] = {"dataenv": dataenv}
    if validation and stop_after != "validate":
        later |= _later_stages(output, sandbox, stages, as_json, stop_after)
    if as_json:
        print_json({"reconstruct": summary.model_dump(mode="json"), "validate": validation,
                    **later, "seconds": stages.seconds})  # fmt: skip
    else:
        _print(summary, validation, output)
        _print_later(later)
        out.print(f"demo done in {stages.timing()}")
    failed = (
        summary.exit_code() != 0 or bool(problem) or any(r.status == Status.ERROR for r in rows)
    )
    raise typer.Exit(EXIT_PARTIAL if failed else 0)


def _validate(
    output: Path, ctx: Context, quiet: bool
) -> tuple[dict[str, object], list[run.TaskRow]]:
    """Every candidate through the control matrix; (report, rows)."""
    total = len(task_dirs(output))
    jobs = max(1, min(4, os.cpu_count() or 1))
    bar = progress(iter(range(total)), total, "validate", quiet=quiet)

    def advance(_row: run.TaskRow) -> None:
        next(bar, None)

    rows = run.run(output, ctx, jobs, on_done=advance)
    list(bar)  # close the progress bar
    doc = report.write_reports(output, ctx.backend, ctx.image, DEMO_CONFIG)
    return doc.model_dump(mode="json"), rows


def _later_stages(
    output: Path, sandbox: Sandbox, stages: Stages, quiet: bool, last: str
) -> dict[str, object]:
    """Split, push to a local git hub, replay, eval + train on the pushed revision, guard: up
    to and including stage ``last``."""
    from trajforge.cli.demo_learn import run_eval, run_train, skipped
    from trajforge.cli.split_cmd import versions
    from trajforge.splits import split
    from trajforge.splits.push import push

    dataset = output / "dataset"
    done: dict[str, object] = {}
    with stages.run("split", f"dedup and held-out selection → {dataset}"):
        shutil.rmtree(dataset, ignore_errors=True)
        spec = split.SplitSpec(HELD_OUT)
        done["split"] = split.run(output, dataset, spec, versions(), REVISION).model_dump(
            mode="json"
        )
    if last == "split":
        return done
    with stages.run("push", f"revision {REVISION!r} → {output / 'hub'}"):
        try:
            pushed: dict[str, object] = push(dataset, str(output / "hub"), REVISION).model_dump()
        except UsageError as exc:  # re-validated tasks (e.g. after an upgrade) under the same tag
            pushed = {"refused": str(exc)}
    done["push"] = pushed
    why = skipped() or (f"push refused: {pushed['refused']}" if "refused" in pushed else None)
    steps = {
        "replay": ("each accepted pi repair through the real pi CLI and the guard",
                   lambda: _replay_repairs(output, sandbox)),
        "eval": ("scripted replay vs give-up in pi on the held-out split",
                 lambda: {"skipped": why} if why else run_eval(output, REVISION, quiet)),
        "train": ("warm start, then 2 GRPO steps of tiny:qwen2 in pi on the QA task",
                  lambda: {"skipped": why} if why else run_train(output, REVISION)),
        "guard": ("audit of the sample sessions' recorded tool calls", _guard),
    }  # fmt: skip
    for name, (what, step) in steps.items():
        if STAGES.index(name) > STAGES.index(last):
            break
        with stages.run(name, what):
            done[name] = step()
    return done


def _guard() -> dict[str, object]:
    from trajforge.guard.audit import audit
    from trajforge.guard.rules import load_bundle

    guard = audit([SAMPLES], load_bundle())
    return {
        "bundle": guard.bundle,
        "sessions": len(guard.sessions),
        "calls": sum(s.calls for s in guard.sessions),
        "blocks": sum(len(s.blocks) for s in guard.sessions),
        "flags": sum(len(s.flags) for s in guard.sessions),
    }


def _replay_repairs(output: Path, sandbox: Sandbox) -> dict[str, object]:
    """Each accepted repair replayed through the real pi CLI (when installed) and the guard."""
    from trajforge.registry import HARNESSES
    from trajforge.train.replay import replay_task
    from trajforge.train.rollout_spec import setup_for

    version = create(HARNESSES, "pi", "harness").version()
    if version is None:
        return {"skipped": "pi is not installed: run `trajforge harness install`"}
    rewards = {}
    setup = setup_for("pi", sandbox)
    for task_dir in sorted(p.parent for p in (output / "tasks").glob("repair-*/task.json")):
        task = load_task(task_dir)
        if task.validation.status == Status.ACCEPTED and task.source.harness == "pi":
            rewards[task.id] = replay_task(setup, task_dir).reward
    return {"harness": "pi", "version": version, "rewards": rewards}


def _print_later(later: dict[str, object]) -> None:
    split, push, guard = later.get("split"), later.get("push"), later.get("guard")
    data = later["dataenv"]
    if isinstance(data, dict):
        out.print(
            f"data-analysis tasks from the bundled tables: {data['tasks']} ({data['families']})"
        )
    if isinstance(split, dict):
        out.print(f"dataset revision {split['revision']!r} → {split['dataset']}: {split['counts']}")
    if isinstance(push, dict) and "refused" in push:
        out.print(f"push refused, the existing revision is kept: {push['refused']}")
    elif isinstance(push, dict):
        new = "new commit" if push["created"] else "unchanged"
        out.print(f"pushed to {push['target']} @ {push['revision']} ({new}, {push['commit'][:12]})")
    replay = later.get("replay")
    if isinstance(replay, dict):
        if "skipped" in replay:
            out.print(f"replay through a real harness skipped: {replay['skipped']}")
        else:
            out.print(f"replayed through pi {replay['version']}: rewards {replay['rewards']}")
    print_learn(later)
    if isinstance(guard, dict):
        out.print(
            f"guard bundle {guard['bundle']}: {guard['calls']} recorded tool calls in "
            f"{guard['sessions']} sessions → {guard['blocks']} blocked, {guard['flags']} flagged"
        )


def _print(
    summary: pipeline.ReconstructSummary, validation: dict[str, object], output: Path
) -> None:
    sessions = sum(summary.sessions.values())
    out.print(
        f"reconstructed {sessions} sample sessions → {summary.written} new tasks in {output}/tasks"
    )
    funnel = validation.get("funnel")
    if not isinstance(funnel, dict):
        return
    table = Table(title="validation yield per family (sandboxed control matrix)")
    for column in ("family", *report.STAGES):
        table.add_column(column.replace("_", " "))
    for family, counts in funnel.items():
        table.add_row(family, *(str(counts[s]) for s in report.STAGES))
    out.print(table)
    out.print(f"evidence in each task.json; report: {output / 'report.html'}")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
