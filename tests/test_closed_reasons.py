"""Reasons are closed values: no validation is written with reason text, and no module reads a
reason's meaning back from its words (DESIGN: "Nothing downstream parses text")."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("verifiers", "oracles", "splits", "train", "guard", "trajforge")
DISPLAY = {
    "verifiers/validate/report.py",  # report.json / report.html list the details
    "verifiers/validate/audit.py",
    "verifiers/teacher/loop.py",  # the teacher's feedback quotes them
    "verifiers/dataenv_run.py",  # the data summary lists them
    "train/rollout.py",  # a rollout record keeps the verdict's words
    "train/evaluation/run.py",  # so does an eval row
    "splits/layout.py",  # the published rows carry them as text
    "trajforge/cli/dataenv_cmd.py",  # printed
    "trajforge/cli/validate_cmd.py",  # printed
}
"""Modules that show findings' details to a person or a model (never decide on them)."""
LEGACY = {
    "trajforge/records/legacy.py",
    "trajforge/records/upgrade.py",
    "trajforge/records/validation.py",
}
"""Where text written before findings existed is read, once, when an old task.json loads."""


def _modules() -> list[tuple[str, ast.Module]]:
    found = []
    for top in PRODUCT:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            found.append((rel, ast.parse(path.read_text(encoding="utf-8"), rel)))
    return found


def test_no_validation_is_written_with_reason_text() -> None:
    bad = []
    for rel, tree in _modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or rel in LEGACY:
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if name in ("Validation", "TaskRow", "TeacherRound") and any(
                k.arg == "reasons" for k in node.keywords
            ):
                bad.append(f"{rel}:{node.lineno}: {name}(reasons=...)")
    assert not bad, "write findings (a closed Reason and a detail), not reason text:\n" + "\n".join(
        bad
    )


def test_no_module_reads_meaning_back_from_reason_text() -> None:
    """A ``.reasons`` read is display only; code that decides reads ``.findings`` / ``.codes``."""
    bad = []
    for rel, tree in _modules():
        if rel in DISPLAY or rel in LEGACY:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "reasons":
                bad.append(f"{rel}:{node.lineno}")
    assert not bad, "decide on findings' reasons, not their words:\n" + "\n".join(bad)


def test_the_check_sees_a_bare_string_reason() -> None:
    """The walker itself finds what it must (so a passing run means something)."""
    tree = ast.parse("Validation(status=s, reasons=('oracle fails: x',))")
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert any(k.arg == "reasons" for k in calls[0].keywords)


WING = ("verifiers", "oracles", "splits", "trajforge/cli/validate_cmd.py", "trajforge/taskdir.py")
"""The validate wing and what reads its verdicts: statuses, outcomes, reasons and controls are
named by their enums there, never spelled as strings."""
_FIELDS = {"status", "reason", "result", "outcome", "expect", "verdict", "control"}


def _closed_values() -> set[str]:
    from trajforge.records import Control, MutantVerdict, Outcome, Reason, Status

    values = {v.value for e in (Status, Reason, Outcome, MutantVerdict, Control) for v in e}
    words = {Control.NUMBER, Control.POLARITY, Control.NAME}  # also the kinds of a fact
    return values - words | {"passed", "failed"}  # the spelling schema 3 stored


def _literals(node: ast.AST, values: set[str]) -> list[ast.Constant]:
    return [
        n
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in values
    ]


def spelled_closed_values(rel: str, tree: ast.Module, values: set[str]) -> list[str]:
    """Where a module compares with, or passes as a verdict field, a closed value's string."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            search = isinstance(node.ops[0], ast.In) and isinstance(node.left, ast.Constant)
            hits = [] if search else _literals(node, values)  # ``"error" in line``: a search
        elif isinstance(node, ast.keyword) and node.arg in _FIELDS:
            hits = _literals(node.value, values) if isinstance(node.value, ast.Constant) else []
        else:
            continue
        found += [f"{rel}:{h.lineno}: {h.value!r}" for h in hits]
    return found


def test_no_status_outcome_reason_or_control_is_spelled_as_a_string() -> None:
    """``status == "accepted"``, ``outcome="passed"``, ``name.startswith("probe")``-style code
    reads meaning from text; the wing names :class:`Status`, :class:`Outcome`,
    :class:`Reason`, :class:`Control` and :class:`MutantVerdict` members instead."""
    values = _closed_values() - {"timeout"}  # also a program's name (``timeout 60 cmd``)
    bad = []
    for rel, tree in _modules():
        if rel.startswith(WING) and rel not in LEGACY:
            bad += spelled_closed_values(rel, tree, values)
    assert not bad, "use the enum member, not its string:\n" + "\n".join(bad)


def test_the_spelling_check_sees_a_status_string() -> None:
    tree = ast.parse('if v.status != "accepted" or cell(result="unknown"): pass')
    found = spelled_closed_values("x.py", tree, _closed_values())
    assert found == ["x.py:1: 'accepted'", "x.py:1: 'unknown'"]


def test_no_rollout_status_is_spelled_as_a_string_in_train() -> None:
    """Rollouts, eval rows and the training log compare :class:`RolloutStatus` members."""
    from trajforge.records import RolloutStatus

    values = {s.value for s in RolloutStatus}
    bad = []
    for rel, tree in _modules():
        if rel.startswith(("train/", "trajforge/cli/train", "trajforge/cli/eval")):
            bad += spelled_closed_values(rel, tree, values)
    assert not bad, "use the RolloutStatus member, not its string:\n" + "\n".join(bad)
