"""Survivors looked at closely (Python): equivalent mutants, and tests derived from the oracle.

A mutant the hidden tests let through is called on every exercised input (:mod:`.observe`:
the hidden tests' own calls into the task's code, the instruction's examples, the session's
commands). When it does exactly what the oracle does on every one of them and its line ran on
them, it is ``equivalent``: reported with that evidence and left out of the kill rate. When it
differs somewhere, the input becomes a candidate differential test expecting the oracle's
result (:mod:`.derived_file`); a kept test that fails on it kills it. Any other survivor stays
counted. Tests are derived for build / extend / repair tasks whose check is a plain pytest run
that collects a folder (a check naming its test files would not run the new file).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from trajforge import pyast
from trajforge.oracles.mutate import Mutant
from trajforge.oracles.stub import stub_files
from trajforge.records import CODE_FAMILIES, DerivedTest, DerivedTests, MutantVerdict
from trajforge.verifiers.validate import batch
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.derived_file import (
    FILE_NAME,
    PREFIX,
    DerivedInput,
    FileSets,
    check_tests,
    expected_source,
    lenient_differs,
)
from trajforge.verifiers.validate.derived_file import render as render_kept
from trajforge.verifiers.validate.files import layered
from trajforge.verifiers.validate.junit import RunOutcome
from trajforge.verifiers.validate.observe import CallInput, Observation, Observed, observe, record

if TYPE_CHECKING:
    from trajforge.verifiers.validate.matrix import ControlRunner, TaskFiles

FAMILIES = CODE_FAMILIES
"""Families whose hidden tests may gain derived tests (qa and data tasks have no code)."""
MAX_INPUTS = 60
"""Most exercised inputs observed per task (the instruction's and the session's first)."""
MAX_DERIVED = 20
"""Most derived tests written per task, those failing on the most survivors first."""
VALUE_OPTIONS = frozenset(
    {"-p", "-k", "-m", "-o", "-c", "-W", "-r", "--tb", "--deselect", "--ignore", "--rootdir",
     "--junitxml", "--junit-xml", "--override-ini", "--maxfail", "--import-mode", "--basetemp",
     "--confcutdir", "--log-level", "--durations"}
)  # fmt: skip
"""pytest options that take the next word as their value (not a test path)."""


@dataclass(frozen=True)
class Verdict:
    """What became of one survivor."""

    verdict: MutantVerdict
    evidence: str
    killed_by: tuple[str, ...] = ()


@dataclass
class Strengthened:
    """The outcome for one task's survivors."""

    verdicts: dict[str, Verdict] = field(default_factory=dict)
    derived: DerivedTests = field(default_factory=DerivedTests)
    content: str | None = None
    """The derived test file's text (None: no test kept)."""
    oracle_runs: list[RunOutcome] = field(default_factory=list)
    """Oracle runs with the derived tests among the hidden tests (empty: none kept)."""


def python_targets(
    files: TaskFiles, oracle: dict[str, str], mutated: Sequence[Mutant]
) -> list[str]:
    """The changed Python source files (not tests) of the oracle."""
    changed = {m.path for m in mutated}
    changed |= {p for p in oracle if files.workspace.get(p) != oracle[p]}
    return sorted(p for p in changed if p.endswith(".py") and p in oracle and not files.is_test(p))


def derived_place(command: str, files: dict[str, str]) -> tuple[str, str | None, str]:
    """(cwd of the check, derived file path or None, why not)."""
    parsed = batch.parse_pytest(command)
    if parsed is None:
        return ".", None, "the check is not a plain pytest run"
    cwd = os.path.normpath(parsed.cwd)
    words, skip = [], False
    for word in parsed.args:
        if skip or word in VALUE_OPTIONS:
            skip = not skip
            continue
        if not word.startswith("-"):
            words.append(os.path.normpath(os.path.join(cwd, word)))
    folders = [w for w in words if w == "." or any(p.startswith(w + "/") for p in files)]
    if len(folders) != len(words):
        return cwd, None, f"`{command}` names its test files: a derived test file would not run"
    folder = folders[0] if folders else cwd
    return cwd, os.path.normpath(os.path.join(folder, FILE_NAME)), ""


def import_lines(oracle: dict[str, str], targets: Sequence[str]) -> set[tuple[str, int]]:
    """Lines of simple module- and class-level statements: they run when the module loads."""
    found: set[tuple[str, int]] = set()
    for path in targets:
        try:
            tree = pyast.parse(oracle[path])
        except (SyntaxError, ValueError):
            continue
        bodies = [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
        for body in bodies:
            for node in body:
                if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Expr):
                    end = node.end_lineno or node.lineno
                    found |= {(path, n) for n in range(node.lineno, end + 1)}
    return found


def _merge(items: Sequence[CallInput]) -> list[CallInput]:
    """Unique inputs, the instruction's and the session's first, at most MAX_INPUTS."""
    order = {"instruction": 0, "session": 1, "mined": 2}
    found: dict[tuple[str, str, str, str], CallInput] = {}
    for item in sorted(items, key=lambda i: order[i.source]):
        found.setdefault(item.key, item)
    return list(found.values())[:MAX_INPUTS]


def _stable(runs: Sequence[Observed]) -> list[int]:
    """Inputs the oracle answered the same way in every run (and could be called at all)."""
    first = runs[0].results
    return [
        i
        for i, seen in sorted(first.items())
        if seen.get("status") not in ("unresolved", "timeout")
        and all(r.results.get(i) == seen for r in runs[1:])
    ]


def _counts(inputs: Sequence[CallInput], indices: Sequence[int]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for i in indices:
        counts[inputs[i].source] = counts.get(inputs[i].source, 0) + 1
    return counts


def _classify(
    mutant: Mutant, stable: Sequence[int], oracle: Observed, seen: Observed, covered: set
) -> tuple[Verdict, list[int]]:
    """(verdict, inputs on which a derived test would fail on the mutant)."""
    if not stable:
        return Verdict(MutantVerdict.SURVIVED, "no exercised input could be called"), []
    differ = [i for i in stable if seen.results.get(i) != oracle.results[i]]
    if not differ:
        if (mutant.path, mutant.line) in covered:
            why = f"behaves as the oracle on all {len(stable)} exercised inputs; line {mutant.line}"
            return Verdict(MutantVerdict.EQUIVALENT, why + " ran on them"), []
        why = f"line {mutant.line} never ran on the {len(stable)} exercised inputs"
        return Verdict(MutantVerdict.SURVIVED, why), []
    lenient = [i for i in differ if lenient_differs(oracle.results[i], seen.results.get(i, {}))]
    why = f"differs from the oracle on {len(differ)} input(s)"
    return Verdict(MutantVerdict.SURVIVED, why), lenient


def strengthen(
    runner: ControlRunner,
    files: TaskFiles,
    oracle: dict[str, str],
    survivors: Sequence[Mutant],
    cfg: ValidateConfig,
    dropped: Sequence[str] = (),
) -> Strengthened | None:
    """Equivalence verdicts for ``survivors`` and the derived tests; None when no survivor is
    in a Python file of the task (nothing to observe)."""
    targets = python_targets(files, oracle, survivors)
    if not any(m.path in targets for m in survivors):
        return None
    full = layered(oracle, files.hidden)
    mined, paths = record(runner, full, targets, cfg.timeout_s)
    inputs = _merge([*files.inputs, *mined])
    cwd, path, why_not = derived_place(runner.command, full)
    where = (cwd, paths, targets)
    runs = [observe(runner, full, inputs, where, trace=n == 0) for n in range(cfg.oracle_runs)]
    if not inputs or any(r is None for r in runs):
        note = "no exercised input" if not inputs else "observing the oracle failed"
        return Strengthened({m.id: Verdict(MutantVerdict.SURVIVED, note) for m in survivors})
    base = [r for r in runs if r is not None]
    stable = _stable(base)
    covered = base[0].lines | import_lines(oracle, targets)
    out = Strengthened()
    diffs: dict[str, list[int]] = {}
    for mutant in survivors:
        seen = observe(runner, layered(full, {mutant.path: mutant.content}), inputs, where)
        if seen is None:
            out.verdicts[mutant.id] = Verdict(MutantVerdict.SURVIVED, "observing the mutant failed")
            continue
        out.verdicts[mutant.id], diffs[mutant.id] = _classify(
            mutant, stable, base[0], seen, covered
        )
    counts = _counts(inputs, stable)
    notes = []
    if files.task.family not in FAMILIES:
        notes.append(f"no derived tests for {files.task.family} tasks")
    elif path is None:
        notes.append(why_not)
    elif any(diffs.values()):
        job = _Job(runner, files, oracle, cfg, tuple(dropped))
        differing = tuple(m for m in survivors if diffs.get(m.id))
        _derive(job, _Differences(differing, tuple(inputs), base[0], diffs), path, out)
    out.derived = out.derived.model_copy(
        update={"inputs": counts, "notes": (*out.derived.notes, *notes)}
    )
    return out


@dataclass(frozen=True)
class _Job:
    runner: ControlRunner
    files: TaskFiles
    oracle: dict[str, str]
    cfg: ValidateConfig
    dropped: tuple[str, ...]


@dataclass(frozen=True)
class _Differences:
    """What observing the oracle and the survivors on the exercised inputs found."""

    survivors: tuple[Mutant, ...]
    """The survivors a derived test could fail on (those with a non-empty ``diffs`` entry)."""
    inputs: tuple[CallInput, ...]
    """The exercised inputs, in the order they were observed."""
    oracle: Observed
    """The oracle's results on them."""
    diffs: dict[str, list[int]]
    """Mutant id → indices of the inputs on which a derived test would fail on it."""


def _candidates(found: _Differences) -> list[DerivedInput]:
    """One candidate per input that some survivor gets wrong, most survivors first."""
    inputs, oracle = found.inputs, found.oracle
    hits: dict[int, list[str]] = {}
    for mutant_id, indices in found.diffs.items():
        for i in indices:
            hits.setdefault(i, []).append(mutant_id)
    chosen: list[DerivedInput] = []
    for i in sorted(hits, key=lambda i: (-len(hits[i]), i)):
        seen: Observation = oracle.results[i]
        expected = expected_source(seen)
        if expected is None or not seen.get("module"):
            continue
        item = inputs[i]
        item = CallInput(item.file, item.function, item.args, item.kwargs, item.source,
                         item.origin, seen["module"])  # fmt: skip
        name = f"{PREFIX}{len(chosen) + 1:02d}_{item.function}"
        chosen.append(DerivedInput(name, item, expected, tuple(hits[i])))
        if len(chosen) == MAX_DERIVED:
            break
    return chosen


def _derive(job: _Job, found: _Differences, path: str, out: Strengthened) -> None:
    """Check candidate tests derived from ``found`` at ``path``; record the kept ones in ``out``."""
    candidates = _candidates(found)
    if not candidates:
        out.derived = DerivedTests(notes=("no survivor differs in a way a test can pin",))
        return
    stubbed = stub_files(job.oracle, skip=job.files.is_test)
    sets = FileSets(
        job.oracle,
        job.files.workspace,
        job.files.hidden,
        stubbed if stubbed != job.oracle else None,
        found.survivors,
        job.dropped,
    )
    checked = check_tests(
        job.runner, sets, candidates, path, (job.cfg.oracle_runs, job.cfg.timeout_s)
    )
    tests = [
        DerivedTest(
            name=c.name,
            call=c.item.text(),
            module=c.item.module or "",
            source=c.item.source,
            origin=c.item.origin,
            kills=tuple(checked.kills[c.name]),
        )
        for c in checked.kept
    ]
    killers: dict[str, list[str]] = {}
    for test in tests:
        for mutant_id in test.kills:
            killers.setdefault(mutant_id, []).append(test.name)
    for mutant_id, names in killers.items():
        why = f"killed by the derived test(s) {', '.join(names)}"
        out.verdicts[mutant_id] = Verdict(MutantVerdict.KILLED, why, tuple(names))
    out.derived = DerivedTests(
        path=path if tests else None, tests=tuple(tests), dropped=checked.dropped
    )
    out.content = render_kept(checked.kept) if tests else None
    out.oracle_runs = checked.oracle_runs
