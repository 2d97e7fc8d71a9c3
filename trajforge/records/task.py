"""Tasks: where one came from, its files, its verifier, its answer key and environment."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from trajforge import __version__
from trajforge.records.base import FROZEN, Family, Record, VerifierKind
from trajforge.records.upgrade import TASK_SCHEMA, upgrade_task
from trajforge.records.validation import Validation

RepoStatus = Literal["found", "not_found", "ambiguous"]
RepoFoundBy = Literal[
    "base_repo", "repo_map", "cwd", "recorded_url", "remote_name", "folder_name", "content"
]
CommitChosenBy = Literal["given", "recorded", "content_match"]


class RepoMatch(BaseModel):
    """The repository and commit a session's starting workspace was rebuilt from (``--repos``)."""

    model_config = FROZEN

    status: RepoStatus
    """found: the workspace is the checkout at ``commit`` plus the session's earlier edits;
    not_found: no checkout given matched the session; ambiguous: a checkout matched but no
    commit matched what the session read well enough (its files were not used)."""
    url: str | None = None
    """Remote URL (the recorded one, else the checkout's ``origin``)."""
    path: str | None = None
    """Local checkout the files came from."""
    subdir: str = ""
    """The session's folder inside the repository ('' when it ran at the top)."""
    commit: str | None = None
    """Full commit hash the workspace starts from (ambiguous: the best candidate)."""
    branch: str | None = None
    """Branch: the recorded one, else a local branch containing the commit."""
    found_by: RepoFoundBy | None = None
    """How the checkout was matched to the session."""
    commit_by: CommitChosenBy | None = None
    """given (``--base-repo DIR@REV``), recorded by the harness, or the best content match."""
    match: float | None = None
    """Share of the compared files whose content at ``commit`` equals what the session read."""
    compared: int = 0
    """Files the session read before changing them that the searched commits track."""
    matched: int = 0
    """Of ``compared``, files equal at ``commit``."""
    unmatched: tuple[str, ...] = ()
    """Compared files that differ at ``commit`` (the session's read content is used for them)."""
    untracked: tuple[str, ...] = ()
    """Files the session read that no searched commit tracks (not scored)."""
    commits_searched: int = 0
    """Commits scored."""
    detail: str = ""
    """What was looked for (not found), or the best score against the threshold (ambiguous)."""


class DatasetOrigin(BaseModel):
    """The Hub dataset file a session was read from (``hf://datasets/ORG/NAME@REV``)."""

    model_config = FROZEN

    repo_id: str
    """Dataset repository id, ``ORG/NAME``."""
    revision: str
    """Revision as asked (branch, tag, commit, or ``refs/convert/parquet``)."""
    commit: str
    """The commit the revision resolved to when the file was downloaded."""
    path: str
    """The file's path in the repository."""
    rows: tuple[int, int] | None = None
    """Parquet rows of ``path`` (first, last; 0-based, inclusive) the session was read back
    from, when parquet stood in for the raw files (a session running on into the next shard
    continues there)."""
    license: str | None = None
    """The licence the dataset card states (its ``license`` field); None: the card names none."""

    @property
    def url(self) -> str:
        """``hf://datasets/ORG/NAME@COMMIT/PATH``: where exactly the session came from."""
        return f"hf://datasets/{self.repo_id}@{self.commit}/{self.path}"


class TaskSource(BaseModel):
    """Where a task came from."""

    model_config = FROZEN

    harness: str
    """Harness that recorded the session."""
    session: str
    """Session id."""
    path: str
    """Input path of the session."""
    events: tuple[int, int]
    """First and last event index (inclusive) of the episode in the session."""
    repo: RepoMatch | None = None
    """Repository and commit recovered for the session (None: no ``--repos`` given)."""
    dataset: DatasetOrigin | None = None
    """The Hub dataset, commit and file the session came from (None: a local input)."""


class Verifier(BaseModel):
    """How a task is checked."""

    model_config = FROZEN

    kind: VerifierKind
    """command: a recorded check command; tests: hidden test files; answer: answer checker."""
    command: str | None = None
    """Shell command run in the workspace; exit 0 means pass."""
    tests: tuple[str, ...] = ()
    """Hidden test files (paths under the task's ``tests/`` folder)."""


class FileReport(BaseModel):
    """How well the task's files could be reconstructed."""

    model_config = FROZEN

    recovered: tuple[str, ...] = ()
    """Files whose full content is known."""
    partial: tuple[str, ...] = ()
    """Files known only in part (truncated or ranged reads)."""
    missing: tuple[str, ...] = ()
    """Files the episode read or changed whose content could not be recovered."""
    absent: tuple[str, ...] = ()
    """Files that existed, unknown at the episode (an earlier command or hand edit changed them
    beyond replay), which the episode neither read nor changed: left out of the workspace; the
    oracle's run proves whether the check needs them."""
    shell_modified: tuple[str, ...] = ()
    """Files changed by shell commands; validation re-runs those commands."""
    shell_commands: tuple[str, ...] = ()
    """Shell commands in the episode that may have changed files, in order."""
    divergences: tuple[str, ...] = ()
    """Edits that could not be applied (old text not found) and confinement violations."""

    @property
    def unknown(self) -> tuple[str, ...]:
        """Every file left out of the task as unknown: the missing, then the absent."""
        return (*self.missing, *self.absent)


class Provenance(BaseModel):
    """How a record was produced."""

    model_config = FROZEN

    trajforge_version: str = __version__
    """Toolkit version."""
    config: dict[str, Any] = Field(default_factory=dict)
    """Configuration that influenced the output."""


FactKind = Literal["number", "identifier", "path", "polarity"]


class Fact(BaseModel):
    """One checkable fact of a recorded answer, grounded in the workspace or a command's output."""

    model_config = FROZEN

    kind: FactKind
    """number (with unit), identifier (code name, value), path (file or folder), polarity."""
    value: str
    """As written in the recorded answer (``8``, ``MAX_WORKERS``, ``pool/settings.py``, ``yes``)."""
    grounded_in: str
    """Where it was found: ``file:PATH`` or ``output:COMMAND`` (polarity: the fact it rests on)."""
    denies: str | None = None
    """Polarity ``no`` that the recorded answer states by denying this word of the question in its
    first sentence ("is it seeded?" → "… isn't seeded like a PRNG"), not by a leading "No": an
    answer that denies it the same way states the fact too. None: a leading yes / no."""


class AnswerKey(BaseModel):
    """What a qa answer must state: the grounded facts the question asks for."""

    model_config = FROZEN

    required: tuple[Fact, ...]
    """Every one must be stated (numbers by value, words accepted); none may be contradicted."""
    others: tuple[Fact, ...] = ()
    """Further grounded facts of the recorded answer (context; not required)."""
    focus: tuple[FactKind, ...] = ()
    """Kinds of fact the question asks for, read off its wording."""


Ecosystem = Literal["node", "python", "rust", "go"]
PackageManager = Literal["npm", "pnpm", "yarn", "pip", "cargo", "go"]


class EnvironmentRecipe(BaseModel):
    """How one part of a task's dependencies is installed (one manifest of one ecosystem)."""

    model_config = FROZEN

    ecosystem: Ecosystem
    """Language ecosystem."""
    manager: PackageManager
    """Package manager that installs it."""
    manager_version: str | None = None
    """Pinned manager version (``packageManager`` of package.json), when given."""
    root: str = ""
    """Workspace folder holding the manifest ('' for the top)."""
    manifest: str
    """Manifest file, relative to the workspace (``package.json``, ``pyproject.toml``...)."""
    lockfiles: tuple[str, ...] = ()
    """Lockfiles the install is frozen to, relative to the workspace (none: not locked)."""
    packages: tuple[str, ...] = ()
    """Python: requirement specifiers installed (the project's and its test dependencies)."""
    pythonpath: tuple[str, ...] = ()
    """Python: workspace folders put on the import path (``src`` for a src layout)."""
    install: tuple[str, ...]
    """The install commands, as a person would type them (also the Dockerfile lines)."""
    toolchain: tuple[str, ...]
    """Programs it needs (``node``, ``npm``, ``python3``, ``cargo``...)."""
    python: str | None = None
    """Python: the ``major.minor`` the packages are installed for."""
    workspaces: tuple[str, ...] = ()
    """Node: the manifests of the workspace members (npm / yarn / pnpm workspaces) installed
    with the root's lockfile, relative to the workspace (an npm task that works inside some
    members installs only those and the members they depend on)."""
    builds: tuple[str, ...] = ()
    """Node: compile steps run in the workspace before every check, as a person would type them
    (``cd packages/tui && tsgo -p tsconfig.build.json``): the members other members import
    through a ``dist/`` no repository commits, dependencies first."""


class Environment(BaseModel):
    """A coding task's environment: its recipes and the hash the built environment is cached by."""

    model_config = FROZEN

    recipes: tuple[EnvironmentRecipe, ...]
    """One per manifest, in install order."""
    inputs: dict[str, str] = Field(default_factory=dict)
    """Manifest and lockfile path → sha256 of its content (what the hash covers)."""
    hash: str
    """sha256 over the recipes and ``inputs``: one built environment per hash."""
    needs: tuple[str, ...] = ()
    """Programs the task's check command runs that no recipe provides (``cargo``, ``go``...)."""


class Task(Record):
    """A candidate (validation pending) or accepted task: ``OUT/tasks/<id>/task.json``.

    The task folder also holds ``workspace/`` (what the agent starts from), ``oracle/``
    (the completed files) and ``tests/`` (hidden tests) as written by the producing stage.
    """

    schema_version: int = TASK_SCHEMA
    """Version of the task.json schema (1: untyped validation, upgraded on load)."""
    id: str
    """``<family>-`` + content hash of source episode, instruction, files and verifier."""
    family: Family
    """build, extend, repair, qa, or data (generated data-analysis questions)."""
    instruction: str
    """What the agent is asked to do (after validation: the request plus the interface)."""
    request: str | None = None
    """The session's own request when ``instruction`` was rewritten from it; None: unchanged."""
    source: TaskSource
    """The session and episode the task was made from."""
    workspace: str = "workspace"
    """Folder (relative to the task folder) holding the starting files."""
    oracle: str | None = "oracle"
    """Folder holding the completed files (None for qa)."""
    answer: str | None = None
    """Expected answer for qa tasks."""
    answer_key: AnswerKey | None = None
    """Reconstructed qa tasks: the grounded facts an answer must state (None: value checker)."""
    verifier: Verifier
    """How the task is checked."""
    validation: Validation = Field(default_factory=Validation)
    """Validation outcome and evidence."""
    classification: tuple[str, ...] = ()
    """Why this family was chosen."""
    files: FileReport = Field(default_factory=FileReport)
    """Reconstruction quality of the files."""
    probes: tuple[str, ...] = ()
    """Folders holding the session's own failed intermediate workspaces (wrong attempts)."""
    provenance: Provenance = Field(default_factory=Provenance)
    """Toolkit version and config."""
    environment: Environment | None = None
    """Dependencies and toolchain the check needs, built once per hash (None: none needed)."""

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        return upgrade_task(data)
