"""Generate data-analysis tasks: draw templates, run their queries, keep distinct good ones.

Seeded and reproducible: the same data files, seed and count give the same task ids. The
families take turns (filter, groupby, join, topk, percentile, window, nulls), so every
family the data supports is represented. A draft is dropped when its query fails (a tie in
a ranking, no rows), gives an empty or zero answer, has no perturbed query whose answer
differs, or repeats an earlier question.
"""

from __future__ import annotations

import logging
import os
import random
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from trajforge.errors import UsageError
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
) -> BuildReport:
    """Write ``count`` tasks generated from ``paths`` (bundled tables when empty) to ``out``."""
    if count < 1:
        raise UsageError(f"--count must be at least 1, got {count}")
    scrub = Scrubber()
    report = BuildReport()
    with tempfile.TemporaryDirectory(prefix="trajforge-dataenv-") as tmp:
        library = Path(tmp)
        inputs = paths or default_inputs()
        staged = stage_inputs(inputs, library, scrub)
        tables = [load_table(p, shown) for p, shown in zip(staged, inputs, strict=True)]
        ctx = Ctx(tuple(tables), tuple(find_joins(tables)))
        rng = random.Random(seed)
        seen: set[str] = set()
        while len(report.ids) < count and report.attempts < count * ATTEMPTS_PER_TASK:
            family = ORDER[report.attempts % len(ORDER)]
            report.attempts += 1
            built = _attempt(ctx, family, rng, library, seed, scrub, report)
            if built is None or built.task.id in seen:
                if built is not None:
                    report.dropped["duplicate"] = report.dropped.get("duplicate", 0) + 1
                continue
            seen.add(built.task.id)
            fresh = write(out, built)
            (report.written if fresh else report.existing).append(built.task.id)
            report.families[family] = report.families.get(family, 0) + 1
            level = int(built.task.provenance.config["difficulty"])
            report.difficulties[level] = report.difficulties.get(level, 0) + 1
            if on_task is not None:
                on_task()
    return report


def _attempt(
    ctx: Ctx,
    family: str,
    rng: random.Random,
    library: Path,
    seed: int,
    scrub: Scrubber,
    report: BuildReport,
) -> Built | None:
    draft = rng.choice(FAMILIES[family])(ctx, rng)
    if draft is None:
        report.dropped["not applicable"] = report.dropped.get("not applicable", 0) + 1
        return None
    built, why = materialize(draft, library, seed, scrub)
    if built is None:
        report.dropped[why] = report.dropped.get(why, 0) + 1
    return built


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
        (staging / "task.json").write_text(dump_record(built.task) + "\n")
        os.rename(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return True
