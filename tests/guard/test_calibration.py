"""Clean sessions against the bundle's calibration file: no block that was not read and accepted.

The bundled clean sessions (fixtures written by the real harness CLIs, the package samples) and
the shared real corpus (sessions people published) must produce no block except those listed in
``guard/rules/default.calibration.toml``; every listed block must still happen (a stale entry
means the rule changed and the entry must be judged again).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guard.derived import derived_session
from trajforge.guard.audit import AuditReport, audit, blocked
from trajforge.guard.calibration import Accepted, Calibration, calibration_for, calibration_path
from trajforge.guard.engine import bundle_at
from trajforge.guard.rules import DEFAULT_BUNDLE

REPO = Path(__file__).resolve().parents[2]
BUNDLED = [REPO / "tests" / "fixtures" / "sessions", REPO / "trajforge" / "samples"]
CORPUS = REPO.parent / "shared" / "corpus"
REAL = [CORPUS / "real", CORPUS / "pi-mono"]


@pytest.fixture(scope="module")
def calibration() -> Calibration:
    found = calibration_for(None)
    assert found is not None, f"missing {calibration_path(DEFAULT_BUNDLE)}"
    return found


def _unlisted(report: AuditReport, calibration: Calibration) -> list[str]:
    return [
        f"{source}:{line} [{rule}]"
        for rule, source, line in blocked(report)
        if calibration.find(rule, source, line) is None
    ]


def test_calibration_is_for_this_bundle_version(calibration: Calibration) -> None:
    assert calibration.bundle == bundle_at().version, (
        "the bundle version changed: re-run `trajforge guard audit` over the clean sessions and "
        "re-judge every entry of default.calibration.toml, then set its bundle"
    )
    assert all(entry.why.strip() for entry in calibration.accepted)


def test_bundled_clean_sessions_have_no_unlisted_block(calibration: Calibration) -> None:
    report = audit(BUNDLED, bundle_at(), calibration=calibration)
    assert not [s.error for s in report.sessions if s.error]
    harnesses = {s.harness for s in report.sessions}
    assert {"pi", "opencode", "hermes", "claude-code", "codex"} <= harnesses
    assert report.calls > 50
    assert _unlisted(report, calibration) == []


def test_real_corpus_has_no_unlisted_block_and_no_stale_entry(calibration: Calibration) -> None:
    if not all(p.is_dir() for p in REAL):
        pytest.skip(f"!! shared real corpus not found at {CORPUS}: real-session check not run")
    report = audit(REAL, bundle_at(), calibration=calibration)
    assert not [s.error for s in report.sessions if s.error]
    assert report.calls > 1000
    assert _unlisted(report, calibration) == []
    bundled = audit(BUNDLED, bundle_at())
    stale = calibration.stale([*blocked(report), *blocked(bundled)])
    assert stale == [], "entries that match no block any more: judge them again"
    rules = report.rules
    assert rules["source.session-stores"].blocks == rules["source.session-stores"].accepted == 4
    assert report.count("blocks") == 4  # all four: users asking for their own session file


def test_an_unlisted_block_fails_and_a_listed_one_is_accepted(tmp_path: Path) -> None:
    session = derived_session(tmp_path, ["ls", "cat ~/.codex/history.jsonl | tail -5"])
    report = audit([session], bundle_at(), calibration=Calibration(bundle="x"))
    unlisted = _unlisted(report, Calibration(bundle="x"))
    assert unlisted == [f"{session}:{_line(report)} [source.session-stores]"]
    listed = Calibration(
        bundle="x",
        accepted=(
            Accepted(
                rule="source.session-stores",
                source="cheat.jsonl",
                line=_line(report),
                verdict="true-positive",
                why="derived in the test",
            ),
            Accepted(
                rule="credentials.env-dump",
                source="cheat.jsonl",
                line=1,
                verdict="accepted-false-positive",
                why="matches nothing",
            ),
        ),
    )
    again = audit([session], bundle_at(), calibration=listed)
    assert _unlisted(again, listed) == []
    entry = again.rules["source.session-stores"]
    assert (entry.blocks, entry.accepted, entry.unlisted) == (1, 1, 0)
    assert entry.examples[0].accepted == "true-positive: derived in the test"
    assert [e.rule for e in listed.stale(blocked(again))] == ["credentials.env-dump"]


def _line(report: AuditReport) -> int:
    return next(h.line for s in report.sessions for h in s.blocks)
