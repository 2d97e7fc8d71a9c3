"""What compiling a monorepo's imported workspace members costs each run, beside the run.

    python benchmarks/monorepo_setup.py TASK_DIR [--runs N] [--json]

``TASK_DIR``: a validated task whose environment has compile steps (``EnvironmentRecipe.builds``),
e.g. pi-mono's ``extend-f3dbdeb18afafe25`` from ``tests/validate/test_real_typescript.py`` or
``trajforge reconstruct ../shared/corpus/pi-mono --repos DIR`` then ``trajforge validate``. Its
environment is built (or taken from the cache) first and not timed. Then, in the local sandbox,
each ``N`` times with a reset before each:

- anchor: one run of the task's check on its oracle (with its hidden tests when it has some);
- setup with links only (the recipe without its builds);
- setup with links and the compile steps (what every validation and verify run pays).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from trajforge.protocols import Limits
from trajforge.records import Task, load_record
from trajforge.registry import SANDBOXES, create
from trajforge.verifiers.environments import for_task
from trajforge.verifiers.environments.session import EnvSandbox
from trajforge.verifiers.validate.files import read_tree, write_tree


def _timed_resets(box: EnvSandbox, workspace: Path, runs: int, check: str | None) -> list[float]:
    times = []
    with box.session(workspace, Limits(timeout_s=600)) as session:
        for _ in range(runs):
            began = time.perf_counter()
            session.reset(workspace)
            if check:
                session.run(["sh", "-c", check], timeout=600)
            times.append(time.perf_counter() - began)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("task_dir", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    task = load_record(Task, args.task_dir / "task.json")
    if task.environment is None or not any(r.builds for r in task.environment.recipes):
        print(f"{args.task_dir}: no compile steps in its environment", file=sys.stderr)
        return 2
    prepared = for_task(args.task_dir, task, create(SANDBOXES, "local", "sandbox"))
    with_builds = prepared.sandbox
    assert isinstance(with_builds, EnvSandbox)
    bare = [r.model_copy(update={"builds": ()}) for r in with_builds.recipes]
    links_only = EnvSandbox(with_builds.inner, bare, with_builds.env_root, with_builds.extra_path)
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        files = read_tree(args.task_dir / (task.oracle or task.workspace))
        files |= read_tree(args.task_dir / "tests") if (args.task_dir / "tests").is_dir() else {}
        write_tree(workspace, files)
        check = task.verifier.command
        figures = {
            "links_s": statistics.median(_timed_resets(links_only, workspace, args.runs, None)),
            "links_and_builds_s": statistics.median(
                _timed_resets(with_builds, workspace, args.runs, None)
            ),
            "anchor_check_s": statistics.median(
                _timed_resets(with_builds, workspace, args.runs, check)
            ),
        }
    steps = [s for r in task.environment.recipes for s in r.builds]
    if args.json:
        print(json.dumps({"task": task.id, "builds": steps, **figures}, indent=2))
        return 0
    print(f"task {task.id}: {len(steps)} compile step(s): {'; '.join(steps)}")
    print(f"anchor: reset + `{check}` on the oracle: {figures['anchor_check_s']:.2f} s (median)")
    print(f"setup, links only:           {figures['links_s']:.2f} s")
    print(f"setup, links + compile steps: {figures['links_and_builds_s']:.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
