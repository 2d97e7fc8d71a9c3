"""The control matrix of the TypeScript (vitest) task versus three plain runs of its tests.

    python benchmarks/ts_matrix.py [--max-mutants N] [--oracle-runs N] [--json]

The task is the pi session of ``tests/fixtures/sessions/ts/pi/tstext.jsonl`` (``truncateWords``
added to a vitest package), reconstructed with ``--repos`` against the ``tstext`` checkout of
``tests/fixtures/repos.py``. Its environment (``npm ci`` of vitest 3.2) is built first, into a
temporary cache, and not timed. Then, in the local sandbox with that environment:

- anchor: three plain runs of ``npx vitest run`` on the oracle with the hidden tests, one
  sandbox session, a reset before each run (no report, no bail);
- the matrix of ``trajforge validate`` (mined teacher: the agent's own vitest tests) — oracle
  runs, empty, start, stub, mutants of the changed lines, each run through vitest's JUnit
  report — at the given settings (default: validate's own, ``oracle_runs=3``,
  ``max_mutants=20``) and at the test suite's (``oracle_runs=2``, ``max_mutants=8``).

Node runs get ``--disable-wasm-trap-handler`` in both (validation adds it; vite's WebAssembly
cannot reserve its guard pages under the local sandbox's memory limit otherwise).
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

sys.path.append(str(Path(__file__).resolve().parents[1]))  # for tests.fixtures

from tests.fixtures.repos import make_repo
from trajforge.protocols import Limits, Sandbox
from trajforge.reconstruct import pipeline
from trajforge.reconstruct.repos import RepoSearch
from trajforge.records import Task, load_record
from trajforge.registry import SANDBOXES, create
from trajforge.verifiers.environments import for_task
from trajforge.verifiers.environments.cache import CACHE_ENV
from trajforge.verifiers.teacher.mined import prepare
from trajforge.verifiers.validate import run
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.context import Context
from trajforge.verifiers.validate.runners import NODE_BASE

ROOT = Path(__file__).resolve().parent.parent
SESSION = ROOT / "tests" / "fixtures" / "sessions" / "ts" / "pi" / "tstext.jsonl"
SUITE = ValidateConfig(max_mutants=8, oracle_runs=2)


def reconstruct(scratch: Path) -> Path:
    """OUT with the one extend task of the TypeScript session."""
    make_repo("tstext", scratch / "repos" / "tstext")
    out = scratch / "out"
    spec = pipeline.ReconstructSpec(repos=RepoSearch(dirs=(str(scratch / "repos"),)))
    assert pipeline.run([SESSION], out, spec).written == 1
    return out


def task_dir(out: Path) -> Path:
    (path,) = out.glob("tasks/*/task.json")
    return path.parent


def plain_runs(sandbox: Sandbox, folder: Path, scratch: Path) -> tuple[float, list[int]]:
    """Wall time and exit codes of three plain runs of the task's tests on its oracle."""
    task, _ = prepare(folder, load_record(Task, folder / "task.json"))
    boxed = for_task(folder, task, sandbox).sandbox  # builds the environment: not timed
    ws = scratch / "plain"
    shutil.copytree(folder / "oracle", ws)
    shutil.copytree(folder / "tests", ws, dirs_exist_ok=True)
    codes = []
    start = time.monotonic()
    with boxed.session(ws, Limits(timeout_s=60)) as box:
        for _ in range(3):
            box.reset(ws)
            ran = box.run(task.verifier.command or "", env={"NODE_OPTIONS": NODE_BASE})
            codes.append(ran.exit_code)
    return time.monotonic() - start, codes


def matrix(sandbox: Sandbox, src: Path, cfg: ValidateConfig, scratch: Path) -> dict[str, object]:
    """Wall time of validate on a fresh copy of OUT, with what it ran."""
    out = scratch / f"matrix-{cfg.oracle_runs}-{cfg.max_mutants}"
    shutil.copytree(src, out)
    start = time.monotonic()
    (row,) = run.run(out, Context(sandbox, "local", "host", cfg))
    wall = time.monotonic() - start
    validation = load_record(Task, task_dir(out) / "task.json").validation
    summary = validation.evidence.mutant_summary
    runs = sum(len(cell.runs) for cell in validation.controls.values()) + len(validation.mutants)
    return {
        "wall_s": round(wall, 2),
        "status": row.status.value,
        "vitest_runs": runs,
        "s_per_run": round(wall / runs, 2),
        "mutants": len(validation.mutants),
        "kill_rate": summary.kill_rate if summary is not None else None,
    }


def _wall(figures: dict[str, object]) -> float:
    wall = figures["wall_s"]
    assert isinstance(wall, float)
    return wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-mutants", type=int, default=20)
    parser.add_argument("--oracle-runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sandbox = create(SANDBOXES, "local", "sandbox")
    if problem := sandbox.available():
        print(f"local sandbox unavailable: {problem}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="trajforge-ts-bench-") as tmp:
        scratch = Path(tmp)
        os.environ[CACHE_ENV] = str(scratch / "env-cache")
        out = reconstruct(scratch)
        anchor, codes = plain_runs(sandbox, task_dir(out), scratch)
        chosen = ValidateConfig(max_mutants=args.max_mutants, oracle_runs=args.oracle_runs)
        full = matrix(sandbox, out, chosen, scratch)
        suite = matrix(sandbox, out, SUITE, scratch)
    figures = {
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "anchor_3_plain_vitest_runs_s": round(anchor, 2),
        "anchor_s_per_run": round(anchor / 3, 2),
        "anchor_exit_codes": codes,
        f"matrix_o{args.oracle_runs}_m{args.max_mutants}": full,
        "ratio": round(_wall(full) / anchor, 2),
        f"matrix_o{SUITE.oracle_runs}_m{SUITE.max_mutants}": suite,
        "ratio_suite": round(_wall(suite) / anchor, 2),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for key, value in figures.items():
            print(f"{key:32} {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
