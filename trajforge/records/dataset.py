"""Dataset revisions and deployment units."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from trajforge import __version__
from trajforge.records.base import FROZEN, Record
from trajforge.records.task import Provenance

UNKNOWN_TEACHER = "unknown"
"""``DatasetVersions.teacher`` before the tasks' own teachers are read."""


class ManifestTask(BaseModel):
    """One task of a dataset revision, as listed in its manifest."""

    model_config = FROZEN

    family: str
    """Task family (build, extend, repair, qa, data)."""
    config: str
    """Dataset config the task is in (``coding`` or ``data_analysis``)."""
    split: str
    """``train`` or ``test`` (held out)."""
    group: str
    """Leakage group: tasks sharing a session or project files; never straddles splits."""
    content_hash: str
    """sha256 of the task record and every packed file."""


class SplitDefinition(BaseModel):
    """How the held-out split was chosen, enough to redo it."""

    model_config = FROZEN

    seed: int
    """Seed of the group shuffle."""
    targets: dict[str, int] = Field(default_factory=dict)
    """Requested held-out size per family or config (as given on the command line)."""
    per_family: dict[str, int] = Field(default_factory=dict)
    """Requested held-out size per family after expanding config totals."""
    achieved: dict[str, int] = Field(default_factory=dict)
    """Held-out tasks actually selected per family."""
    shortfalls: tuple[str, ...] = ()
    """Targets that could not be met, and why."""
    grouping: str = "session+project-files"
    """What links tasks into groups that must stay on one side."""
    near_duplicate_threshold: float = 0.8
    """Estimated Jaccard similarity at or above which two tasks are near duplicates."""


class Duplicate(BaseModel):
    """A task removed as a duplicate of another."""

    model_config = FROZEN

    removed: str
    """Id of the task dropped."""
    kept: str
    """Id of the task kept in its place."""
    kind: Literal["exact", "near"]
    """exact: identical normalised instruction and oracle diff; near: MinHash similarity."""
    similarity: float
    """Estimated Jaccard similarity (1.0 for exact)."""


class DatasetVersions(BaseModel):
    """Versions of everything that shaped a dataset revision."""

    model_config = FROZEN

    trajforge: str = __version__
    """Toolkit version."""
    teacher: str = UNKNOWN_TEACHER
    """Teacher(s) that wrote the hidden tests, from the tasks' validation evidence."""
    sandbox_image: str = "unknown"
    """Sandbox image tag and recipe hash."""
    guard_bundle: str = "none"
    """Guard detector bundle version, or ``none`` when no guard was available."""


class SourceDataset(BaseModel):
    """Where a dataset revision's tasks came from, and under which licence."""

    model_config = FROZEN

    dataset: str | None
    """Hub dataset repository id (``ORG/NAME``) the sessions came from; None: local inputs."""
    commit: str | None = None
    """Its commit the sessions were read at."""
    license: str | None = None
    """The licence its card states; None: none stated (or a local input)."""
    tasks: int = 0
    """Tasks of this revision from it."""


class DatasetManifest(Record):
    """``manifest.json`` of a dataset revision folder."""

    revision: str
    """Revision name (the tag or branch it is pushed as by default)."""
    tasks: dict[str, ManifestTask]
    """Task id → where it went and its content hash."""
    counts: dict[str, dict[str, dict[str, int]]]
    """config → split → family → number of tasks."""
    split: SplitDefinition
    """How train and test were separated."""
    yields: dict[str, Any]
    """Candidates seen, by validation status, duplicates removed, kept; overall and per family."""
    duplicates: tuple[Duplicate, ...] = ()
    """Tasks removed as exact or near duplicates."""
    versions: DatasetVersions = Field(default_factory=DatasetVersions)
    """trajforge, teacher, sandbox image and guard bundle versions."""
    files: dict[str, str] = Field(default_factory=dict)
    """Data file path (relative to the dataset folder) → sha256."""
    sources: tuple[SourceDataset, ...] = ()
    """The sessions' sources: each Hub dataset (commit, licence), and local inputs."""


class DeploymentUnit(Record):
    """What a policy is trained or evaluated as: base + adapter + harness + tool policy + guard.

    Nothing is trained or evaluated without one (``deployment_unit.json`` beside an adapter and
    in every eval run). Two eval arms may differ only in ``adapter`` / ``adapter_revision``.
    """

    base_model: str
    """Base model id (hub id or local path)."""
    base_revision: str
    """Base model revision (hub commit / tag, or ``sha256:<hex>`` of a local model's weights)."""
    adapter: str | None = None
    """LoRA adapter path or hub id; None = the base model alone."""
    adapter_revision: str | None = None
    """Adapter revision (``sha256:<hex>`` of its weights, or a hub commit); None without one."""
    harness: str
    """Harness registry name (pi, opencode, hermes) or a scripted policy's harness."""
    harness_version: str
    """Exact version the installed harness CLI reported."""
    tool_policy: str
    """Tools the harness may call and how calls are judged (e.g. ``harness-default+guard``)."""
    guard_bundle: str
    """Guard detector bundle version the calls went through."""
    provenance: Provenance = Field(default_factory=Provenance)
    """Toolkit version and the configuration that produced this unit."""
