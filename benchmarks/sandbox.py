"""Sandbox overhead per run versus bare ``subprocess``: ``true`` and a small pytest run.

    python benchmarks/sandbox.py [--backend local|docker|all] [--runs N] [--json] [--check]

For each backend it measures a cold run (new session, one command, close) and a reused run
(one session, many commands), subtracts the bare-subprocess median and compares the
overhead with the issue's targets: local ≤ +30 ms per run; docker ≤ +700 ms cold and
≤ +100 ms reused. ``--check`` exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from trajforge.errors import TrajforgeError
from trajforge.protocols import Limits, Sandbox
from trajforge.registry import SANDBOXES, create
from trajforge.verifiers.sandbox.common import clean_env

TARGETS_MS = {
    ("local", "cold"): 30.0,
    ("local", "reused"): 30.0,
    ("docker", "cold"): 700.0,
    ("docker", "reused"): 100.0,
}
PYTEST = ("python3", "-m", "pytest", "-q", "-p", "no:cacheprovider")
COMMANDS = {"true": ("true",), "pytest": PYTEST}


def make_workspace(root: Path) -> Path:
    """A small project with five passing tests."""
    ws = root / "bench-ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    tests = "".join(
        f"def test_add_{i}():\n    assert add({i}, 1) == {i + 1}\n\n\n" for i in range(5)
    )
    (ws / "test_calc.py").write_text("from calc import add\n\n\n" + tests)
    return ws


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bare(ws: Path, argv: tuple[str, ...], runs: int) -> float:
    """Plain subprocess in a throwaway copy of the workspace (same interpreter on PATH)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "ws"
        shutil.copytree(ws, copy)
        cmd = [sys.executable, *argv[1:]] if argv[0] == "python3" else list(argv)
        env = clean_env(str(Path(tmp) / "home"))

        def once() -> None:
            subprocess.run(cmd, cwd=copy, capture_output=True, env=env, check=True)

        return median_ms(once, runs)


def cold(sandbox: Sandbox, ws: Path, argv: tuple[str, ...], runs: int) -> float:
    def once() -> None:
        with sandbox.session(ws, Limits()) as session:
            session.run(argv)

    once()  # warm caches (image, page cache)
    return median_ms(once, runs)


def reused(sandbox: Sandbox, ws: Path, argv: tuple[str, ...], runs: int) -> float:
    with sandbox.session(ws, Limits()) as session:
        session.run(argv)
        return median_ms(lambda: session.run(argv), runs)


def measure(name: str, ws: Path, runs: int, baseline: dict[str, float]) -> list[dict[str, object]]:
    sandbox: Sandbox = create(SANDBOXES, name, "sandbox backend")
    reason = sandbox.available()
    if reason is not None:
        print(f"{name}: skipped: {reason}", file=sys.stderr)
        return []
    rows: list[dict[str, object]] = []
    for label, argv in COMMANDS.items():
        for mode, fn in (("cold", cold), ("reused", reused)):
            total = fn(sandbox, ws, argv, runs)
            overhead = total - baseline[label]
            target = TARGETS_MS[(name, mode)]
            rows.append(
                {
                    "backend": name,
                    "command": label,
                    "mode": mode,
                    "median_ms": round(total, 1),
                    "bare_ms": round(baseline[label], 1),
                    "overhead_ms": round(overhead, 1),
                    "target_ms": target,
                    "ok": overhead <= target,
                }
            )
    return rows


def print_table(rows: list[dict[str, object]]) -> None:
    header = f"{'backend':8} {'command':7} {'mode':7} {'median':>9} {'bare':>8} {'overhead':>9}"
    print(header + f" {'target':>8}  result")
    for r in rows:
        print(
            f"{r['backend']!s:8} {r['command']!s:7} {r['mode']!s:7} {r['median_ms']:>7} ms "
            f"{r['bare_ms']:>5} ms {r['overhead_ms']:>6} ms {r['target_ms']:>5} ms  "
            + ("ok" if r["ok"] else "MISSED")
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["local", "docker", "all"], default="all")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json", action="store_true", help="print rows as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()
    names = ["local", "docker"] if args.backend == "all" else [args.backend]
    with tempfile.TemporaryDirectory() as tmp:
        ws = make_workspace(Path(tmp))
        baseline = {label: bare(ws, argv, args.runs) for label, argv in COMMANDS.items()}
        rows: list[dict[str, object]] = []
        try:
            for name in names:
                rows += measure(name, ws, args.runs, baseline)
        except TrajforgeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print_table(rows)
    return 1 if args.check and not all(r["ok"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
