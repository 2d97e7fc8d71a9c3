"""The bundle's calibration file: blocks on clean real sessions that were read and accepted.

``guard/rules/<bundle>.calibration.toml`` sits beside its bundle and carries the bundle version
it was judged for. Each entry names one block (rule, session file, line) with a verdict: a
``true-positive`` (what the recorded session did, e.g. reading a harness session store at the
user's request, is what a rollout must not do) or an ``accepted-false-positive`` (a known
imprecision, kept with its reason). The clean-corpus test fails on any block not listed here,
and on entries that no longer match a block.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from trajforge.config import read_toml
from trajforge.errors import RecordError

Verdict = Literal["true-positive", "accepted-false-positive"]


class Accepted(BaseModel):
    """One block on a clean session that a reviewer read and accepted."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: str
    """Rule that blocked."""
    source: str
    """Session file, as a path suffix (``real/claude/owner__repo/session.jsonl``)."""
    line: int
    """Line (or record index) of the blocked call or output in that file."""
    verdict: Verdict
    """true-positive: a rollout doing this must be stopped; accepted-false-positive: tolerated."""
    why: str
    """What the session did and why the block stands."""


class Calibration(BaseModel):
    """A bundle's calibration file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bundle: str
    """Bundle version the entries were judged for (must equal the bundle's version)."""
    accepted: tuple[Accepted, ...] = ()
    """Accepted blocks."""

    def find(self, rule: str | None, source: str, line: int) -> Accepted | None:
        """The entry accepting this block, if any."""
        for entry in self.accepted:
            if entry.rule == rule and entry.line == line and _same_file(source, entry.source):
                return entry
        return None

    def stale(self, blocks: Iterable[tuple[str | None, str, int]]) -> list[Accepted]:
        """Entries matching none of ``blocks`` ((rule, source, line) triples)."""
        seen = list(blocks)
        return [
            e
            for e in self.accepted
            if not any(r == e.rule and n == e.line and _same_file(s, e.source) for r, s, n in seen)
        ]


def _same_file(path: str, suffix: str) -> bool:
    return path == suffix or path.endswith("/" + suffix.lstrip("/"))


def calibration_path(bundle_path: Path) -> Path:
    """``default.toml`` → ``default.calibration.toml`` beside it."""
    return bundle_path.with_name(bundle_path.stem + ".calibration.toml")


def load_calibration(path: Path) -> Calibration:
    """Load a calibration file; errors name the file and the field."""
    data = read_toml(path, RecordError, "calibration file")
    try:
        return Calibration.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"]))
        raise RecordError(f"{path}: field {where!r}: {first['msg']}") from None


def calibration_for(bundle_path: Path | None, explicit: Path | None = None) -> Calibration | None:
    """The calibration to judge blocks with: ``explicit``, else the file beside the bundle."""
    from trajforge.guard.rules import DEFAULT_BUNDLE

    path = explicit or calibration_path(bundle_path or DEFAULT_BUNDLE)
    if explicit is None and not path.is_file():
        return None
    return load_calibration(path)
