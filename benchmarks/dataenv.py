"""Data-analysis tasks: build + validate 150 (the seed release's held-out size).

    python benchmarks/dataenv.py [--count N] [--seed S] [--json]

Prints the seconds of ``build`` (generate, run every query and its near misses in-process,
write the task folders) and of ``validate`` (re-execute every stored query in the local
sandbox, check answers and controls), with tasks/s, beside an anchor: running the N stored
``oracle/query.py`` scripts directly in this process with polars (no sandbox, no checks).
The target is "well under a minute" for build + validate of 150.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from pathlib import Path

from trajforge.reconstruct.dataenv import build
from trajforge.verifiers.dataenv_run import validate_tasks

TARGET_S = 60.0


def anchor(out: Path) -> float:
    """Seconds to exec every stored oracle query in-process, reading its workspace files."""
    folders = sorted((out / "tasks").iterdir())
    start = time.perf_counter()
    for folder in folders:
        script = (folder / "oracle" / "query.py").read_text()
        fake = folder / "workspace" / "query.py"
        code = compile(script, str(fake), "exec")
        with contextlib.redirect_stdout(io.StringIO()):
            exec(code, {"__name__": "__main__", "__file__": str(fake)})
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        start = time.perf_counter()
        report = build([], out, count=args.count, seed=args.seed)
        built = time.perf_counter() - start
        start = time.perf_counter()
        summary = validate_tasks(out)
        validated = time.perf_counter() - start
        direct = anchor(out)
    n = len(report.ids)
    figures = {
        "tasks": n,
        "accepted": summary.counts.get("accepted", 0),
        "build_s": round(built, 2),
        "validate_s": round(validated, 2),
        "total_s": round(built + validated, 2),
        "tasks_per_s": round(n / (built + validated), 1),
        "anchor_in_process_queries_s": round(direct, 2),
        "target_s": TARGET_S,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"dataenv: {n} tasks, {figures['accepted']} accepted")
    print(f"  build     {built:7.2f} s  ({n / built:6.1f} tasks/s)")
    print(f"  validate  {validated:7.2f} s  ({n / validated:6.1f} tasks/s, local sandbox)")
    print(f"  total     {built + validated:7.2f} s  (target: well under {TARGET_S:.0f} s)")
    print(f"  anchor    {direct:7.2f} s  ({n} stored queries run in-process, no sandbox)")


if __name__ == "__main__":
    main()
