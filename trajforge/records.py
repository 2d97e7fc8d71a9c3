"""Records that travel between stages: frozen pydantic models serialised as JSON.

Every record has a ``schema_version`` and is identified by :func:`record_hash`, the sha256 of
its sorted JSON. Loading goes through :func:`load_record`, which turns validation failures into
a :class:`~trajforge.errors.RecordError` naming the file and the field.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from trajforge import __version__
from trajforge.errors import RecordError

SCHEMA_VERSION = 1
FROZEN = ConfigDict(frozen=True, extra="forbid", defer_build=True)
"""Every record's configuration: immutable, unknown fields rejected; validators are built the
first time a record is made or loaded, not at import (a command pays only for the records it
uses: ``trajforge guard check`` starts about 40 ms sooner)."""

EventKind = Literal["user", "assistant", "tool_call", "tool_result"]
ToolKind = Literal["read", "write", "edit", "patch", "shell", "other"]
Family = Literal["build", "extend", "repair", "qa", "data"]
FAMILIES: tuple[Family, ...] = get_args(Family)
"""Every task family, in the order of :data:`Family`."""
CODE_FAMILIES: tuple[Family, ...] = ("build", "extend", "repair")
"""Families checked by running code (hidden tests or a check command)."""
Outcome = Literal["accepted", "rejected", "error", "timeout"]
VerifierKind = Literal["command", "tests", "answer", "none"]


class Reason(StrEnum):
    """Closed set of reasons a session episode or a candidate does not become a task.

    Triage (reconstruct) drops episodes for the first group; validation and the environment
    stages reject candidates for the second. Reports group by these values.
    """

    HARNESS_INJECTED = "harness_injected"
    """The user-role text was written by the harness or the environment, not by a person."""
    HARNESS_ERROR = "harness_error"
    """The episode ended in an API or harness failure (timeout, login, quota, overload...)."""
    NOT_SELF_CONTAINED = "not_self_contained"
    """The request cannot be understood without the session (acks, unresolved references)."""
    LIVE_STATE = "live_state"
    """The deliverable depends on state outside the workspace (hosts, machine, accounts)."""
    CONVERSATION = "conversation"
    """Opinion, planning or explanation with nothing checkable (qa)."""
    NO_DELIVERABLE = "no_deliverable"
    """An action request that changed no workspace file and asked for no information."""
    DELEGATED = "delegated"
    """Work was done by a sub-agent whose own tool calls the session does not record."""
    DUPLICATE = "duplicate"
    """The same question or answer as a task already kept."""
    REPO_NOT_FOUND = "repo_not_found"
    """The session's repository is not among the checkouts given."""
    COMMIT_AMBIGUOUS = "commit_ambiguous"
    """No commit of the repository matches what the session read well enough."""
    WORKSPACE_INCOMPLETE = "workspace_incomplete"
    """Files the task needs could not be recovered."""
    ENVIRONMENT_UNAVAILABLE = "environment_unavailable"
    """A toolchain or registry the task needs cannot be had here."""
    ENVIRONMENT_BUILD_FAILED = "environment_build_failed"
    """Installing the task's dependencies failed."""
    ORACLE_FAILS = "oracle_fails"
    """The completed workspace does not pass the task's own check."""
    NO_VERIFIER = "no_verifier"
    """Nothing can check the deliverable (no tests, no check command, no answer key)."""


class Record(BaseModel):
    """Base of every record: frozen, no unknown fields, versioned."""

    model_config = FROZEN

    schema_version: int = SCHEMA_VERSION
    """Version of the record schema this instance was written with."""


class SourcePos(BaseModel):
    """Where an event came from in its input."""

    model_config = FROZEN

    file: str
    """Path of the input file (or database / directory) the event was read from."""
    line: int
    """1-based line number, or record index for non-line formats (SQLite rows, JSON arrays)."""


class Edit(BaseModel):
    """One search/replace edit inside an ``edit`` tool call."""

    model_config = FROZEN

    old: str
    """Text to find (exactly, as the harness would)."""
    new: str
    """Replacement text."""
    replace_all: bool = False
    """Replace every occurrence instead of requiring exactly one."""


class Event(BaseModel):
    """One normalised step of a session.

    Tool calls carry normalised arguments for the kinds replay understands:
    ``read``: path (+ offset/limit); ``write``: path + content; ``edit``: path + edits;
    ``patch``: patch text + patch_format; ``shell``: command (+ cwd). ``arguments`` keeps the
    harness's raw arguments for everything else (the guard reads them).
    """

    model_config = FROZEN

    kind: EventKind
    """user / assistant message, tool call, or tool result."""
    source: SourcePos
    """Position in the input."""
    text: str = ""
    """Message text (user, assistant) or tool output (tool_result)."""
    tool: str | None = None
    """Harness tool name as recorded (``bash``, ``edit``, ``apply_patch``, ...)."""
    tool_kind: ToolKind | None = None
    """Canonical kind of the tool call (on tool_call and tool_result events)."""
    call_id: str | None = None
    """Id pairing a tool call with its result (synthesised when the format has none)."""
    arguments: dict[str, Any] = Field(default_factory=dict)
    """Raw arguments of the tool call as the harness recorded them."""
    path: str | None = None
    """Target file path for read / write / edit calls, as given by the harness."""
    content: str | None = None
    """Full file content for ``write``; for a ``read`` result the recovered file text."""
    edits: tuple[Edit, ...] = ()
    """Search/replace edits for ``edit`` calls, applied in order."""
    patch: str | None = None
    """Patch text for ``patch`` calls."""
    patch_format: Literal["v4a", "unified"] | None = None
    """Dialect of ``patch``: OpenAI V4A (``*** Begin Patch``) or a unified diff."""
    command: str | None = None
    """Shell command for ``shell`` calls."""
    cwd: str | None = None
    """Working directory of a shell command when the harness recorded one."""
    exit_code: int | None = None
    """Exit code of a shell command when known."""
    is_error: bool = False
    """The harness reported the tool call as failed (nothing it would have changed changed)."""
    partial: bool = False
    """For read results: the content is only part of the file (offset/limit or truncation)."""
    offset: int | None = None
    """For read calls: 1-based first line requested, when given."""


class GitInfo(BaseModel):
    """Git state recorded by the harness at session start."""

    model_config = FROZEN

    repository_url: str | None = None
    """Remote URL."""
    branch: str | None = None
    """Branch name."""
    commit: str | None = None
    """Commit hash."""


class SessionHeader(BaseModel):
    """What is known about a session before its events."""

    model_config = FROZEN

    harness: str
    """Short harness name: pi, opencode, hermes, claude-code, codex."""
    session_id: str
    """The harness's session id, or a hash of the source when it has none."""
    source_path: str
    """Input file (or database / directory) the session was read from."""
    content_hash: str
    """sha256 of the bytes the session was parsed from."""
    harness_version: str | None = None
    """Harness version or session format version when recorded."""
    model: str | None = None
    """Model id (provider/model when both are known)."""
    cwd: str | None = None
    """Working directory of the session; absolute paths are made relative to it."""
    git: GitInfo | None = None
    """Git information when the harness recorded it."""
    started_at: str | None = None
    """ISO timestamp of the session start."""


class ParseWarning(BaseModel):
    """A record that could not be used, with its position."""

    model_config = FROZEN

    file: str
    """Input file."""
    line: int
    """1-based line (or record index)."""
    message: str
    """What was wrong."""


class Session(Record):
    """A parsed session: header and events along the conversation path."""

    header: SessionHeader
    """Session metadata."""
    events: tuple[Event, ...]
    """Events in conversation order (tree / DAG / forks resolved)."""
    warnings: tuple[ParseWarning, ...] = ()
    """Records skipped as unreadable."""
    skipped: dict[str, int] = Field(default_factory=dict)
    """Counts of known-but-unused and unknown record types, by type name."""


RepoStatus = Literal["found", "not_found", "ambiguous"]
RepoFoundBy = Literal["base_repo", "repo_map", "cwd", "recorded_url", "remote_name", "folder_name"]
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


class Verifier(BaseModel):
    """How a task is checked."""

    model_config = FROZEN

    kind: VerifierKind
    """command: a recorded check command; tests: hidden test files; answer: answer checker."""
    command: str | None = None
    """Shell command run in the workspace; exit 0 means pass."""
    tests: tuple[str, ...] = ()
    """Hidden test files (paths under the task's ``tests/`` folder)."""


class Validation(BaseModel):
    """Outcome of validating the verifier against the control matrix."""

    model_config = FROZEN

    status: Literal["pending", "accepted", "rejected", "error", "timeout"] = "pending"
    """pending until ``trajforge validate`` has run."""
    reasons: tuple[str, ...] = ()
    """Why it was accepted or rejected, precisely."""
    controls: dict[str, Any] = Field(default_factory=dict)
    """Per-control results."""
    evidence: dict[str, Any] = Field(default_factory=dict)
    """Timings, hashes, backend and other proof."""


class FileReport(BaseModel):
    """How well the task's files could be reconstructed."""

    model_config = FROZEN

    recovered: tuple[str, ...] = ()
    """Files whose full content is known."""
    partial: tuple[str, ...] = ()
    """Files known only in part (truncated or ranged reads)."""
    missing: tuple[str, ...] = ()
    """Files the session touched whose content could not be recovered."""
    shell_modified: tuple[str, ...] = ()
    """Files changed by shell commands; validation re-runs those commands."""
    shell_commands: tuple[str, ...] = ()
    """Shell commands in the episode that may have changed files, in order."""
    divergences: tuple[str, ...] = ()
    """Edits that could not be applied (old text not found) and confinement violations."""


class Provenance(BaseModel):
    """How a record was produced."""

    model_config = FROZEN

    trajforge_version: str = __version__
    """Toolkit version."""
    config: dict[str, Any] = Field(default_factory=dict)
    """Configuration that influenced the output."""


class TriageDrop(BaseModel):
    """An episode of a session that triage did not make a candidate of, and why."""

    model_config = FROZEN

    harness: str
    """Harness of the session."""
    session: str
    """Session id."""
    file: str
    """Input file."""
    line: int
    """Source line (or record index) of the episode's first event."""
    events: tuple[int, int]
    """First and last event index of the episode."""
    reason: Reason
    """Closed reason."""
    detail: str
    """What exactly triggered it (a pattern matched, a command, a path)."""
    text: str
    """The request, shortened (scrubbed)."""


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


class TestSets(BaseModel):
    """The tests a build / extend / repair solution is scored on (fail-to-pass rewards)."""

    __test__ = False  # not a pytest test class

    model_config = FROZEN

    fail_to_pass: tuple[str, ...] = ()
    """Tests that fail on the starting workspace and pass on the oracle: all must pass."""
    pass_to_pass: tuple[str, ...] = ()
    """Tests that pass on the starting workspace and on the oracle: none may break."""


MutantVerdict = Literal["killed", "survived", "equivalent", "unknown"]


class MutantNote(BaseModel):
    """One mutant the hidden tests let through, and what was found out about it."""

    model_config = FROZEN

    id: str
    """Mutant id (``m3``), as in ``controls.mutants.items``."""
    description: str
    """What the fault changes and where."""
    verdict: MutantVerdict
    """equivalent: behaves as the oracle on every exercised input (not counted); killed: by a
    test derived from the oracle; survived: counted against the kill rate."""
    evidence: str
    """Why: the inputs compared, the input it differs on, whether its line ran."""


class MutantSummary(BaseModel):
    """The injected-fault control of one task: counts, kill rate and its Wilson interval."""

    model_config = FROZEN

    total: int
    """Mutants run."""
    killed: int
    """Killed by a kept hidden test (mined, teacher-written or derived from the oracle)."""
    killed_by_derived: int
    """Of ``killed``, those only a test derived from the oracle kills."""
    survived: int
    """Not killed and not shown equivalent: counted against the kill rate."""
    equivalent: int
    """Behave as the oracle on every exercised input: left out of the kill rate."""
    unknown: int
    """Timed out or errored: neither killed nor survived."""
    kill_rate: float | None
    """killed / (killed + survived); None when no mutant was decided."""
    wilson_low: float
    """Lower end of the Wilson interval of the kill rate."""
    wilson_high: float
    """Upper end of the Wilson interval of the kill rate."""
    z: float
    """z of the interval (1.96: 95 %)."""
    equivalents: tuple[MutantNote, ...] = ()
    """The equivalent mutants, each with its evidence."""
    survivors: tuple[MutantNote, ...] = ()
    """The counted survivors, each with its evidence."""


DerivedSource = Literal["mined", "instruction", "session"]


class DerivedTest(BaseModel):
    """One hidden test derived from the oracle's behaviour on an exercised input."""

    model_config = FROZEN

    name: str
    """Test function name in the derived test file."""
    call: str
    """The call it makes, as code (``top_words('y x y x z', 1)``)."""
    module: str
    """Module the function is imported from."""
    source: DerivedSource
    """Where the input came from: a hidden test's call, the instruction, the session."""
    origin: str
    """The hidden test that made the call, ``instruction``, or the session command."""
    kills: tuple[str, ...]
    """Ids of the surviving mutants it fails on."""


class DerivedTests(BaseModel):
    """Tests derived from the oracle for one task, and the inputs they were chosen from."""

    model_config = FROZEN

    path: str | None = None
    """The derived test file among the hidden tests (None: none kept)."""
    tests: tuple[DerivedTest, ...] = ()
    """Kept tests."""
    inputs: dict[str, int] = Field(default_factory=dict)
    """Exercised inputs observed, per source (mined / instruction / session)."""
    dropped: int = 0
    """Candidate tests dropped: flaky or passing on the oracle's stub or on no survivor."""
    notes: tuple[str, ...] = ()
    """Why no test was derived, when none was (the check names its test files; not Python)."""


def canonical_json(data: Any) -> bytes:
    """Sorted, compact JSON bytes, the input of every content hash."""
    return orjson.dumps(data, option=orjson.OPT_SORT_KEYS)


def sha256_hex(data: bytes) -> str:
    """Hex sha256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def record_hash(record: BaseModel) -> str:
    """Hash of a record's sorted JSON."""
    return sha256_hex(canonical_json(record.model_dump(mode="json")))


def dump_record(record: BaseModel) -> str:
    """Pretty JSON for files people read (task.json, manifests)."""
    return orjson.dumps(
        record.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2
    ).decode()


R = TypeVar("R", bound=BaseModel)


def load_record(cls: type[R], path: Path) -> R:
    """Load and validate a JSON record; errors name the file and the field."""
    try:
        data = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise RecordError(f"{path}: cannot read: {exc.strerror}") from None
    except orjson.JSONDecodeError as exc:
        raise RecordError(f"{path}: not valid JSON: {exc}") from None
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise RecordError(f"{path}: field {field!r}: {first['msg']}") from None


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
    teacher: str = "unknown"
    """Teacher(s) that wrote the hidden tests, from the tasks' validation evidence."""
    sandbox_image: str = "unknown"
    """Sandbox image tag and recipe hash."""
    guard_bundle: str = "none"
    """Guard detector bundle version, or ``none`` when no guard was available."""


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
