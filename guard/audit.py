"""``trajforge guard audit``: run the detectors over recorded sessions and count what they catch.

Any format reconstruct reads is accepted. Each session gets a fresh detector (the given
profile, or one rooted at the session's cwd); blocked and flagged calls are listed per session
and counted per rule. Used to calibrate the bundle on clean corpora: a block there is a false
positive to fix in the rules.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from trajforge.errors import FormatError
from trajforge.guard.engine import RuleDetector
from trajforge.guard.profile import Profile
from trajforge.guard.rules import Bundle
from trajforge.protocols import Format
from trajforge.reconstruct.inputs import expand_paths
from trajforge.reconstruct.pipeline import all_formats, detect
from trajforge.records import Event, ParseWarning, Session
from trajforge.scrub import Scrubber

log = logging.getLogger(__name__)


class Hit(BaseModel):
    """One blocked or flagged call (or tool output)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: int
    """Line (or record index) of the event in its input."""
    tool: str
    """Harness tool name."""
    rule: str | None
    """Deciding rule."""
    reason: str
    """Why (secrets redacted)."""
    call: str
    """The call's command, path or arguments, shortened and scrubbed."""


class SessionAudit(BaseModel):
    """Audit of one session."""

    model_config = ConfigDict(extra="forbid")

    source: str
    """Input path."""
    harness: str
    """Harness that recorded it."""
    session: str = ""
    """Session id."""
    calls: int = 0
    """Tool calls judged."""
    blocks: list[Hit] = Field(default_factory=list)
    """Blocked calls."""
    flags: list[Hit] = Field(default_factory=list)
    """Allowed but suspicious calls."""
    error: str | None = None
    """Why the input could not be read, when it could not."""


class AuditReport(BaseModel):
    """``trajforge guard audit --json``."""

    model_config = ConfigDict(extra="forbid")

    bundle: str
    """Rule bundle version."""
    sessions: list[SessionAudit] = Field(default_factory=list)
    """Per session (and per unreadable input)."""
    rules: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Rule id → {"blocks": n, "flags": n}."""

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.sessions)

    def count(self, what: str) -> int:
        return sum(len(s.blocks if what == "blocks" else s.flags) for s in self.sessions)


def _home(cwd: str) -> str:
    parts = cwd.split("/")
    if len(parts) >= 3 and parts[1] in ("Users", "home"):
        return "/".join(parts[:3])
    return "/root"


def _summary(event: Event) -> str:
    text = event.command or event.path or str(event.arguments)
    return Scrubber().text(" ".join(text.split()))[:240]


def audit_session(session: Session, bundle: Bundle, profile: Profile | None) -> SessionAudit:
    """Judge every tool call and tool output of one session in order."""
    header = session.header
    if profile is None:
        cwd = header.cwd or "/workspace"
        profile = Profile(workspace=cwd, home=_home(cwd))
    detector = RuleDetector(profile, bundle)
    result = SessionAudit(
        source=header.source_path, harness=header.harness, session=header.session_id
    )
    for event in session.events:
        if event.kind == "tool_call" and event.tool:
            result.calls += 1
            decision = detector.check(event.tool, event.arguments, header.harness)
        elif event.kind == "tool_result" and event.text:
            decision = detector.check_output(event.text)
        else:
            continue
        if decision.decision == "allow":
            continue
        hit = Hit(
            line=event.source.line,
            tool=event.tool or "",
            rule=decision.rule,
            reason=decision.reason,
            call=_summary(event) if event.kind == "tool_call" else "(tool output)",
        )
        (result.blocks if decision.decision == "block" else result.flags).append(hit)
    return result


def _sessions(path: Path, formats: Sequence[Format]) -> Iterator[Session | ParseWarning]:
    fmt = detect(path, formats)
    yield from fmt.parse(path)


def audit(
    paths: Sequence[Path],
    bundle: Bundle,
    profile: Profile | None = None,
    on_input: Callable[[Path], None] | None = None,
) -> AuditReport:
    """Audit every session in ``paths``; unreadable inputs are reported, never raised."""
    report = AuditReport(bundle=bundle.version)
    inputs, missing = expand_paths(paths)
    for problem in missing:
        report.sessions.append(
            SessionAudit(source=problem.split(":")[0], harness="", error=problem)
        )
    formats = all_formats()
    for path in inputs:
        try:
            for item in _sessions(path, formats):
                if isinstance(item, Session):
                    report.sessions.append(audit_session(item, bundle, profile))
        except FormatError as exc:
            report.sessions.append(SessionAudit(source=str(path), harness="", error=str(exc)))
        except (OSError, ValueError) as exc:
            log.debug("input %s failed", path, exc_info=True)
            report.sessions.append(
                SessionAudit(
                    source=str(path), harness="", error=f"{path}: {type(exc).__name__}: {exc}"
                )
            )
        if on_input is not None:
            on_input(path)
    _count(report)
    return report


def _count(report: AuditReport) -> None:
    rules: dict[str, dict[str, int]] = {}
    for session in report.sessions:
        for key, hits in (("blocks", session.blocks), ("flags", session.flags)):
            for hit in hits:
                entry = rules.setdefault(hit.rule or "?", {"blocks": 0, "flags": 0})
                entry[key] += 1
    report.rules = dict(sorted(rules.items()))


def report_json(report: AuditReport) -> dict[str, Any]:
    """The ``--json`` document."""
    return report.model_dump(mode="json")
