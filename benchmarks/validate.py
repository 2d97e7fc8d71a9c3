"""The whole control matrix versus three plain oracle runs, on the fixture tasks.

    python benchmarks/validate.py [--jobs N] [--max-mutants N] [--json] [--check]

Reconstructs tests/fixtures/sessions, picks one build, extend and repair task per harness
(command verifiers), then measures:

- anchor: three plain runs of each task's check on its oracle, one sandbox session per task,
  tasks one after another;
- the whole matrix (oracle ×3, empty, start / pre-fix, stub, probes, mutants) with ``-j 1``
  and with ``-j N``.

Goal (issue 4): matrix ≤ 3× the anchor, by batching mutants (pytest imported once, early exit,
killers first) and running tasks in parallel. ``--check`` exits 1 when the ``-j N`` figure
misses it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from trajforge.protocols import Limits
from trajforge.reconstruct import pipeline
from trajforge.records import Task, load_record
from trajforge.registry import SANDBOXES, create
from trajforge.taskdir import load_task
from trajforge.verifiers.teacher.mined import prepare
from trajforge.verifiers.validate import run
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.context import Context

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "sessions"
GOAL = 3.0


def pick_tasks(out: Path) -> list[Path]:
    chosen: dict[tuple[str, str], Path] = {}
    for path in sorted(out.glob("tasks/*/task.json")):
        task = load_record(Task, path)
        if task.family != "qa" and task.verifier.kind != "none":
            chosen.setdefault((task.source.harness, task.family), path.parent)
    return sorted(chosen.values())


def plain_oracle_runs(sandbox: object, dirs: list[Path]) -> float:
    start = time.monotonic()
    for task_dir in dirs:
        task, _ = prepare(task_dir, load_task(task_dir))
        oracle = task_dir / "oracle"
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp) / "ws"
            shutil.copytree(oracle, ws)
            if (task_dir / "tests").is_dir():
                shutil.copytree(task_dir / "tests", ws, dirs_exist_ok=True)
            with sandbox.session(ws, Limits(timeout_s=60)) as box:  # type: ignore[attr-defined]
                for _ in range(3):
                    box.reset(ws)
                    box.run(task.verifier.command)
    return time.monotonic() - start


def matrix(sandbox: object, src: Path, cfg: ValidateConfig, jobs: int) -> tuple[float, dict]:  # type: ignore[type-arg]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        shutil.copytree(src, out)
        ctx = Context(sandbox, "local", "host", cfg)  # type: ignore[arg-type]
        start = time.monotonic()
        rows = run.run(out, ctx, jobs)
        wall = time.monotonic() - start
    return wall, {r.status: sum(1 for x in rows if x.status == r.status) for r in rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--max-mutants", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    sandbox = create(SANDBOXES, "local", "sandbox")
    if problem := sandbox.available():
        print(f"local sandbox unavailable: {problem}", file=sys.stderr)
        return 2
    cfg = ValidateConfig(max_mutants=args.max_mutants)
    with tempfile.TemporaryDirectory() as tmp:
        full, picked = Path(tmp) / "full", Path(tmp) / "picked"
        pipeline.run([FIXTURES], full)
        dirs = pick_tasks(full)
        for task_dir in dirs:
            shutil.copytree(task_dir, picked / "tasks" / task_dir.name)
        dirs = sorted((picked / "tasks").iterdir())
        anchor = plain_oracle_runs(sandbox, dirs)
        seq, statuses = matrix(sandbox, picked, cfg, 1)
        par, _ = matrix(sandbox, picked, cfg, args.jobs)
    figures = {
        "tasks": len(dirs),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "anchor_3_plain_oracle_runs_s": round(anchor, 2),
        "matrix_j1_s": round(seq, 2),
        f"matrix_j{args.jobs}_s": round(par, 2),
        "ratio_j1": round(seq / anchor, 2),
        f"ratio_j{args.jobs}": round(par / anchor, 2),
        "goal_ratio": GOAL,
        "statuses": statuses,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:32} {value}")
    return 1 if args.check and par / anchor > GOAL else 0


if __name__ == "__main__":
    sys.exit(main())
