"""`trajforge validate` on the reconstructed fixture sessions, local sandbox."""

from __future__ import annotations

from pathlib import Path

from tests.validate.conftest import (
    HARNESSES,
    local_context,
    one_per_harness,
    pick,
    read_json,
    tasks_of,
)
from trajforge.records import Task, load_record
from trajforge.verifiers.validate import run


def test_every_harness_repair_is_accepted_with_controls_rejected(validated: Path) -> None:
    repairs = [t for t in tasks_of(validated).values() if t.family == "repair"]
    assert {t.source.harness for t in repairs} == set(HARNESSES)
    for task in repairs:
        v = task.validation
        assert v.status == "accepted", (task.id, v.reasons)
        assert v.controls["oracle"].passed == len(v.controls["oracle"].runs) == 3
        for control in ("empty", "prefix", "stub"):
            assert v.controls[control].result == "fail", (task.id, control)
        assert v.controls["prefix"].runs[0].failing, "the pre-fix state fails a named test"
        mutants = v.evidence.mutant_summary
        assert mutants is not None and mutants.kill_rate is not None
        assert mutants.total >= 1 and mutants.kill_rate >= 0.8
        assert 0 <= mutants.wilson_low <= mutants.kill_rate <= mutants.wilson_high <= 1
        assert len(v.mutants) == mutants.total
        for item in v.mutants:
            assert item.result in ("killed", "survived", "unknown", "equivalent")
            if item.result == "killed":
                assert item.killed_by
        evidence = v.evidence
        assert evidence.backend == "local" and len(evidence.files_sha256) == 64
        assert evidence.flake_rate == 0.0 and evidence.timings["oracle_s"] > 0


def test_build_task_gets_mined_hidden_tests(validated: Path) -> None:
    (task_dir,) = [p for p in (validated / "tasks").iterdir() if p.name.startswith("build-")]
    task = load_record(Task, task_dir / "task.json")
    assert task.verifier.kind == "tests" and task.verifier.tests == ("test_stats.py",)
    assert (task_dir / "tests" / "test_stats.py").read_text() == (
        task_dir / "oracle" / "test_stats.py"
    ).read_text()
    assert not (task_dir / "workspace" / "test_stats.py").exists()
    assert task.validation.status == "accepted", task.validation.reasons
    assert task.validation.controls["empty"].result == "fail"
    assert task.validation.controls["stub"].runs[0].failing
    assert task.validation.evidence.hidden_tests == ("test_stats.py",)


def test_qa_task_answer_controls(validated: Path) -> None:
    (task,) = [t for t in tasks_of(validated).values() if t.family == "qa"]
    v = task.validation
    assert v.status == "accepted", v.reasons
    assert task.answer_key is not None  # reconstructed: checked by its grounded facts
    assert v.controls["empty"].result == "fail"
    assert v.controls["paraphrase:facts"].result == "pass"
    wrong = [n for n in v.controls if n.startswith(("number:", "hedged:"))]
    assert wrong and all(v.controls[n].result == "fail" for n in wrong)
    assert v.evidence.paraphrases_accepted == ("paraphrase:facts",)
    assert v.evidence.reproduced and v.evidence.reproduced[0].reproduces


def test_reports_have_funnel_and_matrix(validated: Path) -> None:
    doc = read_json(validated / "report.json")
    assert doc["totals"]["tasks"] == len(doc["tasks"]) == len({r["id"] for r in doc["tasks"]})
    assert doc["funnel"]["repair"]["accepted"] == 5
    assert doc["funnel"]["repair"]["candidates"] == 5
    html = (validated / "report.html").read_text()
    assert "Yield funnel" in html and "Control matrix" in html and "<script" not in html
    assert 'class="good"' in html


def test_revalidation_is_cached_and_a_change_invalidates(validated: Path) -> None:
    before = {p: p.stat().st_mtime_ns for p in validated.glob("tasks/*/task.json")}
    rows = run.run(validated, local_context())
    assert all(r.cached for r in rows)
    assert {p: p.stat().st_mtime_ns for p in validated.glob("tasks/*/task.json")} == before
    repair = next(p for p in (validated / "tasks").iterdir() if p.name.startswith("repair-"))
    oracle_file = next((repair / "oracle").glob("*.py"))
    oracle_file.write_text(oracle_file.read_text() + "\n# changed\n")
    again = {r.id: r for r in run.run(validated, local_context())}
    assert not again[repair.name].cached
    assert sum(1 for r in again.values() if not r.cached) == 1


def test_weakened_test_is_never_a_verifier(tmp_path: Path) -> None:
    from tests.validate.sessions import weakened_pi_build
    from trajforge.reconstruct import pipeline

    session = weakened_pi_build(tmp_path / "build.jsonl")
    out = tmp_path / "out"
    pipeline.run([session], out)
    run.run(out, local_context())
    (task,) = [t for t in tasks_of(out).values() if t.family == "build"]
    v = task.validation
    assert v.status == "rejected"
    assert any("weakened test" in r and "assert True" in r for r in v.reasons), v.reasons
    assert any("test_mean" in r for r in v.reasons), v.reasons


def test_broken_task_does_not_stop_the_others(reconstructed: Path, tmp_path: Path) -> None:
    tasks = tasks_of(reconstructed)
    out = pick(
        reconstructed,
        tmp_path,
        one_per_harness(tasks, "qa")[:1] + one_per_harness(tasks, "build")[:1],
    )
    broken = out / "tasks" / "repair-0000000000000000"
    broken.mkdir()
    (broken / "task.json").write_text('{"id": 3}')
    # a family the folders are sorted by, in a record that is not a task: the batched (data)
    # path reports it like any other broken task
    claims = out / "tasks" / "data-0000000000000000"
    claims.mkdir()
    (claims / "task.json").write_text('{"id": 3, "family": "data"}')
    rows = {r.id: r for r in run.run(out, local_context())}
    for bad in (broken, claims):
        assert rows[bad.name].status == "error" and "task.json" in rows[bad.name].reasons[0]
    assert sum(1 for r in rows.values() if r.status == "accepted") == 2
