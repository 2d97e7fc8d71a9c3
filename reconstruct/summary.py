"""What ``trajforge reconstruct`` reports: one row per input, per Hub dataset, and the counts."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from trajforge import __version__
from trajforge.reconstruct.funnel import TriageCounts
from trajforge.records import CommitChosenBy, Family, Reason, RepoFoundBy, RepoStatus, TriageDrop


class InputOutcome(BaseModel):
    """What happened to one input path."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    """Input path."""
    format: str | None
    """Detected (or forced) format."""
    sessions: int = 0
    """Sessions read from it."""
    warnings: int = 0
    """Records that could not be used."""
    error: str | None = None
    """Why nothing could be read, when nothing could."""
    same_session_as: str | None = None
    """The input read instead of this one: it holds the same session in another shape (hermes:
    the ``session_<id>.json`` snapshot beside the gateway's ``<id>.jsonl``); this one is not."""


class HubDataset(BaseModel):
    """One ``hf://datasets/ORG/NAME[@REV][/PATH]`` input: what it resolved to and gave."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str
    """The input as given."""
    repo_id: str
    """Dataset repository id, ``ORG/NAME``."""
    revision: str
    """Revision as asked (``main`` when none was)."""
    commit: str | None = None
    """The commit it resolved to (None: it could not be resolved)."""
    files: int = 0
    """Session files read from it."""
    license: str | None = None
    """The licence its dataset card states; None: the card names none (or there is no card)."""
    parquet: str | None = None
    """The revision whose parquet stood in for raw session files, when it did
    (``refs/convert/parquet``: the Hub's conversion, the raw files being gone)."""
    warnings: tuple[str, ...] = ()
    """What reading its parquet back lost (first few: rows or files that could not be read)."""
    error: str | None = None
    """Why nothing could be read from it, and what to do."""


class FailedCandidate(BaseModel):
    """A candidate that could not be built or written (the rest of the run went on)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    """Input file of its session."""
    session: str
    """Session id."""
    stage: Literal["build", "write"]
    """build: replaying or assembling the task failed; write: its folder could not be written."""
    reason: str
    """What went wrong."""
    task_id: str | None = None
    """Task id, when it got that far."""


class SessionFiles(BaseModel):
    """How complete a session's candidates' workspaces are: distinct files over its candidates
    (each task's ``files`` report: a file is missing when any candidate lacks its content)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    needed: int = 0
    """Files the candidates' starting and completed workspaces hold or touched."""
    recovered: int = 0
    """Of ``needed``, files whose full content is known in every candidate."""
    partial: int = 0
    """Of ``needed``, files known only in part (truncated or ranged reads)."""
    missing: int = 0
    """Of ``needed``, files the session touched whose content could not be recovered
    (``workspace_incomplete`` in validate unless a shell command re-makes them)."""


class SessionOutcome(BaseModel):
    """What happened to one session: its repository, how complete its files are, and its
    episodes kept (per family) and dropped (per reason)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    """Input the session was read from, as its :class:`InputOutcome` names it (path or Hub URL)."""
    session: str
    """Session id."""
    harness: str
    """Harness that recorded it."""
    repo: RepoStatus | None = None
    """Repository outcome (``--repos`` / ``--repo-map``, or found for ``--base-repo``); None: no
    repository was looked for."""
    found_by: RepoFoundBy | None = None
    """How the checkout was matched to the session (``base_repo``: given with ``--base-repo``)."""
    commit_by: CommitChosenBy | None = None
    """How the commit was chosen (found: given, recorded by the harness, or best content match)."""
    repository: str | None = None
    """The matched checkout (found, ambiguous): its remote URL, else its local path."""
    commit: str | None = None
    """Full commit hash the workspace starts from (found only; None for ``--base-repo``)."""
    files: SessionFiles = Field(default_factory=SessionFiles)
    """Files its candidates need against files recovered."""
    episodes: int = 0
    """Episodes judged: candidates built plus episodes triage dropped (a repair counts once per
    fail→pass pair), so ``kept`` + ``dropped`` + ``failed`` add up to it."""
    merged: int = 0
    """Acknowledgements, continuations and harness-only turns folded into the thread before."""
    kept: dict[Family, int] = Field(default_factory=dict)
    """Candidates written (or already present), per family."""
    dropped: dict[Reason, int] = Field(default_factory=dict)
    """Episodes dropped, per reason (triage's and qa duplicates collapsed by the run)."""
    failed: int = 0
    """Candidates that could not be built or written (each a ``failed_candidates`` row)."""
    error: str | None = None
    """Why the session could not be replayed at all (its candidates are lost)."""


class ReconstructSummary(BaseModel):
    """Result of ``trajforge reconstruct`` (also its ``--json`` output)."""

    model_config = ConfigDict(extra="forbid")

    trajforge_version: str = __version__
    """Toolkit version."""
    inputs: list[InputOutcome] = Field(default_factory=list)
    """One row per input."""
    datasets: list[HubDataset] = Field(default_factory=list)
    """One row per Hub dataset input (``hf://datasets/...``): commit, files, licence."""
    sessions: dict[str, int] = Field(default_factory=dict)
    """Sessions per harness."""
    candidates: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Candidates per harness and family."""
    written: int = 0
    """Task folders written."""
    existing: int = 0
    """Tasks already present with the same id (not rewritten)."""
    warnings: list[str] = Field(default_factory=list)
    """First warnings, as ``file:line: message``."""
    skipped_records: dict[str, int] = Field(default_factory=dict)
    """Unused or unknown record types, counted."""
    redactions: dict[str, int] = Field(default_factory=dict)
    """Secrets redacted, by kind."""
    divergences: int = 0
    """Edits that could not be replayed plus confinement violations."""
    failed_candidates: list[FailedCandidate] = Field(default_factory=list)
    """Candidates that could not be built or written, with file and reason."""
    triage: dict[str, TriageCounts] = Field(default_factory=dict)
    """Per harness: sessions, turns merged, episodes dropped by reason, candidates."""
    dropped: list[TriageDrop] = Field(default_factory=list)
    """The dropped episodes themselves (first MAX_DROPS_KEPT), for the audit page."""
    repos: dict[str, dict[str, int]] = Field(default_factory=dict)
    """With ``--repos``: sessions per harness by repository outcome (found / not_found /
    ambiguous); validate rejects their coding tasks as repo_not_found / commit_ambiguous."""
    session_rows: list[SessionOutcome] = Field(default_factory=list)
    """One row per session read, in input order: repository, files, episodes kept and dropped."""

    @property
    def failed_inputs(self) -> int:
        return sum(1 for i in self.inputs if i.error or i.warnings)

    def exit_code(self) -> int:
        """0 all inputs fine, 1 some failed or had bad records, 2 nothing readable."""
        if not any(i.sessions for i in self.inputs):
            return 2
        return 1 if self.failed_inputs or self.failed_candidates else 0
