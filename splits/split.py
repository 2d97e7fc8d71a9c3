"""``trajforge split``: accepted tasks → a dataset revision folder.

Load accepted tasks, drop exact and near duplicates, pick held-out tasks group-aware per family
(``--eval-per-family`` targets, else ``select.DEFAULT_HELD_OUT_SHARE`` of each family), then
write parquet, ``manifest.json`` and the dataset card into a staging folder that replaces
``DATASET`` in one rename, so a failed split never leaves half a dataset.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel, ConfigDict, Field

from trajforge.errors import UsageError
from trajforge.records import (
    FAMILIES,
    DatasetManifest,
    DatasetVersions,
    Duplicate,
    ManifestTask,
    SourceDataset,
    SplitDefinition,
    Status,
    dump_record,
)
from trajforge.records.dataset import UNKNOWN_TEACHER
from trajforge.splits import dedup, select
from trajforge.splits.layout import SPLITS, data_path, row, write_parquet
from trajforge.splits.tasks import LoadedTask, LoadReport, load_tasks

IMBALANCE_RATIO = 3.0


class FamilyHoldout(BaseModel):
    """What was held out of one family."""

    model_config = ConfigDict(extra="forbid")

    tasks: int
    """Tasks of the family after dedup."""
    groups: int
    """Groups holding at least one of its tasks."""
    target: int | None
    """Held-out target (None: no ``--eval-per-family`` target named it)."""
    held_out: int
    """Tasks put in test."""
    held_out_groups: int
    """Groups put in test that hold some of its tasks."""


class SplitSummary(BaseModel):
    """Result of ``trajforge split`` (also its ``--json`` output)."""

    model_config = ConfigDict(extra="forbid")

    dataset: str
    """Dataset folder written."""
    revision: str
    """Revision name recorded in the manifest."""
    counts: dict[str, dict[str, dict[str, int]]] = Field(default_factory=dict)
    """config → split → family → tasks."""
    yields: dict[str, Any] = Field(default_factory=dict)
    """Candidates, statuses, duplicates removed, kept."""
    duplicates: list[Duplicate] = Field(default_factory=list)
    """The dedup report."""
    holdout_rule: str = ""
    """How held-out targets were set: the default share, or the ``--eval-per-family`` specs."""
    held_out: dict[str, FamilyHoldout] = Field(default_factory=dict)
    """family → tasks, groups, target and what was held out (every family)."""
    not_held_out: dict[str, str] = Field(default_factory=dict)
    """family → why none of its tasks is held out (families with none in test)."""
    shortfalls: list[str] = Field(default_factory=list)
    """Held-out targets that could not be met."""
    problems: list[str] = Field(default_factory=list)
    """Task folders that could not be read."""

    def exit_code(self) -> int:
        """1 when some task folders could not be read, else 0."""
        return 1 if self.problems else 0


@dataclass(frozen=True)
class SplitSpec:
    """How a split is defined: held-out targets, selection seed, near-duplicate threshold
    (recorded in the manifest's ``split``)."""

    targets: tuple[str, ...] = ()
    """Held-out sizes as given to ``--eval-per-family`` (N, build=3,repair=2, coding=40); empty:
    the default, ``select.DEFAULT_HELD_OUT_SHARE`` of each family the grouping allows."""
    seed: int = 0
    """Seed of the held-out selection."""
    threshold: float = 0.8
    """MinHash similarity at or above which two tasks are near duplicates, in (0, 1]."""

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold <= 1.0:
            raise UsageError(f"--near-threshold {self.threshold}: must be in (0, 1]")


def run(
    out: Path,
    dataset: Path,
    spec: SplitSpec = SplitSpec(),
    versions: DatasetVersions | None = None,
    revision: str | None = None,
) -> SplitSummary:
    """Split the accepted tasks under ``out`` into the dataset folder ``dataset``."""
    wanted = select.parse_targets(spec.targets)
    report = load_tasks(out)
    if not report.accepted:
        seen = ", ".join(f"{k} {v}" for k, v in sorted(report.by_status.items())) or "none"
        raise UsageError(f"{out}: no accepted tasks to split (tasks by status: {seen})")
    kept, duplicates = dedup.dedup(report.accepted, spec.threshold)
    families: Counter[str] = Counter(t.task.family for t in kept)
    groups = select.groups(kept)
    default = not spec.targets
    per_family = select.default_targets(groups) if default else select.per_family(wanted, families)
    held, achieved, shortfalls = select.select(groups, per_family, spec.seed, at_least_one=default)
    holdout = _holdout(groups, per_family, held)
    not_held = {
        f: select.not_held_reason(h.tasks, h.groups, h.target, default)
        for f, h in holdout.items()
        if not h.held_out
    }
    recorded = list(shortfalls)
    if default:  # the default aims at every family: say in the card which ones it missed
        recorded += [f"{f}: not held out: {why}" for f, why in not_held.items()]
    definition = SplitDefinition(
        seed=spec.seed,
        targets=wanted,
        per_family=per_family,
        achieved=achieved,
        shortfalls=tuple(recorded),
        near_duplicate_threshold=spec.threshold,
    )
    group_of = {m: g.id for g in groups for m in g.members}
    entries = {
        t.task.id: ManifestTask(
            family=t.task.family,
            config=t.config,
            split="test" if t.task.id in held else "train",
            group=group_of[t.task.id],
            content_hash=t.content_hash,
        )
        for t in kept
    }
    versions = _with_teacher(versions or DatasetVersions(), kept)
    manifest = DatasetManifest(
        revision="",
        tasks=entries,
        counts=_counts(entries),
        split=definition,
        yields=_yields(report, kept, duplicates),
        duplicates=tuple(duplicates),
        versions=versions,
        sources=sources(kept),
    )
    manifest = _write(dataset, kept, manifest, revision)
    return SplitSummary(
        dataset=str(dataset),
        revision=manifest.revision,
        counts=manifest.counts,
        yields=manifest.yields,
        duplicates=duplicates,
        holdout_rule=_rule(spec),
        held_out=holdout,
        not_held_out=not_held,
        shortfalls=shortfalls,
        problems=report.problems,
    )


def _rule(spec: SplitSpec) -> str:
    if spec.targets:
        return "--eval-per-family " + " ".join(spec.targets)
    share = round(select.DEFAULT_HELD_OUT_SHARE * 100)
    return (
        f"default: {share}% of each family, rounded, at least 1 task when it spans 2+ groups, "
        "never all of its groups"
    )


def _holdout(
    groups: Sequence[select.Group], per_family: dict[str, int], held: set[str]
) -> dict[str, FamilyHoldout]:
    taken: Counter[str] = Counter()
    spans: Counter[str] = Counter()
    for group in groups:
        if held.intersection(group.members):
            taken.update(group.families)
            spans.update(group.families.keys())
    return {
        family: FamilyHoldout(
            tasks=tasks,
            groups=n_groups,
            target=per_family.get(family),
            held_out=taken[family],
            held_out_groups=spans[family],
        )
        for family, (tasks, n_groups) in select.family_sizes(groups).items()
    }


def _with_teacher(versions: DatasetVersions, kept: Sequence[LoadedTask]) -> DatasetVersions:
    if versions.teacher != UNKNOWN_TEACHER:
        return versions
    teachers = sorted({t.task.validation.evidence.teacher for t in kept})
    return versions.model_copy(update={"teacher": ",".join(teachers) or UNKNOWN_TEACHER})


def _counts(entries: dict[str, ManifestTask]) -> dict[str, dict[str, dict[str, int]]]:
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for entry in entries.values():
        per = counts.setdefault(entry.config, {s: {} for s in SPLITS})[entry.split]
        per[entry.family] = per.get(entry.family, 0) + 1
    return {
        c: {s: dict(sorted(f.items())) for s, f in v.items()} for c, v in sorted(counts.items())
    }


def _yields(
    report: LoadReport, kept: Sequence[LoadedTask], duplicates: Sequence[Duplicate]
) -> dict[str, Any]:
    kept_families: Counter[str] = Counter(t.task.family for t in kept)
    per_family = {
        family: {
            "candidates": sum(statuses.values()),
            "accepted": statuses.get(Status.ACCEPTED, 0),
            "kept": kept_families.get(family, 0),
        }
        for family, statuses in sorted(report.by_family_status.items())
    }
    candidates = sum(report.by_status.values())
    return {
        "candidates": candidates,
        "by_status": dict(sorted((k, v) for k, v in report.by_status.items() if v)),
        "duplicates_exact": sum(1 for d in duplicates if d.kind == "exact"),
        "duplicates_near": sum(1 for d in duplicates if d.kind == "near"),
        "kept": len(kept),
        "kept_fraction": round(len(kept) / candidates, 4) if candidates else 0.0,
        "per_family": per_family,
    }


def _write(
    dataset: Path, kept: Sequence[LoadedTask], manifest: DatasetManifest, revision: str | None
) -> DatasetManifest:
    if dataset.exists() and not (dataset / "manifest.json").is_file() and any(dataset.iterdir()):
        raise UsageError(f"{dataset}: exists and is not a trajforge dataset; choose another -o")
    dataset.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{dataset.name}.", dir=dataset.parent))
    try:
        files = _write_data(staging, kept, manifest)
        digest = hashlib.sha256("".join(sorted(files.values())).encode()).hexdigest()
        name = revision or f"r-{digest[:12]}"
        manifest = manifest.model_copy(update={"files": files, "revision": name})
        (staging / "manifest.json").write_text(dump_record(manifest) + "\n")
        (staging / "README.md").write_text(render_card(manifest, kept, dataset.name))
        _swap(staging, dataset)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


def _write_data(
    staging: Path, kept: Sequence[LoadedTask], manifest: DatasetManifest
) -> dict[str, str]:
    rows: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for item in kept:
        entry = manifest.tasks[item.task.id]
        rows.setdefault((entry.config, entry.split), []).append(row(item, entry.group))
    return {
        data_path(config, split): write_parquet(staging / data_path(config, split), items)
        for (config, split), items in sorted(rows.items())
    }


def _swap(staging: Path, dataset: Path) -> None:
    if not dataset.exists():
        staging.rename(dataset)
        return
    old = dataset.with_name(f".{dataset.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    dataset.rename(old)
    staging.rename(dataset)
    shutil.rmtree(old, ignore_errors=True)


def render_card(manifest: DatasetManifest, kept: Sequence[LoadedTask], title: str) -> str:
    """The dataset card (README.md) for a manifest."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("trajforge.splits", "templates"),
        autoescape=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    configs = [
        {"name": name, "splits": [s for s in SPLITS if any(per[s].values())]}
        for name, per in manifest.counts.items()
    ]
    families = sorted({e.family for e in manifest.tasks.values()})
    return env.get_template("README.md.j2").render(
        title=title,
        revision=manifest.revision,
        configs=configs,
        families=families,
        counts=manifest.counts,
        total=len(manifest.tasks),
        held_out=sum(1 for e in manifest.tasks.values() if e.split == "test"),
        split=manifest.split,
        evidence=_evidence(kept),
        yields=manifest.yields,
        versions=manifest.versions,
        limits=_limits(manifest),
        license=card_license(manifest),
        sources=manifest.sources,
    )


def sources(kept: Sequence[LoadedTask]) -> tuple[SourceDataset, ...]:
    """Each Hub dataset (at each commit) the kept tasks came from, with its licence, and the
    tasks from local inputs (``dataset`` None); sorted, so the manifest is stable."""
    counts: Counter[tuple[str | None, str | None, str | None]] = Counter()
    for item in kept:
        origin = item.task.source.dataset
        key = (origin.repo_id, origin.commit, origin.license) if origin else (None, None, None)
        counts[key] += 1
    return tuple(
        SourceDataset(dataset=d, commit=c, license=lic, tasks=n)
        for (d, c, lic), n in sorted(counts.items(), key=lambda kv: tuple(x or "" for x in kv[0]))
    )


def card_license(manifest: DatasetManifest) -> str | None:
    """The card's ``license``: the one licence every task's source states; ``other`` when they
    differ; None when no source states one."""
    stated = {s.license for s in manifest.sources if s.license}
    if len(stated) == 1 and all(s.license for s in manifest.sources):
        return stated.pop()
    return "other" if stated else None


def _evidence(kept: Sequence[LoadedTask]) -> dict[str, dict[str, int]]:
    kinds = Counter(t.task.verifier.kind for t in kept)
    controls = Counter(c for t in kept for c in t.task.validation.controls)
    return {
        "verifier_kinds": dict(sorted(kinds.items())),
        "controls": dict(sorted(controls.items())),
    }


def _limits(manifest: DatasetManifest) -> list[str]:
    families = Counter(e.family for e in manifest.tasks.values())
    limits = []
    if families and max(families.values()) >= IMBALANCE_RATIO * min(families.values()):
        spread = ", ".join(f"{f} {n}" for f, n in sorted(families.items()))
        limits.append(f"Family imbalance: {spread}.")
    for family in FAMILIES:
        if family not in families:
            limits.append(f"No {family} tasks in this revision.")
    limits.extend(f"Held-out shortfall: {s}." for s in manifest.split.shortfalls)
    return limits
