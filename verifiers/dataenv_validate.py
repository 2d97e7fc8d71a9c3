"""Validate data-analysis tasks: re-execute every stored polars query in the sandbox.

For each ``family == "data"`` task under ``OUT/tasks``: run ``oracle/query.py`` (and the
perturbed queries beside it) in the task's workspace inside the sandbox; the oracle's output
must pass :func:`~trajforge.verifiers.answer.check_answer` against ``task.answer``; the
controls must fail it: the empty answer, near-miss answers (:func:`perturbed_answers`) and
the outputs of the perturbed queries. The verdict is a
:class:`~trajforge.records.Validation`, as for every family.

The data family's judge in the validate stage (:data:`~.validate.single.JUDGES`, and
``BATCHED`` for many at once): one sandbox run executes the scripts of a batch of tasks with
``runpy`` (a small runner: one Python start and one polars import per batch); validation
writes ``task.json`` and caches the verdict by content as for every family.
``trajforge dataenv validate`` is that stage restricted to the data family
(:mod:`trajforge.verifiers.dataenv_run`). The local sandbox
uses the host interpreter read-only, so polars is there; the docker image carries a pinned
polars (``docs/qa.md``); the stage checks the runtime first.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trajforge.protocols import Limits, Sandbox, SandboxSession
from trajforge.records import (
    Control,
    ControlCell,
    ControlId,
    DataEvidence,
    Expect,
    Finding,
    Outcome,
    Reason,
    Status,
    Task,
    Validation,
    control_map,
    finding,
)
from trajforge.verifiers.answer import check_answer, perturbed_answers
from trajforge.verifiers.dataenv_runner import DATA_RUNNER
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.qa import answer_cell

log = logging.getLogger(__name__)

PER_QUERY_S = 20
Results = dict[str, dict[str, dict[str, Any]]]
"""task id → script name → {stdout, error, seconds}."""


def prove_data(task_dir: Path, task: Task, sandbox: Sandbox, cfg: ValidateConfig) -> Validation:
    """Run one task's oracle and perturbed queries in the sandbox and judge their outputs."""
    return prove_data_many([(task_dir, task)], sandbox, cfg)[0]


def prove_data_many(
    items: Sequence[tuple[Path, Task]], sandbox: Sandbox, cfg: ValidateConfig
) -> list[Validation]:
    """The verdicts of many data tasks from one sandbox run of all their queries (a task the
    batch left without results runs again on its own)."""
    with tempfile.TemporaryDirectory(prefix="trajforge-dataval-") as tmp:
        empty = Path(tmp) / "empty"
        empty.mkdir()
        with sandbox.session(empty, Limits(timeout_s=600, cpu_s=600)) as session:
            results = run_batch(session, list(items), Path(tmp) / "run")
    return [judge(task, results.get(task.id, {}), cfg.seed) for _, task in items]


def run_batch(session: SandboxSession, batch: list[tuple[Path, Task]], root: Path) -> Results:
    """Run the oracle scripts of ``batch`` in one sandbox run; rerun stragglers one by one."""
    results = _run_staged(session, batch, root)
    for folder, task in batch:
        if task.id not in results and len(batch) > 1:
            log.info("rerunning %s on its own", task.id)
            results.update(
                _run_staged(session, [(folder, task)], root.with_name(root.name + task.id))
            )
    return results


def _run_staged(session: SandboxSession, batch: list[tuple[Path, Task]], root: Path) -> Results:
    root.mkdir(parents=True)
    for folder, task in batch:
        _stage(folder, task, root / task.id)
    (root / "_runner.py").write_text(DATA_RUNNER)
    session.reset(root)
    run = session.run(
        ["python3", "_runner.py", str(PER_QUERY_S)],
        timeout=30 + PER_QUERY_S * 3 * len(batch),
        env={"POLARS_MAX_THREADS": "1"},
    )
    results: Results = {}
    for line in run.stdout.splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and {"task", "script"} <= row.keys():
            results.setdefault(str(row["task"]), {})[str(row["script"])] = row
    if run.exit_code != 0:
        log.warning("batch run ended with %s: %s", run.exit_code, run.stderr[-500:])
    shutil.rmtree(root, ignore_errors=True)
    return results


def _stage(folder: Path, task: Task, dest: Path) -> None:
    """The task's workspace with its oracle scripts laid over it (hard links where possible)."""
    dest.mkdir()
    sources = [folder / task.workspace]
    if task.oracle:
        sources.append(folder / task.oracle)
    for source in sources:
        if not source.is_dir():
            continue
        for path in source.iterdir():
            if path.is_file() and not path.is_symlink():
                try:
                    os.link(path, dest / path.name)
                except OSError:
                    shutil.copyfile(path, dest / path.name)


def judge(task: Task, ran: dict[str, dict[str, Any]], seed: int) -> Validation:
    """The validation of one task from its scripts' outputs."""
    answer = task.answer or ""
    oracle = ran.get("query.py")
    if oracle is None:
        text = "the oracle query produced no result"
        return Validation(status=Status.ERROR, findings=(finding(Reason.INTERNAL_ERROR, text),))
    evidence = _evidence(ran)
    if oracle.get("error"):
        return Validation(
            status=Status.REJECTED,
            findings=(finding(Reason.ORACLE_FAILS, f"oracle query failed: {oracle['error']}"),),
            evidence=evidence,
        )
    check = check_answer(answer, str(oracle.get("stdout", "")))
    cells = [
        answer_cell(check, Outcome.PASS, ControlId(Control.ORACLE)),
        _cell(answer, "", Outcome.FAIL, ControlId(Control.EMPTY)),
    ]
    for n, other in enumerate(paraphrases(answer)):
        cells.append(_cell(answer, other, Outcome.PASS, ControlId(Control.PARAPHRASE, str(n))))
    for n, wrong in enumerate(perturbed_answers(answer, seed)):
        cells.append(_cell(answer, wrong, Outcome.FAIL, ControlId(Control.PERTURBED, str(n))))
    controls = control_map([*cells, *_perturbed_queries(answer, ran)])
    kinds = Counter(c.control for c in controls.values())
    accepted = tuple(n for n, c in controls.items() if c.control == Control.PARAPHRASE and c.ok)
    evidence = evidence.model_copy(update={"paraphrases_accepted": accepted})
    rejected = _misjudged(controls)
    if not kinds[Control.QUERY]:
        text = "no perturbed-query control (oracle/perturbed_*.py)"
        rejected.append(finding(Reason.NO_VERIFIER, text))
    if rejected:
        return Validation(
            status=Status.REJECTED, findings=tuple(rejected), controls=controls, evidence=evidence
        )
    said, near, queries = kinds[Control.PARAPHRASE], kinds[Control.PERTURBED], kinds[Control.QUERY]
    texts = (
        f"oracle query reproduces the answer: {check.reason}",
        f"{said} paraphrases of the answer accepted",
        "empty answer rejected",
        f"{near} near-miss answers rejected",
        f"{queries} perturbed queries give rejected answers",
    )
    proven = tuple(finding(Reason.PROVEN, t) for t in texts)
    return Validation(status=Status.ACCEPTED, findings=proven, controls=controls, evidence=evidence)


def _cell(answer: str, given: str, expect: Expect, control: ControlId) -> ControlCell:
    return answer_cell(check_answer(answer, given), expect, control)


def _misjudged(controls: dict[str, ControlCell]) -> list[Finding]:
    """Why each control the checker got wrong is wrong, in the data family's words."""
    return [_misjudged_one(c) for c in controls.values() if not c.ok]


def _misjudged_one(cell: ControlCell) -> Finding:
    if cell.control == Control.ORACLE:
        text = f"oracle output does not reproduce the answer: {cell.reason}"
        return finding(Reason.ORACLE_FAILS, text)
    if cell.control == Control.EMPTY:
        text = "the checker accepts an empty answer"
    elif cell.control == Control.PARAPHRASE:
        text = f"the checker rejects the paraphrase {cell.given!r}"
    elif cell.control == Control.PERTURBED:
        text = f"the checker accepts the near miss {cell.given!r}"
    elif cell.result == Outcome.UNKNOWN:
        text = f"perturbed query {cell.variant} failed: {cell.reason}"
        return finding(Reason.VERDICT_UNKNOWN, text)
    else:
        text = f"perturbed query {cell.variant} gives an accepted answer: {cell.reason}"
    return finding(Reason.ANSWER_MISJUDGED, text)


def paraphrases(answer: str) -> list[str]:
    """The expected answer as a person would write it: in a sentence, marked, in bold."""
    value = answer.strip()
    if "\n" in value:  # a list: the same items in a sentence
        value = ", ".join(line.strip() for line in value.splitlines() if line.strip())
        return [f"Answer: {value}"]
    return [f"The answer is {value}.", f"Answer: {value}", f"**{value}**"]


def _perturbed_queries(answer: str, ran: dict[str, dict[str, Any]]) -> list[ControlCell]:
    """The cells of the perturbed queries: each one's output must be rejected."""
    cells = []
    for name in sorted(n for n in ran if n.startswith("perturbed_")):
        row = ran[name]
        if row.get("error"):
            unknown = ControlCell(
                control=Control.QUERY,
                variant=name,
                expect=Outcome.FAIL,
                result=Outcome.UNKNOWN,
                reason=str(row["error"]),
            )
            cells.append(unknown)
            continue
        check = check_answer(answer, str(row.get("stdout", "")))
        cells.append(answer_cell(check, Outcome.FAIL, ControlId(Control.QUERY, name)))
    return cells


def _evidence(ran: dict[str, dict[str, Any]]) -> DataEvidence:
    oracle = ran.get("query.py", {})
    return DataEvidence(
        oracle_stdout=str(oracle.get("stdout", ""))[:2000],
        seconds={name: row.get("seconds") for name, row in sorted(ran.items())},
    )
