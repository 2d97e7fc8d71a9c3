"""Reasons written as text before schema 3, told apart by their opening words: the one place in
trajforge where a reason is read back from text, and only for folders written before it."""

from __future__ import annotations

from typing import Any

from trajforge.records.base import Reason

_LEGACY: tuple[tuple[str, Reason], ...] = (
    ("no verifier", Reason.NO_VERIFIER),
    ("weakened test", Reason.WEAKENED_TEST),
    ("oracle fails", Reason.ORACLE_FAILS),
    ("oracle query failed", Reason.ORACLE_FAILS),
    ("oracle flaked", Reason.ORACLE_FLAKY),
    ("mutant kill rate", Reason.WEAK_MUTANT_KILL),
    ("kill rate not measured", Reason.WEAK_MUTANT_KILL),
    ("teacher", Reason.TEACHER_FAILED),
    ("answer not reproduced", Reason.ANSWER_NOT_REPRODUCED),
    ("answer key is guessable", Reason.KEY_GUESSABLE),
    ("answer checker", Reason.ANSWER_MISJUDGED),
    ("the checker", Reason.ANSWER_MISJUDGED),
    ("sandbox", Reason.SANDBOX_ERROR),
    ("workspace incomplete", Reason.WORKSPACE_INCOMPLETE),
)


def legacy_reason(text: str, status: object) -> Reason:
    """The closed reason of a reason written as text before schema 3."""
    head = text.split(":", 1)[0].strip()
    if head in Reason.__members__.values():
        return Reason(head)
    if status == "accepted":
        return Reason.PROVEN
    for prefix, reason in _LEGACY:
        if text.startswith(prefix):
            return reason
    if " passes " in text or "verdict unknown" in text:
        return Reason.VERDICT_UNKNOWN if "verdict unknown" in text else Reason.CONTROL_PASSES
    return Reason.INTERNAL_ERROR if status == "error" else Reason.NO_VERIFIER


def legacy_findings(reasons: Any, status: object) -> list[dict[str, str]]:
    """Findings (as mappings) for the reason texts of a record written before schema 3."""
    if not isinstance(reasons, (list, tuple)):
        return []
    texts = [str(r) for r in reasons]
    return [{"reason": legacy_reason(t, status).value, "detail": t} for t in texts]


def legacy_controls(data: object) -> object:
    """A validation mapping whose control cells (schema 3 and before) do not name their kind:
    each kind and variant is told from its key (``probe:2`` → probe, ``2``), once, here."""
    if not isinstance(data, dict) or not isinstance(data.get("controls"), dict):
        return data
    cells = {k: legacy_cell(k, c) for k, c in data["controls"].items()}
    return {**data, "controls": cells}


def legacy_cell(key: object, cell: object) -> object:
    """One control cell mapping with its kind and variant told from its key when it lacks
    them; other values as given."""
    if not isinstance(cell, dict) or "control" in cell or not isinstance(key, str):
        return cell
    kind, _, variant = key.partition(":")
    return {**cell, "control": kind, "variant": variant}
