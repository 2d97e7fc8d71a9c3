"""Fault injection on one oracle project: trajforge mutants + pytest per mutant vs `mutmut run`.

    python benchmarks/mutants.py [--runs 3] [--limit 40] [--subprocess]

The oracle is the build + extend scenarios' code and tests (stats.py, a new file; inventory.py
with remove_item added), written to a temporary project. Rows:

- trajforge (changed lines): `mutants()` on the lines the session changed, then per mutant a
  forked pytest (`-x`, the tests that reference the mutated function first) from one parent
  that configured pytest once; each child imports the project afresh with the mutant served
  from memory, so children run side by side (CPU count at a time). This is the goal's row.
- trajforge (all lines): the same on every line of both files, like for like with mutmut.
- trajforge (changed, 1 wkr): the goal's row with one child at a time.
- trajforge (subprocess), with --subprocess: changed lines, a fresh `python -m pytest -x` per
  mutant (what a sandboxed run pays per mutant, without the sandbox); one run.
- mutmut 3 (anchor): `mutmut run` on the same two files and tests (its own trampolines, test
  stats and fork-per-mutant runner, default children = CPU count), from a clean project.

Times are wall clock, best of --runs, generation and test ordering included.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import gc
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

sys.path.append(str(Path(__file__).resolve().parents[1]))  # for tests.fixtures

from tests.fixtures.scenarios import INVENTORY, REMOVE_ITEM, REMOVE_TEST, STATS, STATS_TEST
from trajforge.oracles.changes import changed_lines
from trajforge.oracles.mutate import Mutant, mutants

INVENTORY_AFTER = INVENTORY.replace("        return self.items[name]\n", REMOVE_ITEM)
SOURCES = {"stats.py": STATS, "inventory.py": INVENTORY_AFTER}
BEFORE = {"inventory.py": INVENTORY}
TESTS = {"tests/test_stats.py": STATS_TEST, "tests/test_inventory.py": REMOVE_TEST}
MUTMUT_CONFIG = """[tool.mutmut]
source_paths = ["stats.py", "inventory.py"]
pytest_add_cli_args_test_selection = ["tests/"]
"""
TIMEOUT_S = 10
PYTEST_ARGS = ["-x", "-q", "-p", "no:cacheprovider"]


@dataclass(frozen=True)
class Row:
    name: str
    seconds: float
    count: int
    killed: int
    note: str = ""
    survivors: tuple[str, ...] = ()


def write_project(root: Path) -> None:
    for path, content in {**SOURCES, **TESTS}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content, encoding="utf-8")
    (root / "pyproject.toml").write_text(MUTMUT_CONFIG, encoding="utf-8")


def test_index() -> list[tuple[str, set[str]]]:
    """(node id, names it references) for every test function, in file order."""
    index = []
    for path, source in TESTS.items():
        for node in ast.parse(source).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test"):
                names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                names |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
                index.append((f"{path}::{node.name}", names))
    return index


def enclosing(source: str, line: int) -> set[str]:
    """Names of the functions and classes whose body holds `line`."""
    return {
        node.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.ClassDef)
        and node.lineno <= line <= (node.end_lineno or node.lineno)
    }


def ordered_tests(mutant: Mutant, index: list[tuple[str, set[str]]]) -> list[str]:
    """All test ids, those that reference the mutated function (or its class) first."""
    names = enclosing(SOURCES[mutant.path], mutant.line)
    first = [test for test, refs in index if refs & names]
    return first + [test for test, _refs in index if test not in first]


class MutantLoader(importlib.machinery.SourceFileLoader):
    """Loads one module from the mutant's text instead of the file on disk."""

    def __init__(self, fullname: str, path: str, content: str) -> None:
        super().__init__(fullname, path)
        self.content = content.encode("utf-8")

    def get_data(self, path: str) -> bytes:
        return self.content if path == self.path else super().get_data(path)

    def path_stats(self, path: str) -> Mapping[str, Any]:
        raise OSError("never use cached bytecode for a mutant")


class MutantFinder(importlib.abc.MetaPathFinder):
    """Puts the mutant in place of the file at `path`, whatever name it is imported by."""

    def __init__(self, path: Path, content: str) -> None:
        self.path = str(path)
        self.content = content

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.origin != self.path:
            return None
        loader = MutantLoader(fullname, self.path, self.content)
        return importlib.util.spec_from_file_location(fullname, self.path, loader=loader)


class ForkRunner:
    """pytest configured once in this process (plugins loaded, options parsed); then per
    mutant a forked child that imports the project fresh, the mutant served from memory (so
    children run side by side, `workers` at a time), and runs the tests."""

    def __init__(self, root: Path, workers: int) -> None:
        import pytest  # inside the timed region: its import is part of the cost
        from _pytest.config import _prepareconfig

        self.root = root
        self.workers = workers
        os.chdir(root)
        sys.path.insert(0, str(root))
        pytest.main([*PYTEST_ARGS, "--collect-only", "tests"])  # imports what plugins import late
        self.config: pytest.Config = _prepareconfig([*PYTEST_ARGS, "tests"])
        for name, module in list(sys.modules.items()):
            if str(getattr(module, "__file__", "") or "").startswith(str(root)):
                del sys.modules[name]  # the project is imported afresh in each child
        gc.freeze()  # children neither copy nor re-scan the parent's objects

    def run_all(self, jobs: list[tuple[Mutant, list[str]]]) -> list[int]:
        """Exit status of the tests against each mutant, in order."""
        codes: dict[int, int] = {}
        running: dict[int, int] = {}
        for n, (mutant, tests) in enumerate(jobs):
            if len(running) >= self.workers:
                self._reap(running, codes)
            pid = os.fork()
            if pid == 0:
                self._child(mutant, tests)
            running[pid] = n
        while running:
            self._reap(running, codes)
        return [codes[n] for n in range(len(jobs))]

    @staticmethod
    def _reap(running: dict[int, int], codes: dict[int, int]) -> None:
        pid, status = os.wait()
        codes[running.pop(pid)] = os.waitstatus_to_exitcode(status)

    def _child(self, mutant: Mutant, tests: list[str]) -> NoReturn:
        signal.alarm(TIMEOUT_S)
        sys.meta_path.insert(0, MutantFinder(self.root / mutant.path, mutant.content))
        self.config.args = tests
        code = self.config.hook.pytest_cmdline_main(config=self.config)
        os._exit(int(code))


def subprocess_pytest(root: Path, mutant: Mutant, tests: list[str]) -> int:
    target = root / mutant.path
    target.write_text(mutant.content, encoding="utf-8")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pytest", *PYTEST_ARGS, *tests]
    try:
        run = subprocess.run(cmd, cwd=root, env=env, capture_output=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return -signal.SIGALRM
    finally:
        target.write_text(SOURCES[mutant.path], encoding="utf-8")
    return run.returncode


def ours(root: Path, name: str, lines: dict[str, set[int]], limit: int, workers: int) -> Row:
    """Generate, order and run; workers=0 runs a fresh `python -m pytest` per mutant."""
    start = time.perf_counter()
    found = mutants(SOURCES, lines, limit=limit)
    index = test_index()
    jobs = [(mutant, ordered_tests(mutant, index)) for mutant in found]
    with quiet():
        if workers:
            codes = ForkRunner(root, workers).run_all(jobs)
        else:
            shutil.rmtree(root / "__pycache__", ignore_errors=True)  # no stale bytecode
            codes = [subprocess_pytest(root, mutant, tests) for mutant, tests in jobs]
    killed = sum(code != 0 for code in codes)
    survivors = tuple(m.description for m, code in zip(found, codes, strict=True) if code == 0)
    return Row(name, time.perf_counter() - start, len(found), killed, survivors=survivors)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Send fds 1 and 2 (this process and its children) to /dev/null for a while."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        for fd, copy in zip((1, 2), saved, strict=True):
            os.dup2(copy, fd)
            os.close(copy)
        os.close(devnull)


def mutmut_row(root: Path) -> Row:
    shutil.rmtree(root / "mutants", ignore_errors=True)
    start = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "mutmut", "run"], cwd=root, capture_output=True, text=True,
        check=False, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )  # fmt: skip
    seconds = time.perf_counter() - start
    if run.returncode != 0:
        tail = (run.stderr or run.stdout).strip().splitlines()[-3:]
        return Row("mutmut 3 (anchor)", seconds, 0, 0, f"failed (exit {run.returncode}): {tail}")
    from mutmut.stats import status_by_exit_code

    codes: dict[str, int | None] = {}
    for meta in (root / "mutants").rglob("*.meta"):
        codes.update(json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"])
    statuses = [status_by_exit_code[code] for code in codes.values()]
    killed = sum(s in ("killed", "timeout", "caught by type check") for s in statuses)
    return Row("mutmut 3 (anchor)", seconds, len(codes), killed)


def best(make: Callable[[], Row], runs: int) -> Row:
    rows = [make() for _ in range(runs)]
    return min(rows, key=lambda r: r.seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--subprocess", action="store_true", help="add the subprocess row (slow)")
    args = parser.parse_args()
    workers = os.cpu_count() or 1  # as mutmut's default --max-children
    changed = changed_lines(BEFORE, SOURCES)
    every = {path: set(range(1, len(text.splitlines()) + 1)) for path, text in SOURCES.items()}
    with tempfile.TemporaryDirectory(prefix="trajforge-mutants-") as tmp:
        root = Path(tmp)
        write_project(root)
        plan = [
            ("trajforge (changed lines)", changed, args.limit, workers),
            ("trajforge (all lines)", every, 10_000, workers),
            ("trajforge (changed, 1 wkr)", changed, args.limit, 1),
        ]
        rows = [best(partial(ours, root, *row), args.runs) for row in plan]
        if args.subprocess:
            subprocess_row = ("trajforge (subprocess)", changed, args.limit, 0)
            rows.append(ours(root, *subprocess_row))
        rows.append(best(partial(mutmut_row, root), args.runs))
    print_rows(rows, changed, workers)


def print_rows(rows: list[Row], changed: dict[str, set[int]], workers: int) -> None:
    lines = ", ".join(f"{p} {len(v)} lines" for p, v in sorted(changed.items()))
    print(f"oracle: stats.py + inventory.py, 6 tests; changed: {lines}; {workers} workers")
    print(f"{'run':<28}{'seconds':>9}{'mutants':>9}{'killed':>8}{'per mutant ms':>15}")
    for row in rows:
        per = 1000 * row.seconds / row.count if row.count else float("nan")
        print(f"{row.name:<28}{row.seconds:>9.2f}{row.count:>9}{row.killed:>8}{per:>15.1f}")
        if row.note:
            print(f"    {row.note}")
        for survivor in row.survivors:
            print(f"    survived: {survivor}")
    anchor = rows[-1]
    if anchor.count:
        for row in rows[:-1]:
            print(f"speed-up vs mutmut, {row.name}: {anchor.seconds / row.seconds:.2f}x")
    else:
        print("mutmut 3 could not run here, so there is no speed-up figure (see note above)")


if __name__ == "__main__":
    main()
