"""``trajforge guard audit``: run the detectors over recorded sessions and count what they catch.

Any format reconstruct reads is accepted. Each session gets a fresh detector (the given
profile, or one rooted at the session's cwd); blocked and flagged calls are listed per session
and counted per rule, every rule of the bundle with up to N scrubbed examples, so a rule's owner
can read what it blocks. Used to calibrate the bundle on clean corpora: a block there is either
accepted in the bundle's calibration file (read and judged) or a false positive to fix.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trajforge.errors import FormatError
from trajforge.guard.calibration import Calibration
from trajforge.guard.engine import RuleDetector
from trajforge.guard.profile import Profile
from trajforge.guard.rules import Bundle
from trajforge.protocols import Format
from trajforge.reconstruct.inputs import expand_paths
from trajforge.reconstruct.pipeline import all_formats, detect
from trajforge.records import Event, ParseWarning, Session
from trajforge.scrub import Scrubber

log = logging.getLogger(__name__)
DEFAULT_EXAMPLES = 5  # per rule and decision: enough to judge a rule, short enough to read


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
    also: tuple[str, ...] = ()
    """Other rules that matched the same call."""


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


class RuleExample(BaseModel):
    """One call a rule decided, as the per-rule report shows it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str
    """Session file."""
    line: int
    """Line (or record index) in it."""
    tool: str
    """Harness tool name (empty for a tool output)."""
    decision: Literal["block", "flag"]
    """What the rule decided."""
    call: str
    """The call, shortened and scrubbed."""
    reason: str
    """The decision's reason (scrubbed)."""
    accepted: str | None = None
    """For a block: the calibration file's verdict and reason when it lists the block."""


class RuleAudit(BaseModel):
    """What one rule did across the audited sessions."""

    model_config = ConfigDict(extra="forbid")

    severity: Literal["block", "flag", "unknown"]
    """The rule's severity in the bundle (unknown: not in the bundle)."""
    rationale: str = ""
    """Why the rule exists (from the bundle)."""
    blocks: int = 0
    """Calls and outputs this rule blocked (it was the deciding rule)."""
    flags: int = 0
    """Calls it flagged (deciding rule; a block rule's weaker name-only matches flag)."""
    also: int = 0
    """Calls it matched too while another rule decided."""
    accepted: int = 0
    """Blocks listed in the bundle's calibration file."""
    unlisted: int = 0
    """Blocks the calibration file does not list: false positives until judged."""
    examples: list[RuleExample] = Field(default_factory=list)
    """Up to N blocked then up to N flagged calls."""


class AuditReport(BaseModel):
    """``trajforge guard audit --json`` (and ``audit.json`` under ``--report DIR``)."""

    model_config = ConfigDict(extra="forbid")

    bundle: str
    """Rule bundle version."""
    calibration: str | None = None
    """Bundle version of the calibration file used (None: none found)."""
    calls: int = 0
    """Tool calls judged."""
    sessions: list[SessionAudit] = Field(default_factory=list)
    """Per session (and per unreadable input)."""
    rules: dict[str, RuleAudit] = Field(default_factory=dict)
    """Rule id → counts and examples, every rule of the bundle."""

    def count(self, what: str) -> int:
        return sum(len(s.blocks if what == "blocks" else s.flags) for s in self.sessions)


def _home(cwd: str) -> str:
    parts = cwd.split("/")
    if len(parts) >= 3 and parts[1] in ("Users", "home"):
        return "/".join(parts[:3])
    return "/root"


SUMMARY_CHARS = 300  # of a call or an output excerpt: enough to judge, short enough to list


def _summary(event: Event) -> str:
    text = event.command or event.path or str(event.arguments)
    return Scrubber().text(" ".join(text.split()))[:SUMMARY_CHARS]


def _output_excerpt(text: str) -> str:
    """The scrubbed tool output around its first redaction (what the block was about)."""
    clean = " ".join(Scrubber().text(text).split())
    at = max(0, clean.find("[REDACTED") - SUMMARY_CHARS // 2)
    return "(tool output) " + clean[at : at + SUMMARY_CHARS]


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
            call=_summary(event) if event.kind == "tool_call" else _output_excerpt(event.text),
            also=decision.also,
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
    examples: int = DEFAULT_EXAMPLES,
    calibration: Calibration | None = None,
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
    per_rule(report, bundle, examples, calibration)
    return report


def per_rule(
    report: AuditReport, bundle: Bundle, examples: int, calibration: Calibration | None
) -> None:
    """Fill ``report.rules``: counts for every rule of the bundle, up to ``examples`` each."""
    rules = {r.id: RuleAudit(severity=r.severity, rationale=r.rationale) for r in bundle.rules}
    report.calibration = calibration.bundle if calibration else None
    report.calls = sum(s.calls for s in report.sessions)
    for decision in ("block", "flag"):
        for session in report.sessions:
            for hit in session.blocks if decision == "block" else session.flags:
                _tally(rules, (session.source, hit), decision, examples, calibration)
    report.rules = rules


def _tally(
    rules: dict[str, RuleAudit],
    where: tuple[str, Hit],
    decision: Literal["block", "flag"],
    limit: int,
    calibration: Calibration | None,
) -> None:
    source, hit = where
    entry = rules.setdefault(hit.rule or "?", RuleAudit(severity="unknown"))
    note: str | None = None
    if decision == "block":
        entry.blocks += 1
        found = calibration.find(hit.rule, source, hit.line) if calibration else None
        if found is not None:
            entry.accepted += 1
            note = f"{found.verdict}: {found.why}"
        else:
            entry.unlisted += 1
    else:
        entry.flags += 1
    if sum(e.decision == decision for e in entry.examples) < limit:
        entry.examples.append(
            RuleExample(
                source=source,
                line=hit.line,
                tool=hit.tool,
                decision=decision,
                call=hit.call,
                reason=hit.reason,
                accepted=note,
            )
        )
    for other in hit.also:
        rules.setdefault(other, RuleAudit(severity="unknown")).also += 1


def blocked(report: AuditReport) -> list[tuple[str | None, str, int]]:
    """(rule, source, line) of every block in the report."""
    return [(h.rule, s.source, h.line) for s in report.sessions for h in s.blocks]


def report_json(report: AuditReport) -> dict[str, Any]:
    """The ``--json`` document."""
    return report.model_dump(mode="json")
