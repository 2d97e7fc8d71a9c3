"""Verifiers that are not fooled and do not reject good work (issue 19), on real pi sessions.

``tests/fixtures/verify_sessions/pi``: ``slugkit`` (a clean build whose ``__init__.py`` declares
``__all__``: rejected at 7/9 = 0.78 before mutants of ``__all__`` were dropped) and
``wordfreq`` (a build whose tests leave survivors that the session's own call shows are wrong,
two that behave as the oracle everywhere, and a repair with a wrong-solution probe). Default
validation settings (20 mutants, 3 oracle runs), local sandbox.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.validate.conftest import local_context, read_json, tasks_of
from tests.validate.solutions import CORRECT, WRONG
from trajforge.reconstruct import pipeline
from trajforge.records import MutantSummary, Task, TestSets, Validation
from trajforge.registry import SANDBOXES, create
from trajforge.verifiers.validate import run
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.verify import verify_files

pytestmark = pytest.mark.slow  # a module fixture validates tasks: dispatched first

SESSIONS = Path(__file__).parents[1] / "fixtures" / "verify_sessions" / "pi"
ORACLE_FILE = {"slugkit": "slugkit/core.py", "wordfreq": "wordfreq.py"}


@pytest.fixture(scope="module")
def strength_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("strength")
    pipeline.run([SESSIONS], out)
    rows = run.run(out, local_context(ValidateConfig()), jobs=2)
    assert len(rows) == 3, rows
    return out


def _task(out: Path, family: str, file: str) -> tuple[Path, Task]:
    for task_id, task in tasks_of(out).items():
        if task.family == family and (out / "tasks" / task_id / "oracle" / file).exists():
            return out / "tasks" / task_id, task
    raise AssertionError(f"no {family} task with {file}")


def _reward(task_dir: Path, files: dict[str, str], tmp: Path) -> float:
    """The reward of a solution folder holding ``files`` (``{}``: give up, change nothing)."""
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for rel, text in files.items():
        (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp / rel).write_text(text)
    task = Task.model_validate(read_json(task_dir / "task.json"))
    sandbox = create(SANDBOXES, "local", "sandbox")
    return verify_files(task_dir, task, tmp, sandbox).reward


def _summary(v: Validation) -> MutantSummary:
    assert v.evidence.mutant_summary is not None, v.reasons
    return v.evidence.mutant_summary


def _sets(v: Validation) -> TestSets:
    assert v.evidence.test_sets is not None, v.reasons
    return v.evidence.test_sets


def _folder(path: Path) -> dict[str, str]:
    return {p.relative_to(path).as_posix(): p.read_text() for p in path.rglob("*") if p.is_file()}


def test_clean_slugkit_build_is_accepted_without_metadata_mutants(strength_out: Path) -> None:
    task_dir, task = _task(strength_out, "build", "slugkit/core.py")
    v = task.validation
    assert v.status == "accepted", v.reasons
    summary = _summary(v)
    assert (summary.total, summary.killed, summary.survived, summary.equivalent) == (7, 7, 0, 0)
    assert summary.kill_rate == 1.0 and 0 < summary.wilson_low < 1 == summary.wilson_high
    assert not [i for i in v.mutants if i.path == "slugkit/__init__.py"]  # __all__ is inert
    assert "__all__" in (task_dir / "oracle" / "slugkit" / "__init__.py").read_text()
    sets = _sets(v)
    assert len(sets.fail_to_pass) == 3 and sets.pass_to_pass == ()


def test_wordfreq_survivors_equivalent_or_killed_by_derived_tests(strength_out: Path) -> None:
    task_dir, task = _task(strength_out, "build", "wordfreq.py")
    v = task.validation
    assert v.status == "accepted", v.reasons
    summary = _summary(v)
    equivalent = {n.description.split(" in ")[0] for n in summary.equivalents}
    assert equivalent == {"`<=` → `<`", "`0` → `-1`"}, summary.equivalents
    assert all("exercised inputs" in n.evidence for n in summary.equivalents)
    # the default `n=3` is never used by any exercised call: a real gap, still counted
    assert {n.description.split(" in ")[0] for n in summary.survivors} == {"`3` → `2`", "`3` → `4`"}
    assert all("never ran" in n.evidence for n in summary.survivors)
    assert summary.killed_by_derived == 3 and summary.kill_rate == round(14 / 16, 4)
    derived = v.evidence.derived_tests
    assert derived is not None
    assert derived.path == "test_trajforge_derived.py"
    assert derived.inputs == {"instruction": 1, "session": 1, "mined": 3}
    by_source = {t.source: t for t in derived.tests}
    assert by_source["session"].call == "top_words('y x y x z', 1)"
    assert "top_words('y x y x z', 1)" in by_source["session"].origin
    assert by_source["instruction"].call == "top_words('the cat the hat', 1)"
    assert len(by_source["session"].kills) == 3
    assert (task_dir / "tests" / derived.path).is_file()
    assert task.verifier.tests == ("test_trajforge_derived.py", "test_wordfreq.py")
    sets = _sets(v)
    assert {n.split("::")[-1] for n in sets.fail_to_pass} >= {t.name for t in derived.tests}


@pytest.mark.parametrize("name", ["slugkit", "wordfreq"])
def test_rewards_for_right_wrong_and_no_work(strength_out: Path, tmp_path: Path, name: str) -> None:
    task_dir, _ = _task(strength_out, "build", ORACLE_FILE[name])
    assert _reward(task_dir, _folder(task_dir / "oracle"), tmp_path / "oracle") == 1.0
    assert _reward(task_dir, CORRECT[name], tmp_path / "independent") == 1.0
    assert _reward(task_dir, WRONG[name], tmp_path / "wrong") == 0.0
    assert _reward(task_dir, {}, tmp_path / "give-up") == 0.0


def test_repair_probe_and_prefix_score_zero(strength_out: Path, tmp_path: Path) -> None:
    task_dir, task = _task(strength_out, "repair", "wordfreq.py")
    assert task.validation.status == "accepted", task.validation.reasons
    assert task.probes == ("probes/0",)
    probe = _folder(task_dir / "probes" / "0")
    assert "or None" in probe["wordfreq.py"]  # the session's second, still wrong, attempt
    assert _reward(task_dir, probe, tmp_path / "probe") == 0.0
    assert _reward(task_dir, {}, tmp_path / "give-up") == 0.0
    assert _reward(task_dir, CORRECT["wordfreq"], tmp_path / "independent") == 1.0
    build_dir, _ = _task(strength_out, "build", "wordfreq.py")  # the same attempts, as builds
    first = _folder(task_dir / "workspace")  # the session's first attempt (sorted ascending)
    for n, attempt in enumerate([first, probe]):
        assert _reward(build_dir, attempt, tmp_path / f"build-{n}") == 0.0
    assert task.verifier.tests == ("test_trajforge_derived.py",)  # the check's own tests + one
    assert task.validation.evidence.instruction is not None
    notes = task.validation.evidence.instruction.notes
    assert not [n for n in notes if "no oracle module" in n], notes  # derived tests: no interface
    sets = _sets(task.validation)
    assert "test_wordfreq::test_top_words" in sets.fail_to_pass
    assert "test_wordfreq::test_count_words" in sets.pass_to_pass  # passed before the fix


def test_revalidation_keeps_derived_tests_and_is_cached(strength_out: Path) -> None:
    before = {p: p.read_text() for p in strength_out.glob("tasks/*/tests/**/*.py")}
    rows = run.run(strength_out, local_context(ValidateConfig()))
    assert all(r.cached for r in rows), [(r.id, r.status) for r in rows]
    assert {p: p.read_text() for p in strength_out.glob("tasks/*/tests/**/*.py")} == before


PI = Path(__file__).parents[1] / "fixtures" / "sessions" / "pi"
GIVE_UP = "I could not complete this task."


@pytest.fixture(scope="module")
def families_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pi build, extend, repair and qa sessions and two data tasks, validated."""
    from trajforge.reconstruct.dataenv import build

    out = tmp_path_factory.mktemp("families")
    pipeline.run([PI / f"{name}.jsonl" for name in ("build", "extend", "repair", "qa")], out)
    build([], out, count=2, seed=5)
    run.run(out, local_context(), jobs=2)
    return out


def test_give_up_scores_zero_on_every_family(families_out: Path, tmp_path: Path) -> None:
    from trajforge.verifiers.validate.verify import verify_answer

    seen = set()
    for task_id, task in tasks_of(families_out).items():
        if task.validation.status != "accepted" or task.family in seen:
            continue
        seen.add(task.family)
        if task.family in ("qa", "data"):
            assert verify_answer(task, GIVE_UP).reward == 0.0, task_id
            assert verify_answer(task, task.answer or "").reward == 1.0, task_id
        else:
            task_dir = families_out / "tasks" / task_id
            assert _reward(task_dir, {}, tmp_path / task_id) == 0.0, task_id
    assert seen == {"build", "extend", "repair", "qa", "data"}


def test_extend_give_up_is_zero_although_a_test_already_passed(
    families_out: Path, tmp_path: Path
) -> None:
    """The issue's eval case: a third of extend's hidden tests passed on the starting
    workspace, so "the share of tests passed" paid 0.33 for doing nothing."""
    task_dir, task = _task(families_out, "extend", "inventory.py")
    sets = _sets(task.validation)
    assert sets.pass_to_pass == ("test_inventory::test_add",)
    assert len(sets.fail_to_pass) == 2
    assert _reward(task_dir, {}, tmp_path / "give-up") == 0.0
    assert _reward(task_dir, CORRECT["inventory"], tmp_path / "independent") == 1.0
    solved = CORRECT["inventory"]["inventory.py"]
    no_return = solved.replace("        return self.items[name]\n", "")  # add_item returns None
    assert no_return != solved
    # every fail-to-pass test passes, but the pass-to-pass test_add breaks: 0
    assert _reward(task_dir, {"inventory.py": no_return}, tmp_path / "breaks-add") == 0.0


@pytest.mark.parametrize(
    ("family", "file", "name"), [("build", "stats.py", "stats"), ("repair", "calc.py", "calc")]
)
def test_independent_solutions_score_one(
    families_out: Path, tmp_path: Path, family: str, file: str, name: str
) -> None:
    task_dir, task = _task(families_out, family, file)
    assert task.validation.status == "accepted", task.validation.reasons
    assert _reward(task_dir, CORRECT[name], tmp_path / "independent") == 1.0
    if name in WRONG:
        assert _reward(task_dir, WRONG[name], tmp_path / "wrong") == 0.0
