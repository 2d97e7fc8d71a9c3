"""The reconstruct stage end to end: inputs → sessions → replay → candidates → task folders."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from trajforge import __version__
from trajforge.errors import FormatError
from trajforge.protocols import Format
from trajforge.reconstruct.emit import build_task, clean_staging, write_task
from trajforge.reconstruct.families import candidates
from trajforge.reconstruct.inputs import expand_paths, read_head
from trajforge.reconstruct.paths import session_root
from trajforge.reconstruct.replay import replay
from trajforge.records import ParseWarning, Session
from trajforge.registry import FORMATS, create
from trajforge.scrub import Scrubber

log = logging.getLogger(__name__)
MAX_WARNINGS_KEPT = 200


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


class ReconstructSummary(BaseModel):
    """Result of ``trajforge reconstruct`` (also its ``--json`` output)."""

    model_config = ConfigDict(extra="forbid")

    trajforge_version: str = __version__
    """Toolkit version."""
    inputs: list[InputOutcome] = Field(default_factory=list)
    """One row per input."""
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

    @property
    def failed_inputs(self) -> int:
        return sum(1 for i in self.inputs if i.error or i.warnings)

    def exit_code(self) -> int:
        """0 all inputs fine, 1 some failed or had bad records, 2 nothing readable."""
        if not any(i.sessions for i in self.inputs):
            return 2
        return 1 if self.failed_inputs else 0


def detect(path: Path, formats: Sequence[Format]) -> Format:
    """The first format whose sniff accepts ``path``."""
    head = read_head(path)
    if not path.is_dir() and not head.strip():
        raise FormatError(f"{path}: empty file")
    for fmt in formats:
        if fmt.sniff(path, head):
            return fmt
    known = ", ".join(f.name for f in formats)
    raise FormatError(f"{path}: not a recognised trajectory (tried {known})")


def all_formats() -> list[Format]:
    return [create(FORMATS, name, "format") for name in FORMATS]


def iter_sessions(
    path: Path, fmt: Format, outcome: dict[str, Any], summary: ReconstructSummary
) -> Iterator[Session]:
    """Sessions of one input; warnings go into the summary and ``outcome``."""
    for item in fmt.parse(path):
        if isinstance(item, ParseWarning):
            _warn(summary, outcome, item)
            continue
        for warning in item.warnings:
            _warn(summary, outcome, warning)
        for kind, count in item.skipped.items():
            summary.skipped_records[kind] = summary.skipped_records.get(kind, 0) + count
        outcome["sessions"] += 1
        yield item


def _warn(summary: ReconstructSummary, outcome: dict[str, Any], warning: ParseWarning) -> None:
    outcome["warnings"] += 1
    if len(summary.warnings) < MAX_WARNINGS_KEPT:
        summary.warnings.append(f"{warning.file}:{warning.line}: {warning.message}")


def process_session(
    session: Session,
    out: Path,
    scrub: Scrubber,
    base: dict[str, str] | None,
    config: dict[str, Any],
) -> tuple[Counter[str], int, int, int]:
    """Replay one session and write its candidates: (families, written, existing, divergences)."""
    root = session_root(session.header.cwd, session.events)
    state = replay(session.events, root, base)
    families: Counter[str] = Counter()
    written = existing = 0
    for cand in candidates(session.events, state):
        task, folders = build_task(cand, session, state, scrub, config)
        families[cand.family] += 1
        if write_task(out, task, folders):
            written += 1
        else:
            existing += 1
    return families, written, existing, len(state.divergences) + len(state.violations)


def run(
    paths: Sequence[Path],
    out: Path,
    fmt_name: str = "auto",
    base: dict[str, str] | None = None,
    on_input: Callable[[Path], None] | None = None,
) -> ReconstructSummary:
    """Reconstruct every input into ``out``; per-input failures are recorded, not raised."""
    formats = all_formats() if fmt_name == "auto" else [create(FORMATS, fmt_name, "format")]
    inputs, missing = expand_paths(paths)
    summary = ReconstructSummary()
    summary.inputs.extend(InputOutcome(path=m.split(":")[0], format=None, error=m) for m in missing)
    out.mkdir(parents=True, exist_ok=True)
    clean_staging(out)
    scrub = Scrubber()
    config = {"format": fmt_name, "base_repo": base is not None}
    for path in inputs:
        summary.inputs.append(_one_input(path, formats, out, scrub, base, config, summary))
        if on_input is not None:
            on_input(path)
    summary.redactions = dict(scrub.counts)
    return summary


def _one_input(
    path: Path,
    formats: Sequence[Format],
    out: Path,
    scrub: Scrubber,
    base: dict[str, str] | None,
    config: dict[str, Any],
    summary: ReconstructSummary,
) -> InputOutcome:
    outcome: dict[str, Any] = {"path": str(path), "format": None, "sessions": 0, "warnings": 0}
    try:
        fmt = detect(path, formats)
        outcome["format"] = fmt.name
        for session in iter_sessions(path, fmt, outcome, summary):
            harness = session.header.harness
            summary.sessions[harness] = summary.sessions.get(harness, 0) + 1
            families, written, existing, diverged = process_session(
                session, out, scrub, base, config
            )
            per = summary.candidates.setdefault(harness, {})
            for family, count in families.items():
                per[family] = per.get(family, 0) + count
            summary.written += written
            summary.existing += existing
            summary.divergences += diverged
    except FormatError as exc:
        outcome["error"] = str(exc)
    except (OSError, ValueError, RecursionError) as exc:  # one broken input never stops the rest
        log.debug("input %s failed", path, exc_info=True)
        outcome["error"] = f"{path}: {type(exc).__name__}: {exc}"
    return InputOutcome(**outcome)
