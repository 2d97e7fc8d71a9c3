"""``trajforge guard audit --report DIR``: the audit as ``audit.json`` and a readable ``audit.md``.

The markdown has the per-rule table (blocked, flagged, also matched, accepted in the calibration
file, unlisted) and, per rule that decided anything, its examples with the call, the reason and
the calibration verdict, so a rule owner can judge each rule's precision from the file alone.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from trajforge.guard.audit import AuditReport, RuleAudit, RuleExample

JSON_NAME = "audit.json"
MARKDOWN_NAME = "audit.md"


def write_report(report: AuditReport, out_dir: Path) -> list[Path]:
    """Write ``audit.json`` and ``audit.md`` into ``out_dir`` (created); returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    data = out_dir / JSON_NAME
    data.write_bytes(orjson.dumps(report.model_dump(mode="json"), option=orjson.OPT_INDENT_2))
    text = out_dir / MARKDOWN_NAME
    text.write_text(markdown(report))
    return [data, text]


def _pct(n: int, total: int) -> str:
    return f"{100 * n / (total or 1):.2f} %"


def _code(text: str) -> str:
    """An inline code span that survives backticks in ``text``."""
    return "`` " + text.replace("`", "ˋ") + " ``"


def markdown(report: AuditReport) -> str:
    """The readable report."""
    sessions = [s for s in report.sessions if not s.error]
    errors = [s for s in report.sessions if s.error]
    blocks, flags = report.count("blocks"), report.count("flags")
    calib = report.calibration or "none found"
    lines = [
        f"# Guard audit — bundle {report.bundle}",
        "",
        f"{len(sessions)} sessions, {report.calls} tool calls; blocked {blocks} "
        f"({_pct(blocks, report.calls)}), flagged {flags} ({_pct(flags, report.calls)}). "
        f"Calibration file: {calib}.",
        "",
        "| rule | severity | blocked | flagged | also matched | accepted | unlisted |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for rule, entry in report.rules.items():
        lines.append(
            f"| `{rule}` | {entry.severity} | {entry.blocks} | {entry.flags} | {entry.also} "
            f"| {entry.accepted} | {entry.unlisted} |"
        )
    for rule, entry in report.rules.items():
        if entry.examples:
            lines += ["", *_rule_section(rule, entry)]
    if errors:
        lines += ["", "## Unreadable inputs", ""]
        lines += [f"- {_code(s.error or '')}" for s in errors]
    return "\n".join(lines) + "\n"


def _rule_section(rule: str, entry: RuleAudit) -> list[str]:
    shown = len(entry.examples)
    head = [
        f"## `{rule}` ({entry.severity})",
        "",
        entry.rationale,
        "",
        f"Blocked {entry.blocks} ({entry.accepted} accepted, {entry.unlisted} unlisted), "
        f"flagged {entry.flags}; {shown} examples below.",
        "",
    ]
    return head + [line for example in entry.examples for line in _example(example)]


def _example(example: RuleExample) -> list[str]:
    where = f"{example.source}:{example.line}"
    tool = f" ({example.tool})" if example.tool else ""
    out = [
        f"- **{example.decision}** {_code(where)}{tool}: {_code(example.call)}",
        f"  - reason: {_code(example.reason)}",
    ]
    if example.decision == "block":
        out.append(f"  - calibration: {example.accepted or 'NOT LISTED'}")
    return out
