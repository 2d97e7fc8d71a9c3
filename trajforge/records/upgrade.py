"""Load task.json files written before today's schema in today's shape.

Schema 3 stores findings (a closed reason and a detail each) where schema 1 and 2 stored reason
text: :func:`legacy_findings` tells each old text's reason from its opening words, the one place
in trajforge where a reason is read back from text, and only for folders written before it.

Schema 1 stored ``validation.controls`` and ``.evidence`` as free dicts. The upgrade keeps the
status and reasons, turns every control it recognises into a :class:`ControlCell` (mutants into
:class:`MutantRow`\\s) and keeps every evidence entry that still fits its typed field; anything
else is left out (a re-validation rewrites the whole validation: its cache key changed anyway).
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import TypeAdapter, ValidationError

from trajforge.records.controls import ControlCell, MutantRow
from trajforge.records.legacy import legacy_cell, legacy_findings, legacy_reason
from trajforge.records.validation import EVIDENCE_KINDS

log = logging.getLogger(__name__)
__all__ = ["TASK_SCHEMA", "legacy_findings", "legacy_reason", "upgrade_task"]
TASK_SCHEMA = 7
"""Schema of task.json: 2 has typed controls and evidence; 3 findings with closed reasons; 4
control cells that name their kind (:class:`Control`) and tests' outcomes spelled as runs'
(``pass`` / ``fail``); 5 evidence per family, told apart by its ``kind`` (none, code, qa,
data); 6 the code evidence's mutant summary is ``mutant_summary`` (``mutants`` before, the
name of ``validation.mutants``' rows too); 7 unknown files the episode never touched are
``files.absent`` (all were ``files.missing`` before, which an older task keeps). Older cells,
outcomes and evidence are read as they were written (:mod:`.legacy`, the records' validators)."""
_EXPECT_FAIL = {"empty", "perturbed_answers", "perturbed_queries"}


def upgrade_task(data: Any) -> Any:
    """An older task.json mapping in today's shape (other values pass through): schema 1's free
    controls and evidence typed; reason texts become findings when the record loads."""
    if not isinstance(data, dict) or data.get("schema_version", TASK_SCHEMA) >= TASK_SCHEMA:
        return data  # every task.json states its schema: one without is built in code
    upgraded = {**data, "schema_version": TASK_SCHEMA}
    validation = data.get("validation")
    if isinstance(validation, dict):
        validation = _summary_renamed(validation)
        if data.get("schema_version", 1) < 2:
            validation = _validation(validation)
        upgraded["validation"] = validation
    return upgraded


def _summary_renamed(validation: dict[str, Any]) -> dict[str, Any]:
    """Schema 5 and before: the mutant summary was ``evidence.mutants``."""
    evidence = validation.get("evidence")
    if not isinstance(evidence, dict) or "mutants" not in evidence:
        return validation
    renamed = {("mutant_summary" if k == "mutants" else k): v for k, v in evidence.items()}
    return {**validation, "evidence": renamed}


def _validation(raw: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {k: raw[k] for k in ("status", "reasons") if k in raw}
    controls = _mapping(raw.get("controls"))
    cells: dict[str, Any] = {}
    for name, cell in controls.items():
        if name == "mutants" and isinstance(cell, dict):
            out["mutants"] = [m for m in map(_mutant, cell.get("items", [])) if m is not None]
        elif isinstance(cell, list):  # data: paraphrases, perturbed_answers
            prefix = "paraphrase" if name == "paraphrases" else "perturbed"
            cells |= {f"{prefix}:{n}": _answer(name, c) for n, c in enumerate(cell)}
        elif name == "perturbed_queries" and isinstance(cell, dict):
            cells |= {f"query:{q}": _answer(name, c) for q, c in cell.items()}
        elif isinstance(cell, dict):
            cells[name] = _code(cell) if "runs" in cell or "tests" in cell else _answer(name, cell)
    typed = {n: legacy_cell(n, c) for n, c in cells.items()}
    out["controls"] = {n: c for n, c in typed.items() if _fits(ControlCell, c, n)}
    out["evidence"] = _evidence(_mapping(raw.get("evidence")))
    return out


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _fits(cls: type[Any], value: Any, where: str) -> bool:
    try:
        cls.model_validate(value)
    except ValidationError:
        log.info("schema-1 %s left out: it fits no %s", where, cls.__name__)
        return False
    return True


def _run(row: dict[str, Any]) -> dict[str, Any]:
    keep = ("status", "exit_code", "wall_s", "detail", "failing", "tests")
    run = {k: row[k] for k in keep if k in row}
    if "killed_by" in row and "failing" not in run:
        run["failing"] = row["killed_by"]
    return run


def _code(cell: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"expect": cell.get("expect"), "result": cell.get("result")}
    if "runs" in cell:  # the oracle
        out["runs"] = [_run(r) for r in cell["runs"]]
        out["derived_runs"] = [_run(r) for r in cell.get("with_derived_tests", [])]
        out["passed"] = cell.get("passed")
    else:
        out["runs"] = [_run(cell)]
    return out


def _answer(name: str, cell: Any) -> dict[str, Any]:
    if not isinstance(cell, dict):
        return {}
    if "expect" in cell:  # qa
        return {k: cell[k] for k in ("expect", "result", "given", "reason") if k in cell}
    if "error" in cell:  # data: a perturbed query that failed
        return {"expect": "fail", "result": "unknown", "reason": str(cell["error"])}
    expect = "fail" if name in _EXPECT_FAIL else "pass"
    result = "pass" if cell.get("passed") else "fail"
    return {"expect": expect, "result": result, "given": cell.get("given"), **_reason(cell)}


def _reason(cell: dict[str, Any]) -> dict[str, str]:
    return {"reason": str(cell["reason"])} if "reason" in cell else {}


def _mutant(item: Any) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    keep = set(MutantRow.model_fields)
    row = {k: v for k, v in item.items() if k in keep}
    return row if _fits(MutantRow, row, f"mutant {item.get('id')}") else None


def _evidence(raw: dict[str, Any]) -> dict[str, Any]:
    """Every entry that fits its field in some family's evidence, as JSON (the kind is told
    from them when the validation loads)."""
    kept: dict[str, Any] = {}
    fields = {n: f for kind in EVIDENCE_KINDS for n, f in kind.model_fields.items()}
    for name, field in fields.items():
        if name not in raw or name == "kind":
            continue
        adapter: TypeAdapter[Any] = TypeAdapter(field.annotation)
        try:
            kept[name] = adapter.dump_python(adapter.validate_python(raw[name]), mode="json")
        except ValidationError:
            log.info("schema-1 evidence %r left out: it fits no %s", name, field.annotation)
    return kept
