"""Task folders written before the typed validation (schema 1) still load, and still score.

The fixtures were written by trajforge at commit 66c9407 (``tests/fixtures/schema1_tasks``):
their ``validation.controls`` / ``.evidence`` are the old free dicts. Loading upgrades them to
schema 2: status and reasons as stored, every control a ControlCell, mutants as rows, evidence
in its typed fields; ``verify`` scores them with the fail-to-pass sets they recorded.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from trajforge.records import TASK_SCHEMA, CodeEvidence, Reason, Task, Validation, dump_record
from trajforge.registry import SANDBOXES, create
from trajforge.taskdir import load_task
from trajforge.verifiers.validate.verify import verify_answer, verify_files

FIXTURES = Path(__file__).parent / "fixtures" / "schema1_tasks"
FOLDERS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


def _raw(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / "task.json").read_text())
    return data


def _folder(prefix: str) -> Path:
    return next(p for p in FOLDERS if p.name.startswith(prefix))


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_every_schema1_task_loads_with_its_verdict(folder: Path) -> None:
    raw = _raw(folder)
    assert raw["schema_version"] == 1
    task = load_task(folder)
    assert task.schema_version == TASK_SCHEMA == 7
    assert task.validation.status == raw["validation"]["status"] == "accepted"
    assert task.validation.reasons == tuple(raw["validation"]["reasons"])
    # reason texts of an accepted task become findings that prove it
    assert set(task.validation.codes) == {Reason.PROVEN}
    assert task.validation.evidence.cache_key == raw["validation"]["evidence"].get("cache_key", "")
    again = Task.model_validate_json(dump_record(task))  # written back: schema 3, same record
    assert again == task


def test_code_controls_mutants_and_sets_are_typed() -> None:
    folder = _folder("repair-")
    raw, v = _raw(folder)["validation"], load_task(folder).validation
    assert set(v.controls) == set(raw["controls"]) - {"mutants"}
    oracle = v.controls["oracle"]
    assert oracle.result == "pass" and oracle.passed == len(oracle.runs) == 3
    for name in ("empty", "prefix", "stub"):
        cell = v.controls[name]
        assert (cell.expect, cell.result) == ("fail", "fail"), name
        assert cell.runs[0].failing == tuple(raw["controls"][name]["killed_by"])
    items = raw["controls"]["mutants"]["items"]
    assert [m.id for m in v.mutants] == [i["id"] for i in items]
    assert v.mutants[0].killed_by == tuple(items[0]["killed_by"])
    summary, stored = v.evidence.mutant_summary, raw["evidence"]["mutants"]
    assert summary is not None and summary.kill_rate == stored["kill_rate"] == 1.0
    sets = v.evidence.test_sets
    assert sets is not None and sets.fail_to_pass == tuple(
        raw["evidence"]["test_sets"]["fail_to_pass"]
    )
    assert v.evidence.config["timeout_s"] == raw["evidence"]["config"]["timeout_s"]


def test_answer_controls_keep_their_names_and_verdicts() -> None:
    qa = load_task(_folder("qa-")).validation
    raw = _raw(_folder("qa-"))["validation"]["controls"]
    assert set(qa.controls) == set(raw)
    assert all(
        c.result == raw[n]["result"] and c.given == raw[n]["given"] for n, c in qa.controls.items()
    )
    data = load_task(_folder("data-")).validation
    names = set(data.controls)
    assert {"oracle", "empty", "paraphrase:0", "perturbed:0"} <= names
    assert any(n.startswith("query:perturbed_") for n in names)
    assert all(c.ok for c in data.controls.values()), data.controls  # it was accepted
    assert data.evidence.oracle_stdout.strip()


def test_an_entry_that_fits_no_field_is_left_out_not_fatal(tmp_path: Path) -> None:
    folder = tmp_path / "task"
    shutil.copytree(_folder("repair-"), folder)
    raw = _raw(folder)
    raw["validation"]["evidence"]["test_sets"] = "not a mapping"
    raw["validation"]["evidence"]["someone_elses_key"] = 1
    raw["validation"]["controls"]["stub"] = {"expect": "sometimes"}
    (folder / "task.json").write_text(json.dumps(raw))
    v = load_task(folder).validation
    assert v.evidence.test_sets is None and "stub" not in v.controls
    assert v.evidence.dropped_tests == () and v.controls["empty"].result == "fail"


def _local():  # type: ignore[no-untyped-def]
    sandbox = create(SANDBOXES, "local", "sandbox")
    problem = sandbox.available()
    if problem:
        pytest.skip(f"LOCAL SANDBOX UNAVAILABLE, schema-1 scoring not tested: {problem}")
    return sandbox


def test_schema1_tasks_still_score(tmp_path: Path) -> None:
    folder = _folder("repair-")
    task = load_task(folder)
    sandbox = _local()
    assert verify_files(folder, task, folder / "oracle", sandbox).reward == 1.0
    assert verify_files(folder, task, folder / "workspace", sandbox).reward == 0.0
    for prefix in ("qa-", "data-"):
        answered = load_task(_folder(prefix))
        assert verify_answer(answered, answered.answer or "").reward == 1.0, prefix
        assert verify_answer(answered, "").reward == 0.0, prefix


def test_schema2_reason_texts_become_closed_findings() -> None:
    """A validation written as text (schema 2) loads with each text's closed reason; its
    words are kept as the detail."""
    texts = [
        "oracle fails: `npm run check` exits 1",
        "stub passes test_a, test_b",
        "starting workspace: verdict unknown (killed by the timeout limit)",
        "mutant kill rate 0.50 (1/2 killed; 0 unknown; CI 0.09–0.91) < 0.80",
        "workspace_incomplete: 2 files the session touched could not be recovered",
        "teacher: no Python source created or changed by the episode",
        "answer key is guessable: 'Yes. vLLM' passes",
    ]
    v = Validation.model_validate({"status": "rejected", "reasons": texts})
    assert v.reasons == tuple(texts)
    assert [f.reason for f in v.findings] == [
        Reason.ORACLE_FAILS,
        Reason.CONTROL_PASSES,
        Reason.VERDICT_UNKNOWN,
        Reason.WEAK_MUTANT_KILL,
        Reason.WORKSPACE_INCOMPLETE,
        Reason.TEACHER_FAILED,
        Reason.KEY_GUESSABLE,
    ]
    assert "reasons" not in v.model_dump() and v.model_dump()["findings"][0]["reason"] == (
        "oracle_fails"
    )


SCHEMA4 = Path(__file__).parent / "fixtures" / "schema4_tasks"
SCHEMA5 = Path(__file__).parent / "fixtures" / "schema5_tasks"
KIND_OF_FAMILY = {"qa": "qa", "data": "data", "build": "code", "extend": "code", "repair": "code"}
RENAMED = {"mutants": "mutant_summary"}
"""Evidence fields renamed since (schema 6: the summary no longer shares the rows' name)."""


def _holds(dumped: Any, written: Any) -> bool:
    """``dumped`` keeps every value ``written`` (a nested record may have gained fields with
    defaults since: ``InstructionEvidence.retried``)."""
    if isinstance(dumped, dict) and isinstance(written, dict):
        return all(k in dumped and _holds(dumped[k], v) for k, v in written.items())
    return bool(dumped == written)


def _evidence_kept(raw: dict[str, Any], task: Task) -> dict[str, Any]:
    """The written evidence's entries today's record does not hold under their (new) name."""
    dumped = task.validation.evidence.model_dump(mode="json")
    written = {RENAMED.get(k, k): v for k, v in raw["validation"]["evidence"].items()}
    held = {k: v for k, v in written.items() if k in dumped}
    assert all(_holds(dumped[k], v) for k, v in held.items()), held
    return {k: v for k, v in written.items() if k not in dumped}


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_schema4_evidence_becomes_its_familys_kind_with_every_value_kept(folder: Path) -> None:
    """Schema 4 wrote one evidence record with every family's fields; it loads as the kind of
    evidence its family's controls give, each value written that is not a default kept."""
    raw = json.loads((SCHEMA4 / f"{folder.name}.json").read_text())
    assert raw["schema_version"] == 4 and "kind" not in raw["validation"]["evidence"]
    task = Task.model_validate(raw)
    assert task.validation.evidence.kind == KIND_OF_FAMILY[task.family]
    left = _evidence_kept(raw, task)
    assert left and all(v in ([], {}, None, "", 0.0, False) for v in left.values()), left
    again = Task.model_validate_json(dump_record(task))
    assert again == task and again.schema_version == TASK_SCHEMA


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_schema5_evidence_loads_whole_with_the_summary_renamed(folder: Path) -> None:
    """Schema 5 named the code evidence's mutant summary ``mutants``, as the validation's rows
    are named; it loads as ``mutant_summary`` and every value written is kept."""
    raw = json.loads((SCHEMA5 / f"{folder.name}.json").read_text())
    assert raw["schema_version"] == 5
    task = Task.model_validate(raw)
    evidence = task.validation.evidence
    assert evidence.kind == raw["validation"]["evidence"]["kind"] == KIND_OF_FAMILY[task.family]
    assert _evidence_kept(raw, task) == {}
    if evidence.kind == "code":
        stored = raw["validation"]["evidence"]["mutants"]
        assert isinstance(evidence, CodeEvidence) and evidence.mutant_summary is not None
        assert evidence.mutant_summary.total == stored["total"] > 0
        assert len(task.validation.mutants) == len(raw["validation"]["mutants"])
    again = Task.model_validate_json(dump_record(task))
    assert again == task and again.schema_version == TASK_SCHEMA == 7
    assert "mutants" not in json.loads(dump_record(task))["validation"]["evidence"]


def test_schema4_evidence_with_two_families_fields_is_an_error_naming_them() -> None:
    raw = json.loads((SCHEMA4 / f"{_folder('repair-').name}.json").read_text())
    raw["validation"]["evidence"]["oracle_stdout"] = "42\n"  # data's, beside code's test sets
    with pytest.raises(ValueError, match="oracle_stdout"):
        Task.model_validate(raw)


@pytest.mark.parametrize("written", [SCHEMA4, SCHEMA5], ids=["schema4", "schema5"])
def test_schema4_and_5_code_tasks_still_score(written: Path, tmp_path: Path) -> None:
    folder = tmp_path / "repair"
    shutil.copytree(_folder("repair-"), folder)
    shutil.copy(written / f"{_folder('repair-').name}.json", folder / "task.json")
    task = load_task(folder)
    assert task.validation.evidence.kind == "code" and task.validation.evidence.test_sets
    sandbox = _local()
    assert verify_files(folder, task, folder / "oracle", sandbox).reward == 1.0
    assert verify_files(folder, task, folder / "workspace", sandbox).reward == 0.0
