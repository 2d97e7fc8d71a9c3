"""Generate data-analysis tasks: draw templates, run their queries, keep distinct good ones.

Seeded and reproducible: the same data files, seed and count give the same task ids. The
families take turns (filter, groupby, join, topk, percentile, window, nulls), so every
family the data supports is represented. A draft is dropped when its query fails (a tie in
a ranking, no rows), gives an empty or zero answer, has no perturbed query whose answer
differs, or repeats an earlier question.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import random
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

import polars as pl

from trajforge.errors import UsageError
from trajforge.executors import LocalExecutor
from trajforge.protocols import Executor, WorkOutcome
from trajforge.reconstruct.dataenv.script import render, run_inline
from trajforge.reconstruct.dataenv.tables import (
    BUNDLED,
    BUNDLED_FILES,
    find_joins,
    load_table,
    stage_inputs,
)
from trajforge.reconstruct.dataenv.templates import SINGLE, Ctx, Draft, Template
from trajforge.reconstruct.dataenv.templates_rel import RELATIONAL
from trajforge.reconstruct.dataenv.work import DraftJob, hosted, key_of, library_for, slim
from trajforge.reconstruct.pipeline import in_order
from trajforge.records import (
    Provenance,
    Task,
    TaskSource,
    Verifier,
    canonical_json,
    dump_record,
    sha256_hex,
)
from trajforge.scrub import Scrubber
from trajforge.taskdir import task_file

log = logging.getLogger(__name__)

FAMILIES: dict[str, tuple[Template, ...]] = {**SINGLE, **RELATIONAL}
ORDER = ("filter", "groupby", "join", "topk", "percentile", "window", "nulls")
ATTEMPTS_PER_TASK = 25
MARGIN = 1e-3
INSTRUCTION = (
    "{question}\n\nThe data is in the current directory: {files}. Answer with the value "
    "only (python3 with polars is available)."
)


@dataclass
class BuildReport:
    """What a build produced."""

    written: list[str] = field(default_factory=list)
    existing: list[str] = field(default_factory=list)
    families: dict[str, int] = field(default_factory=dict)
    difficulties: dict[int, int] = field(default_factory=dict)
    dropped: dict[str, int] = field(default_factory=dict)
    attempts: int = 0
    errors: list[str] = field(default_factory=list)
    """Drafts whose worker failed on every attempt (``draft N (family): why``)."""

    @property
    def ids(self) -> list[str]:
        """Ids of every task of this build (written now or already there)."""
        return self.written + self.existing


@dataclass(frozen=True)
class Built:
    """A draft that ran: its task record and files."""

    task: Task
    scripts: dict[str, str]
    tables: tuple[Path, ...]


def default_inputs() -> list[Path]:
    """The bundled demo tables."""
    return [BUNDLED / name for name in BUNDLED_FILES]


def build(
    paths: list[Path],
    out: Path,
    *,
    count: int,
    seed: int = 0,
    on_task: Callable[[], None] | None = None,
    executor: Executor | None = None,
) -> BuildReport:
    """Write ``count`` tasks generated from ``paths`` (bundled tables when empty) to ``out``.

    Drafts are drawn here, in one seeded order; their queries run on ``executor`` (default:
    inline; a local pool always spawns its workers) and are taken in draw order, so the
    tasks, the report and the files do not depend on the executor.
    """
    if count < 1:
        raise UsageError(f"--count must be at least 1, got {count}")
    scrub = Scrubber()
    report = BuildReport()
    with tempfile.TemporaryDirectory(prefix="trajforge-dataenv-") as tmp:
        library = Path(tmp)
        inputs = paths or default_inputs()
        staged = stage_inputs(inputs, library, scrub)
        tables = [load_table(p, shown) for p, shown in zip(staged, inputs, strict=True)]
        drafts = _Drafts(Ctx(tuple(tables), tuple(find_joins(tables))), seed, key_of(inputs))
        runs = _no_fork(executor).map(run_draft, drafts.limit(count))
        seen: set[str] = set()
        with hosted(drafts.inputs, library):
            try:
                for done in in_order(runs):
                    report.attempts += 1
                    added = _take(drafts.family(done.index), done, library, out, report, seen)
                    if added and on_task is not None:
                        on_task()
                    if len(report.ids) >= count:
                        break
            finally:
                close = getattr(runs, "close", None)
                if close is not None:
                    close()  # stop the executor's remaining work now
    return report


def _no_fork(executor: Executor | None) -> Executor:
    """The executor; a forking local pool becomes a spawning one (polars deadlocks on fork)."""
    if executor is None:
        return LocalExecutor()
    if isinstance(executor, LocalExecutor) and executor.config.start_method in (None, "fork"):
        return LocalExecutor(executor.config.model_copy(update={"start_method": "spawn"}))
    return executor


def _take(
    family: str,
    done: WorkOutcome[tuple[Built | None, str]],
    library: Path,
    out: Path,
    report: BuildReport,
    seen: set[str],
) -> bool:
    """Fold one draft's outcome into the report (and write its task); True when one was added."""
    if done.value is None:
        error = f"worker failed after {done.attempts} attempt(s): {done.error}"
        report.errors.append(f"draft {done.index} ({family}): {error}")
        _drop(report, "worker failed")
        return False
    built, why = done.value
    if built is None or built.task.id in seen:
        _drop(report, why if built is None else "duplicate")
        return False
    seen.add(built.task.id)
    here = tuple(library / table.name for table in built.tables)  # this process's copies
    fresh = write(out, dataclasses.replace(built, tables=here))
    (report.written if fresh else report.existing).append(built.task.id)
    report.families[family] = report.families.get(family, 0) + 1
    level = int(built.task.provenance.config["difficulty"])
    report.difficulties[level] = report.difficulties.get(level, 0) + 1
    return True


def _drop(report: BuildReport, why: str) -> None:
    report.dropped[why] = report.dropped.get(why, 0) + 1


class _Drafts(Sequence[DraftJob]):
    """Draft number i (None: the drawn template does not apply), drawn on first access."""

    def __init__(self, ctx: Ctx, seed: int, inputs: tuple[str, ...]) -> None:
        self.ctx, self.seed, self.inputs = ctx, seed, inputs
        self.rng = random.Random(seed)
        self.drawn: list[DraftJob] = []
        self.size = 0

    def limit(self, count: int) -> _Drafts:
        self.size = count * ATTEMPTS_PER_TASK
        return self

    def family(self, index: int) -> str:
        return ORDER[index % len(ORDER)]

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, index: int) -> DraftJob: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[DraftJob]: ...
    def __getitem__(self, index: int | slice) -> DraftJob | Sequence[DraftJob]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.size))]
        if not 0 <= index < self.size:
            raise IndexError(index)
        while len(self.drawn) <= index:
            family = self.family(len(self.drawn))
            draft = self.rng.choice(FAMILIES[family])(self.ctx, self.rng)
            self.drawn.append(DraftJob(slim(draft) if draft else None, self.inputs, self.seed))
        return self.drawn[index]


def materialize(
    draft: Draft, library: Path, seed: int, scrub: Scrubber
) -> tuple[Built | None, str]:
    """Run the draft's query and near misses in-process; the task, or None and why not."""
    loads = [(t.var, t.name, t.dates_to_parse) for t in draft.tables]
    script = render(loads, draft.body, draft.show)
    try:
        answer = run_inline(script, library)
    except (pl.exceptions.PolarsError, ValueError, TypeError, KeyError, IndexError) as exc:
        log.debug("draft dropped: %s: %s", draft.question, exc)
        return None, "query failed"
    if _degenerate(answer):
        return None, "empty or zero answer"
    perturbed: dict[str, str] = {}
    for body in draft.perturbed:
        text = render(loads, body, draft.show)
        try:
            other = run_inline(text, library)
        except (pl.exceptions.PolarsError, ValueError, TypeError, KeyError, IndexError):
            continue
        if _differs(answer, other) and len(perturbed) < 2:
            perturbed[f"perturbed_{len(perturbed) + 1}.py"] = text
    if not perturbed:
        return None, "no discriminating perturbed query"
    files = ", ".join(t.name for t in draft.tables)
    instruction = INSTRUCTION.format(question=draft.question, files=files)
    if scrub.text(instruction) != instruction or scrub.text(answer) != answer:
        return None, "secret in question or answer"
    scripts = {"query.py": script, **perturbed}
    task = _task(draft, instruction, answer, scripts, seed)
    return Built(task, scripts, tuple(library / t.name for t in draft.tables)), ""


def _degenerate(answer: str) -> bool:
    text = answer.strip()
    if not text or text.lower() in ("nan", "inf", "-inf", "none", "null"):
        return True
    try:
        return float(text.rstrip("%")) == 0.0
    except ValueError:
        return False


def _differs(answer: str, other: str) -> bool:
    """The near miss gives a clearly different answer (beyond ten times the tolerance)."""
    if not other.strip() or " ".join(answer.split()) == " ".join(other.split()):
        return False
    try:
        a, b = float(answer.rstrip("%")), float(other.rstrip("%"))
    except ValueError:
        return answer.strip().casefold() != other.strip().casefold()
    return abs(a - b) > max(MARGIN * abs(a), 1e-6)


def _task(draft: Draft, instruction: str, answer: str, scripts: dict[str, str], seed: int) -> Task:
    data = {t.name: t.sha256 for t in draft.tables}
    identity = {
        "instruction": instruction,
        "answer": answer,
        "scripts": {name: sha256_hex(text.encode()) for name, text in sorted(scripts.items())},
        "data": data,
    }
    task_id = f"data-{sha256_hex(canonical_json(identity))[:16]}"
    config = {
        "generator": "trajforge dataenv",
        "seed": seed,
        "template": draft.template,
        "difficulty": draft.difficulty,
        "data": data,
    }
    return Task(
        id=task_id,
        family="data",
        instruction=instruction,
        source=TaskSource(
            harness="dataenv", session=f"seed-{seed}", path=", ".join(data), events=(0, 0)
        ),
        oracle="oracle",
        answer=answer,
        verifier=Verifier(kind="answer", command="python3 query.py"),
        classification=(
            f"template {draft.template}",
            f"difficulty {draft.difficulty}",
            "generated from tables by trajforge dataenv",
        ),
        provenance=Provenance(config=config),
    )


def write(out: Path, built: Built) -> bool:
    """Write ``OUT/tasks/<id>/`` atomically; False when that task already exists."""
    tasks = out / "tasks"
    tasks.mkdir(parents=True, exist_ok=True)
    final = tasks / built.task.id
    if final.exists():
        return False
    staging = Path(tempfile.mkdtemp(prefix=f".{built.task.id}.", dir=tasks))
    try:
        (staging / "workspace").mkdir()
        (staging / "oracle").mkdir()
        for table in built.tables:
            shutil.copyfile(table, staging / "workspace" / table.name)
        for name, text in built.scripts.items():
            (staging / "oracle" / name).write_text(text)
        task_file(staging).write_text(dump_record(built.task) + "\n")
        os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return True


def run_draft(job: DraftJob) -> tuple[Built | None, str]:
    """Run one draft (the work item): its built task, or None and why it was dropped."""
    if job.draft is None:
        return None, "not applicable"
    return materialize(job.draft, library_for(job), job.seed, _scrubber())


@functools.cache
def _scrubber() -> Scrubber:
    return Scrubber()
