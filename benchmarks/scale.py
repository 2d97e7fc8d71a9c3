"""Scale benchmark: the same work with ``-j 1``, ``-j 2`` and Ray on this machine.

    python benchmarks/scale.py [--copies 20] [--corpus /work/shared/corpus/pi-mono] [--no-ray]
                               [--validate-tasks N] [--max-mutants 4] [--skip reconstruct]

Workloads (one row each per executor; add a workload by adding a function to WORKLOADS):

- ``reconstruct``: the fixture sessions plus ``--copies`` copies of the real pi-mono corpus,
  each copy in its own folder (a dump of many session files), reconstructed into a fresh OUT
  per run. Every run's output tree is hashed and must equal the ``-j 1`` one.
- ``validate``: the tasks reconstructed from the fixture sessions (``--validate-tasks``, default
  all), validated into a fresh copy per run with ``--max-mutants`` faults each: ``-j 1`` and
  ``-j 2`` are the local path (tasks in this process, ``-j`` threads), Ray ships each task to
  a worker. Task files and statuses must equal the ``-j 1`` run's (timings aside). Besides
  wall time and speed-up it prints the time spent outside the tasks themselves, per task:
  ``(wall × workers − Σ in-task wall) / tasks`` — shipping folders, scratch copies,
  scheduling and idle workers at the end; for Ray that is its per-task overhead.

Then the per-item cost each executor adds: a no-op function mapped over ``--items`` items.
The Ray instance is started once before timing (a cluster is normally already up); its start
time is printed on its own. The anchor line gives the cores available: no speed-up can pass it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trajforge.executors import ExecutorConfig, LocalExecutor
from trajforge.protocols import Executor
from trajforge.reconstruct import pipeline
from trajforge.registry import SANDBOXES, create
from trajforge.verifiers.validate import run
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.context import Context

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "sessions"
CORPUS = Path("/work/shared/corpus/pi-mono")

Workload = Callable[[Executor, Path], tuple[int, str]]
TIMING_KEYS = ("wall_s", "timings")


def make_dump(corpus: Path, copies: int, dest: Path) -> list[Path]:
    """The fixture folder plus ``copies`` folders each holding the corpus sessions."""
    shutil.copytree(FIXTURES, dest / "fixtures")
    for i in range(copies):
        shutil.copytree(corpus, dest / f"copy-{i:03d}")
    return [dest]


def tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def reconstruct_workload(inputs: list[Path]) -> Workload:
    def run(executor: Executor, scratch: Path) -> tuple[int, str]:
        out = scratch / "out"
        summary = pipeline.run(inputs, out, executor=executor)
        if summary.exit_code() != 0:
            raise SystemExit(f"reconstruct failed: {[i.error for i in summary.inputs if i.error]}")
        digest = tree_hash(out)
        shutil.rmtree(out)
        return len(summary.inputs), digest

    return run


def timeless(value: Any) -> Any:
    """A JSON value without its wall-clock timings."""
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def validated_hash(root: Path) -> str:
    """Hash of a validated OUT: every file, task.json files without their timings."""
    digest = hashlib.sha256()
    for path in sorted(p for p in (root / "tasks").rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.name == "task.json":
            data = json.dumps(timeless(json.loads(data)), sort_keys=True).encode()
        digest.update(str(path.relative_to(root)).encode() + b"\0" + data)
    return digest.hexdigest()[:16]


def validate_workload(source: Path, config: ValidateConfig, notes: list[str]) -> Workload:
    """Validate a fresh copy of ``source`` (a reconstructed OUT); appends a note per run."""
    sandbox = create(SANDBOXES, "local", "sandbox")

    def run_one(executor: Executor, scratch: Path) -> tuple[int, str]:
        out = scratch / "validated"
        shutil.copytree(source, out)
        ctx = Context(sandbox, "local", "host", config, base_dirs=(source.parent,))
        local = isinstance(executor, LocalExecutor)
        jobs = executor.config.jobs if isinstance(executor, LocalExecutor) else 1
        start = time.perf_counter()
        rows = run.run(out, ctx, jobs, executor=None if local else executor)
        wall = time.perf_counter() - start
        workers = jobs if local else ray_cpus()
        inside = sum(r.wall_s for r in rows)
        outside = (wall * min(workers, len(rows)) - inside) / len(rows)
        statuses = Counter(r.status for r in rows)
        notes.append(
            f"in-task {inside / len(rows):5.2f} s/task, outside {outside:5.2f} s/task "
            f"({workers} worker(s)); {dict(sorted(statuses.items()))}"
        )
        digest = validated_hash(out)
        shutil.rmtree(out)
        return len(rows), digest

    return run_one


def ray_cpus() -> int:
    import ray

    return int(ray.cluster_resources().get("CPU", 1))


def noop(item: int) -> int:
    return item


def executors(with_ray: bool) -> list[tuple[str, Executor]]:
    found: list[tuple[str, Executor]] = [
        ("local -j 1", LocalExecutor(ExecutorConfig(jobs=1))),
        ("local -j 2", LocalExecutor(ExecutorConfig(jobs=2))),
    ]
    if with_ray:
        from trajforge.executors_ray import RayExecutor

        ray = RayExecutor(ExecutorConfig())
        reason = ray.available()
        if reason:
            print(f"!! no Ray row: {reason}")
        else:
            found.append(("ray", ray))
    return found


def start_ray() -> float:
    import ray

    start = time.perf_counter()
    ray.init(include_dashboard=False, log_to_driver=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--items", type=int, default=400, help="no-op items for the overhead")
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--no-ray", action="store_true")
    parser.add_argument("--validate-tasks", type=int, default=0, help="0: every fixture task")
    parser.add_argument("--max-mutants", type=int, default=4, help="validate: faults per task")
    parser.add_argument("--skip", choices=("reconstruct", "validate"), action="append", default=[])
    args = parser.parse_args()
    if create(SANDBOXES, "local", "sandbox").available() and "validate" not in args.skip:
        print("!! no validate row: the local sandbox is not usable here")
        args.skip.append("validate")
    runs = executors(with_ray=not args.no_ray)
    if any(name == "ray" for name, _ in runs):
        print(f"ray start (local instance): {start_ray():.2f} s")
    print(anchor())
    with tempfile.TemporaryDirectory(prefix="trajforge-scale-") as tmp:
        dump = Path(tmp) / "dump"
        dump.mkdir()
        workloads: dict[str, tuple[Workload, list[str]]] = {}
        if "reconstruct" not in args.skip:
            inputs = make_dump(args.corpus, args.copies, dump)
            workloads["reconstruct"] = (reconstruct_workload(inputs), [])
        if "validate" not in args.skip:
            source = make_tasks(Path(tmp) / "reconstructed", args.validate_tasks)
            notes: list[str] = []
            config = ValidateConfig(max_mutants=args.max_mutants)
            workloads["validate"] = (validate_workload(source, config, notes), notes)
        for label, (workload, notes) in workloads.items():
            bench_workload(label, workload, runs, Path(tmp), notes)
    bench_overhead(runs, args.items)
    for _, executor in runs:
        executor.close()
    print(anchor().replace("anchor", "after"))


def make_tasks(out: Path, limit: int) -> Path:
    """The fixture sessions reconstructed into ``out`` (the first ``limit`` tasks; 0: all)."""
    pipeline.run([FIXTURES], out)
    if limit:
        for extra in sorted((out / "tasks").iterdir())[limit:]:
            shutil.rmtree(extra)
    return out


def bench_workload(
    label: str, workload: Workload, runs: list[tuple[str, Executor]], tmp: Path, notes: list[str]
) -> None:
    print(f"\n{label}: executor, wall s, items, speed-up vs -j 1, output tree")
    base_s, base_hash = 0.0, ""
    for name, executor in runs:
        start = time.perf_counter()
        items, digest = workload(executor, tmp)
        seconds = time.perf_counter() - start
        base_s, base_hash = base_s or seconds, base_hash or digest
        same = "same" if digest == base_hash else f"DIFFERENT ({digest})"
        note = f"  {notes[-1]}" if notes else ""
        print(f"  {name:<11} {seconds:8.2f} {items:6d} {base_s / seconds:6.2f}x  {same}{note}")


def bench_overhead(runs: list[tuple[str, Executor]], count: int) -> None:
    print(f"\nper-item overhead: no-op function over {count} items")
    items = list(range(count))
    for name, executor in runs:
        start = time.perf_counter()
        outcomes = list(executor.map(noop, items))
        seconds = time.perf_counter() - start
        assert len(outcomes) == count and all(o.reason == "accepted" for o in outcomes)
        print(f"  {name:<11} {seconds * 1000 / count:8.3f} ms/item  ({seconds:.2f} s total)")


def anchor() -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    return (
        f"anchor: {os.cpu_count()} CPU cores, load average {load}; Python {sys.version.split()[0]}"
    )


if __name__ == "__main__":
    main()
