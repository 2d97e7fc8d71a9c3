"""Time dedup + split of N derived accepted tasks: ``python benchmarks/split.py [N]``.

Anchor: the same machine's `trajforge reconstruct` of the fixture sessions (printed first).
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

from tests.conftest import FIXTURES
from tests.splits.conftest import derive
from trajforge.reconstruct import pipeline
from trajforge.splits import split


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        pipeline.run([FIXTURES], root / "recon")
        print(f"anchor: reconstruct fixtures {time.perf_counter() - start:.2f}s")
        template = next(p for p in sorted((root / "recon" / "tasks").iterdir()))
        rng = random.Random(0)
        tasks = root / "out" / "tasks"
        tasks.mkdir(parents=True)
        for i in range(n):
            derive(template, tasks, rng.choice(["build", "repair", "qa"]), f"s{i % (n // 3)}", rng)
        start = time.perf_counter()
        summary = split.run(
            root / "out", root / "ds", split.SplitSpec(("build=20,repair=20,qa=20",))
        )
        took = time.perf_counter() - start
        print(
            f"split {n} tasks: {took:.2f}s ({n / took:.0f} tasks/s), kept {summary.yields['kept']}"
        )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 2000)
