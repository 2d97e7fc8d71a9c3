"""Run one task's control matrix in one sandbox session.

Each control's files are materialised into a scratch folder and swapped into the live sandbox
with ``reset``; every run gets pinned TZ / seeds from the sandbox and, when the check runs a
known test runner (:mod:`.runners`: pytest, vitest, jest, node:test, mocha, bun), that runner's
report, fetched with ``cat``. The oracle runs first; when it does not pass, nothing else runs.
"""

from __future__ import annotations

import logging
import math
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from trajforge.oracles.changes import changed_lines, moves
from trajforge.oracles.mutate import Mutant, mutants
from trajforge.oracles.stub import stub_files
from trajforge.protocols import Limits, Sandbox, SandboxSession
from trajforge.reconstruct.changed_files import is_test_file
from trajforge.records import Control, ControlId, MutantVerdict, Outcome, ShellReplay, Task
from trajforge.verifiers.languages import unloadable
from trajforge.verifiers.validate import batch
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.derive import Strengthened, strengthen
from trajforge.verifiers.validate.files import layered, read_tree, write_tree
from trajforge.verifiers.validate.junit import RunOutcome, outcome_of
from trajforge.verifiers.validate.observe import CallInput
from trajforge.verifiers.validate.rules import judge_oracle, mutant_cell
from trajforge.verifiers.validate.runner_files import only_checks
from trajforge.verifiers.validate.runners import runner_for

log = logging.getLogger(__name__)


@dataclass
class TaskFiles:
    """A task's file sets, read from its folder."""

    task: Task
    workspace: dict[str, str]
    oracle: dict[str, str]
    hidden: dict[str, str]
    probes: list[dict[str, str]]
    inputs: list[CallInput] = field(default_factory=list)
    """Calls written out in the instruction and the session's commands (:mod:`.inputs`)."""

    def is_test(self, path: str) -> bool:
        """Test files are never stubbed or mutated."""
        return path in self.hidden or is_test_file(path)


@dataclass
class MatrixResult:
    """Raw results of every control run for one task."""

    oracle_runs: list[RunOutcome] = field(default_factory=list)
    controls: dict[ControlId, RunOutcome] = field(default_factory=dict)
    mutants: list[tuple[Mutant, RunOutcome | None]] = field(default_factory=list)
    shell: list[ShellReplay] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    batched: bool = False
    oracle_ok: bool = False
    strengthened: Strengthened | None = None
    """Equivalence verdicts of the survivors and the tests derived from the oracle."""
    start: RunOutcome | None = None
    """The starting state with the final hidden tests, when derived tests were added."""
    timeout_s: float | None = None
    """The limit every run was given when the reference needed more than ``timeout_s``."""


class ControlRunner:
    """One live sandbox session running the task's check on successive file sets."""

    def __init__(
        self,
        box: SandboxSession,
        command: str,
        scratch: Path,
        files: Mapping[str, str] | None = None,
    ) -> None:
        self.box = box
        self.command = command
        self.scratch = scratch
        self.runner = runner_for(command, files or {})
        """The check's test runner, told from the command and the workspace ``files``'
        package.json (None: the check is judged by its exit code)."""
        self.holds: Mapping[str, str] | None = files
        """What the session's workspace holds untouched: the files it was opened on, until
        the first run or reset (a run on them needs no reset: the environment's links and
        compile steps were just made for them)."""

    def reset(self, files: dict[str, str]) -> None:
        """Make ``files`` the sandbox workspace."""
        self.holds = None
        self.box.reset(write_tree(self.scratch / "ws", files))

    def run(self, files: dict[str, str], timeout: float, stop_early: bool = False) -> RunOutcome:
        """Run the check on ``files`` and judge it from its runner's report and exit code;
        ``stop_early``: stop at the first failing test where the runner can."""
        if self.holds is None or self.holds != files:
            self.reset(files)
        self.holds = None
        if self.runner is None:
            return outcome_of(self.box.run(self.command, timeout=timeout), self.command, None)
        call = self.runner.invocation(self.command, stop_early)
        result = self.box.run(call.command, timeout=timeout, env=call.env)
        report = None
        if not result.timed_out:
            fetched = self.box.run(["cat", self.runner.report_path], timeout=30)
            report = fetched.stdout if fetched.exit_code == 0 else None
        return outcome_of(result, self.command, report, self.runner)


def replay_shell(
    runner: ControlRunner, files: TaskFiles, timeout: float
) -> tuple[dict[str, str], list[ShellReplay]]:
    """The oracle with shell-made changes reproduced: the episode's file-changing commands are
    re-run on the starting workspace (the state they ran on), then every file whose final
    content replay knows is laid on top (:func:`shell_oracle`)."""
    report = files.task.files
    if not report.shell_modified or not report.shell_commands:
        return files.oracle, []
    runner.reset(files.workspace)
    before = _sandbox_tree(runner, "shell-start")
    done = []
    for command in report.shell_commands:
        result = runner.box.run(command, timeout=timeout)
        done.append(ShellReplay(command=command, exit_code=result.exit_code, wall_s=result.wall_s))
    after = _sandbox_tree(runner, "shell-oracle")
    return shell_oracle(files.workspace, before, after, files.oracle), done


def _sandbox_tree(runner: ControlRunner, name: str) -> dict[str, str]:
    out = runner.scratch / name
    if out.exists():
        shutil.rmtree(out)
    runner.box.copy_out(out)
    return read_tree(out)


def shell_oracle(
    workspace: Mapping[str, str],
    before: Mapping[str, str],
    after: Mapping[str, str],
    oracle: Mapping[str, str],
) -> dict[str, str]:
    """The workspace with what the commands did (files they added or changed, less the ones
    they deleted), every file replay knows laid on top. What the sandbox held before them that
    the workspace does not (an environment's built ``dist/``) is no change of the episode's:
    left out, it is neither mutated nor stubbed."""
    made = {p: t for p, t in after.items() if before.get(p) != t}
    kept = {p: t for p, t in workspace.items() if p in after}
    return {**kept, **made, **oracle}


def _must_fail(files: TaskFiles, oracle: dict[str, str]) -> dict[ControlId, dict[str, str]]:
    """The controls the verifier must reject."""
    hidden = files.hidden
    controls = {ControlId(Control.EMPTY): dict(hidden)}
    if files.task.family == "repair":
        controls[ControlId(Control.PREFIX)] = layered(files.workspace, hidden)
    elif files.workspace:
        controls[ControlId(Control.START)] = layered(files.workspace, hidden)
    stubbed = stub_files(oracle, skip=files.is_test)
    if stubbed != oracle:
        controls[ControlId(Control.STUB)] = layered(oracle, stubbed, hidden)
    if copied := _moved_from(files, oracle):
        controls[ControlId(Control.COPY)] = layered(oracle, copied, hidden)
    for n, probe in enumerate(files.probes):
        controls[ControlId(Control.PROBE, str(n))] = layered(probe, hidden)
    return controls


def _moved_from(files: TaskFiles, oracle: dict[str, str]) -> dict[str, str]:
    """The start's files the reference moved (:func:`~trajforge.oracles.changes.moves`), at
    their old paths: tests that pass with them left there cannot tell a move from a copy. Test
    files, and files whose end the episode does not know, are left out."""
    unknown = set(files.task.files.unknown)
    return {
        old: files.workspace[old]
        for old in moves(files.workspace, oracle).values()
        if old not in unknown and not files.is_test(old)
    }


SLOW_CHECK_FACTOR = 5.0
"""A check that runs past ``timeout_s`` on the reference is tried once more with this many
times the limit (a repository-wide ``npm run check`` of a monorepo takes a minute or more)."""
SLOW_CHECK_MAX_S = 900.0
"""The longest any one run of a check is given."""
ROOM = 2.0
"""Every run of a check whose reference took more than ``timeout_s / ROOM`` (and every mutant's
run, where that is more than ``mutant_timeout_s``) is given this many times its slowest run."""


def _oracle_runs(
    runner: ControlRunner,
    full: dict[str, str],
    files: TaskFiles,
    cfg: ValidateConfig,
    result: MatrixResult,
) -> ValidateConfig:
    """The reference's runs; the settings every later run takes: a check that took more than
    half its limit on the reference (or ran past it: :func:`_retried`) gives every run twice
    its slowest time (``result.timeout_s``, verify's too), and a mutant never less than twice
    it. A check that only type-checks or lints (:func:`only_checks`) runs once on it."""
    missing = len(files.task.files.unknown)
    first = runner.run(full, cfg.timeout_s)
    limit, first = _retried(runner, full, cfg, result, first)
    runs = cfg.oracle_runs
    if runs > 1 and runner.runner is None and only_checks(runner.command, full):
        runs = 1  # a type checker or linter answers the same on the same files
        result.notes.append(
            "the check only type-checks or lints: it answers the same on the same files, "
            "so the reference is run once"
        )
    for n in range(runs):
        run = first if n == 0 else runner.run(full, limit)
        result.oracle_runs.append(run)
        if n == 0 and run.rejects() and (missing or run.status in (Outcome.ERROR, Outcome.TIMEOUT)):
            break  # deterministic or hopeless failure: no point in repeating it
    _, _, result.oracle_ok = judge_oracle(result.oracle_runs, missing)
    ended = [r.wall_s for r in result.oracle_runs if r.status != Outcome.TIMEOUT]
    slowest = max(ended, default=0.0)
    room = float(min(SLOW_CHECK_MAX_S, math.ceil(slowest * ROOM)))
    if room > cfg.timeout_s:
        result.timeout_s = room
        result.notes.append(
            f"the check ran {slowest:.0f} s on the reference, more than half of timeout_s "
            f"{cfg.timeout_s:.0f}: every run of it (and verify's) is given {room:.0f} s"
        )
        cfg = cfg.model_copy(update={"timeout_s": room})
    if room > cfg.mutant_timeout_s:  # a mutant given less than ROOM× the reference's time
        cfg = cfg.model_copy(update={"mutant_timeout_s": room})  # times out under load
    return cfg


def _retried(
    runner: ControlRunner,
    full: dict[str, str],
    cfg: ValidateConfig,
    result: MatrixResult,
    first: RunOutcome,
) -> tuple[float, RunOutcome]:
    """The limit of the reference's other runs, and its first run: when that one timed out,
    it is tried once more with SLOW_CHECK_FACTOR times the limit (which the others get)."""
    limit, run = _again_if_timed_out(runner, full, first, cfg.timeout_s, SLOW_CHECK_FACTOR)
    if limit > cfg.timeout_s and run.status == Outcome.TIMEOUT:
        result.notes.append(f"the check ran past {limit:.0f} s on the reference too")
    return limit, run


def _decided(runner: ControlRunner, control: dict[str, str], timeout: float) -> RunOutcome:
    """A must-fail control's run; one that hit the limit decides nothing (a loaded machine
    slows a start that fails in seconds past it), so it is tried once more with ROOM times
    the limit, and stays a timeout (unknown) only when that one ends the same way."""
    return _again_if_timed_out(runner, control, runner.run(control, timeout), timeout, ROOM)[1]


def _again_if_timed_out(
    runner: ControlRunner, files: dict[str, str], run: RunOutcome, timeout: float, factor: float
) -> tuple[float, RunOutcome]:
    """``run`` (made with ``timeout``), or, when it timed out, a second run of ``files`` with
    ``factor`` times the limit (at most SLOW_CHECK_MAX_S); the limit of the run returned."""
    longer = min(timeout * factor, SLOW_CHECK_MAX_S)
    if run.status != Outcome.TIMEOUT or longer <= timeout:
        return timeout, run
    return longer, runner.run(files, longer)


def _run_mutants(
    runner: ControlRunner,
    oracle: dict[str, str],
    files: TaskFiles,
    cfg: ValidateConfig,
    result: MatrixResult,
) -> None:
    lines = {
        p: ls for p, ls in changed_lines(files.workspace, oracle).items() if not files.is_test(p)
    }
    for path in sorted(lines):
        if (why := unloadable(path, oracle)) is not None:  # no passing test can load it
            del lines[path]
            result.notes.append(f"no mutants in {path}: the reference cannot load it ({why})")
    found = mutants(oracle, lines, seed=cfg.seed, limit=cfg.max_mutants, skip=files.is_test)
    if not found:
        return
    full = layered(oracle, files.hidden)
    command = batch.parse_pytest(runner.command) if cfg.batch_mutants else None
    outcomes = None
    if command is not None:
        outcomes = batch.run_batched(
            runner.box, runner.reset, full, command, found, cfg.mutant_timeout_s
        )
        if outcomes is None:
            result.notes.append("batched mutant runner failed; mutants ran one by one")
    result.batched = outcomes is not None
    for mutant in found:
        if outcomes is not None:
            result.mutants.append((mutant, outcomes.get(mutant.id)))
            continue
        mutated = layered(full, {mutant.path: mutant.content})
        result.mutants.append((mutant, runner.run(mutated, cfg.mutant_timeout_s, stop_early=True)))


def run_matrix(
    sandbox: Sandbox, files: TaskFiles, command: str, cfg: ValidateConfig, scratch: Path
) -> MatrixResult:
    """Every control of one task, in one sandbox session."""
    result = MatrixResult()
    clock = time.monotonic()
    first = write_tree(scratch / "ws", layered(files.oracle, files.hidden))
    limits = Limits(timeout_s=cfg.timeout_s, memory_mb=cfg.memory_mb)
    with sandbox.session(first, limits) as box:
        runner = ControlRunner(box, command, scratch, layered(files.oracle, files.hidden))
        oracle, result.shell = replay_shell(runner, files, cfg.timeout_s)
        cfg = _oracle_runs(runner, layered(oracle, files.hidden), files, cfg, result)
        result.timings["oracle_s"] = round(time.monotonic() - clock, 3)
        if not result.oracle_ok:
            return result
        clock = time.monotonic()
        for name, control in _must_fail(files, oracle).items():
            result.controls[name] = _decided(runner, control, cfg.timeout_s)
        result.timings["controls_s"] = round(time.monotonic() - clock, 3)
        clock = time.monotonic()
        if cfg.max_mutants:
            _run_mutants(runner, oracle, files, cfg, result)
        result.timings["mutants_s"] = round(time.monotonic() - clock, 3)
        clock = time.monotonic()
        _strengthen(runner, oracle, files, cfg, result)
        result.timings["survivors_s"] = round(time.monotonic() - clock, 3)
    return result


def _strengthen(
    runner: ControlRunner,
    oracle: dict[str, str],
    files: TaskFiles,
    cfg: ValidateConfig,
    result: MatrixResult,
) -> None:
    """Look closely at the survivors; with derived tests kept, re-run the starting state."""
    _, dropped, _ = judge_oracle(result.oracle_runs, len(files.task.files.unknown))
    survivors = [
        m for m, run in result.mutants if mutant_cell(run, dropped) == MutantVerdict.SURVIVED
    ]
    if not survivors:
        return
    result.strengthened = strengthen(runner, files, oracle, survivors, cfg, dropped)
    done = result.strengthened
    if done is not None and done.content is not None and done.derived.path is not None:
        hidden = {**files.hidden, done.derived.path: done.content}
        result.start = runner.run(layered(files.workspace, hidden), cfg.timeout_s)
