"""Injected-fault runs: all pytest mutants in one sandboxed command, or one run each.

For a plain pytest check (``[cd DIR &&] python -m pytest ARGS`` or ``pytest ARGS``) a small
runner (``_mutant_runner.py``) imports pytest and its plugins once and forks one child per
mutant, with early exit (``-x``) and the tests that already killed a mutant run first. Any other
check runs once per mutant. Either way each mutant gets its own JUnit XML and exit code.
"""

from __future__ import annotations

import json
import logging
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from trajforge.oracles.mutate import Mutant
from trajforge.protocols import RunResult, SandboxSession
from trajforge.verifiers.validate.files import layered
from trajforge.verifiers.validate.junit import RunOutcome, outcome_of

log = logging.getLogger(__name__)

MUTANT_RUNNER = Path(__file__).with_name("_mutant_runner.py")
PLAN_DIR = ".trajforge-batch"
RESULTS = "/tmp/trajforge-batch.json"
_PYTEST_HEADS = {("python3", "-m", "pytest"), ("python", "-m", "pytest")}


@dataclass(frozen=True)
class PytestCommand:
    """A check that is nothing but one pytest invocation."""

    cwd: str
    module_mode: bool
    args: tuple[str, ...]


def parse_pytest(command: str) -> PytestCommand | None:
    """``[cd DIR &&] python3 -m pytest ARGS`` / ``pytest ARGS``; None for anything else."""
    cwd = "."
    rest = command.strip()
    if rest.startswith("cd "):
        head, sep, rest = rest.partition("&&")
        if not sep:
            return None
        parts = shlex.split(head)
        if len(parts) != 2:
            return None
        cwd = parts[1]
    try:
        argv = shlex.split(rest)
    except ValueError:
        return None
    if any(tok in (";", "|", "||", "&&", "&", ">", "<") for tok in argv) or not argv:
        return None
    if tuple(argv[:3]) in _PYTEST_HEADS:
        return PytestCommand(cwd, True, tuple(argv[3:]))
    if argv[0] in ("pytest", "py.test"):
        return PytestCommand(cwd, False, tuple(argv[1:]))
    return None


def _plan(cmd: PytestCommand, mutants: Sequence[Mutant], timeout: float) -> str:
    items = [{"id": m.id, "path": m.path, "content": m.content} for m in mutants]
    plan = {
        "cwd": cmd.cwd,
        "module_mode": cmd.module_mode,
        "args": list(cmd.args),
        "timeout": timeout,
        "mutants": items,
    }
    return json.dumps(plan)


def run_batched(
    box: SandboxSession,
    reset: Callable[[dict[str, str]], None],
    oracle: dict[str, str],
    cmd: PytestCommand,
    mutants: Sequence[Mutant],
    timeout: float,
) -> dict[str, RunOutcome] | None:
    """Outcome per mutant id, or None when the runner itself failed (caller falls back)."""
    extra = {
        f"{PLAN_DIR}/plan.json": _plan(cmd, mutants, timeout),
        f"{PLAN_DIR}/runner.py": MUTANT_RUNNER.read_text(),
    }
    reset(layered(oracle, extra))
    total = timeout * len(mutants) + 30
    ran = box.run(["python3", f"{PLAN_DIR}/runner.py"], timeout=total)
    if ran.exit_code != 0:
        log.info("mutant runner failed (exit %s): %s", ran.exit_code, ran.stderr[-500:])
        return None
    fetched = box.run(["cat", RESULTS], timeout=30)
    try:
        doc = json.loads(fetched.stdout)
    except json.JSONDecodeError:
        return None
    if doc.get("warm_up_exit") != 0:
        log.info("mutant runner's unmutated run exited %s", doc.get("warm_up_exit"))
        return None
    rows = doc["results"]
    found = {}
    for row in rows:
        result = RunResult(
            backend=ran.backend,
            command=("pytest",),
            exit_code=row["exit_code"],
            stdout="",
            stderr="",
            timed_out=bool(row["timed_out"]),
            killed="timeout" if row["timed_out"] else None,
            wall_s=float(row["wall_s"]),
        )
        found[row["id"]] = outcome_of(result, "pytest", row["junit"])
    return found if len(found) == len(mutants) else None
