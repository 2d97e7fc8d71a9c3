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
