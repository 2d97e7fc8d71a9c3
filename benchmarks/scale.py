"""Scale benchmark: the same work with ``-j 1``, ``-j 2`` and Ray on this machine.

    python benchmarks/scale.py [--copies 20] [--corpus /work/shared/corpus/pi-mono] [--no-ray]

Workloads (one row each per executor; add a workload by adding a function to WORKLOADS):

- ``reconstruct``: the fixture sessions plus ``--copies`` copies of the real pi-mono corpus,
  each copy in its own folder (a dump of many session files), reconstructed into a fresh OUT
  per run. Every run's output tree is hashed and must equal the ``-j 1`` one.
- ``validate``: not yet here — validate does not run on executors yet; its row goes in
  WORKLOADS when it does.

Then the per-item cost each executor adds: a no-op function mapped over ``--items`` items.
The Ray instance is started once before timing (a cluster is normally already up); its start
time is printed on its own. The anchor line gives the cores available: no speed-up can pass it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from trajforge.executors import ExecutorConfig, LocalExecutor
from trajforge.protocols import Executor
from trajforge.reconstruct import pipeline

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "sessions"
CORPUS = Path("/work/shared/corpus/pi-mono")

Workload = Callable[[Executor, Path], tuple[int, str]]


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
    args = parser.parse_args()
    runs = executors(with_ray=not args.no_ray)
    if any(name == "ray" for name, _ in runs):
        print(f"ray start (local instance): {start_ray():.2f} s")
    print(anchor())
    with tempfile.TemporaryDirectory(prefix="trajforge-scale-") as tmp:
        dump = Path(tmp) / "dump"
        dump.mkdir()
        inputs = make_dump(args.corpus, args.copies, dump)
        workloads: dict[str, Workload] = {"reconstruct": reconstruct_workload(inputs)}
        for label, workload in workloads.items():
            bench_workload(label, workload, runs, Path(tmp))
    bench_overhead(runs, args.items)
    for _, executor in runs:
        executor.close()
    print(anchor().replace("anchor", "after"))


def bench_workload(
    label: str, workload: Workload, runs: list[tuple[str, Executor]], tmp: Path
) -> None:
    print(f"\n{label}: executor, wall s, items, speed-up vs -j 1, output tree")
    base_s, base_hash = 0.0, ""
    for name, executor in runs:
        start = time.perf_counter()
        items, digest = workload(executor, tmp)
        seconds = time.perf_counter() - start
        base_s, base_hash = base_s or seconds, base_hash or digest
        same = "same" if digest == base_hash else f"DIFFERENT ({digest})"
        print(f"  {name:<11} {seconds:8.2f} {items:6d} {base_s / seconds:6.2f}x  {same}")


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
