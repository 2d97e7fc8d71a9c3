"""CLI start-up: ``trajforge --help`` and one ``trajforge guard check`` call against a bare
``python -c pass``.

    python benchmarks/cli.py [--runs 15]

Each command starts a fresh interpreter, as a user (or a harness hook calling the guard once
per tool call) does. The runs of the three commands are interleaved so that load from other
processes hits them alike; the table gives the median and the fastest wall time of each, the
median CPU time (user + system of the child: on a shared machine wall time includes time spent
waiting for a core), and each median less the bare interpreter's. Target: ``--help`` and
``guard check`` start in <= 0.2 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

CALL = b'{"tool": "bash", "arguments": {"command": "ls -la"}, "harness": "pi"}\n'
TARGET_S = 0.2
"""The issue's budget for a command to start (issue 22): interactive, and paid per tool call
by a guard hook."""


def commands() -> dict[str, tuple[list[str], bytes]]:
    """The console script installed beside this interpreter (a pyenv or asdf shim on PATH adds
    its own start, measured on a row of its own)."""
    script = Path(sys.executable).parent / "trajforge"
    base = [str(script)] if script.is_file() else [sys.executable, "-m", "trajforge.cli.main"]
    rows = {
        "python -c pass": ([sys.executable, "-c", "pass"], b""),
        "trajforge --help": ([*base, "--help"], b""),
        "trajforge guard check (1 call)": ([*base, "guard", "check"], CALL),
    }
    on_path = shutil.which("trajforge")
    if on_path and Path(on_path).resolve() != script.resolve():
        rows[f"{on_path} --help"] = ([on_path, "--help"], b"")
    return rows


def one(argv: list[str], stdin: bytes) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one run; a failing run ends the benchmark."""
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.run(argv, input=stdin, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = os.times()
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.decode()[-500:]}")
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=15, help="runs per command (median)")
    args = parser.parse_args()
    cmds = commands()
    walls: dict[str, list[float]] = {name: [] for name in cmds}
    cpus: dict[str, list[float]] = {name: [] for name in cmds}
    for argv, stdin in cmds.values():  # warm the page cache and .pyc files
        one(argv, stdin)
    for _ in range(args.runs):
        for name, (argv, stdin) in cmds.items():
            wall, cpu = one(argv, stdin)
            walls[name].append(wall)
            cpus[name].append(cpu)
    bare = statistics.median(walls["python -c pass"])
    print(f"{args.runs} runs each, load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")
    print(f"{'command':<40}{'median s':>9}{'min s':>8}{'cpu s':>8}{'- bare s':>9}")
    for name in cmds:
        median = statistics.median(walls[name])
        print(
            f"{name:<40}{median:>9.3f}{min(walls[name]):>8.3f}"
            f"{statistics.median(cpus[name]):>8.3f}{median - bare:>9.3f}"
        )
    print(f"target: trajforge commands start in <= {TARGET_S} s (median wall)")


if __name__ == "__main__":
    main()
