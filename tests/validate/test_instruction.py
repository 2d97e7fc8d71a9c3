"""The agent-facing instruction of accepted fixture tasks (validated with the mined teacher):
the session's request plus the interface the hidden tests use, with no hidden test name or
expected value in it; qa tasks unchanged; the rewrite keeps the validation cache valid."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from tests.validate.conftest import local_context, pick, tasks_of
from trajforge.records import Task, Validation, load_record
from trajforge.verifiers.teacher.teachers import MinedTeacher
from trajforge.verifiers.validate import run
from trajforge.verifiers.validate.config import ValidateConfig
from trajforge.verifiers.validate.instruction import REWRITE_VERSION, finalise
from trajforge.verifiers.validate.leaks import forbidden, mentions

QUICK = ValidateConfig(max_mutants=4, oracle_runs=1)


def _signatures(source: str) -> dict[str, str]:
    """Real ``def name(args)`` of every function in an oracle file, methods included."""
    return {
        node.name: f"def {node.name}({ast.unparse(node.args)})"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef)
    }


def _hidden(task_dir: Path, task: Task) -> dict[str, str]:
    return {p: (task_dir / "tests" / p).read_text() for p in task.verifier.tests}


def _no_leak(task_dir: Path, task: Task) -> None:
    assert task.request is not None
    hidden = _hidden(task_dir, task)
    items = forbidden(hidden, task.request)
    assert items.names and items.literals, "the fixture's hidden tests have names and values"
    leaked = [i for _, i in items.items() if mentions(task.instruction, i)]
    assert leaked == [], leaked


def _one(out: Path, family: str) -> tuple[Path, Task]:
    (task_dir,) = [p for p in (out / "tasks").iterdir() if p.name.startswith(f"{family}-")]
    return task_dir, load_record(Task, task_dir / "task.json")


def test_build_instruction_states_the_interface_without_leaks(validated: Path) -> None:
    task_dir, task = _one(validated, "build")
    assert task.validation.status == "accepted", task.validation.reasons
    real = _signatures((task_dir / "oracle" / "stats.py").read_text())
    assert real["median"] == "def median(xs)"
    assert task.request is not None and task.instruction.startswith(task.request + "\n\n")
    section = task.instruction[len(task.request) :]
    assert "## Interface" in section and "- `stats.py` (module `stats`)" in section
    assert f"  - `{real['mean']}`" in section and f"  - `{real['median']}`" in section
    for name in ("test_mean", "test_median_odd", "test_median_even", "2.5"):
        assert name not in task.instruction
    _no_leak(task_dir, task)
    info = task.validation.evidence.instruction
    assert info is not None
    assert info.rewrite == "offline" and info.dropped == () and info.version == REWRITE_VERSION


def test_qa_instruction_is_unchanged(validated: Path, reconstructed: Path) -> None:
    task_dir, task = _one(validated, "qa")
    original = load_record(Task, reconstructed / "tasks" / task_dir.name / "task.json")
    assert task.validation.status == "accepted"
    assert task.instruction == original.instruction and task.request is None
    assert "instruction" not in task.validation.evidence


def test_repair_instruction_states_the_visible_command(validated: Path) -> None:
    repairs = [t for t in tasks_of(validated).values() if t.family == "repair"]
    assert repairs
    for task in repairs:
        command = task.verifier.command
        assert task.verifier.kind == "command" and command
        assert task.instruction.endswith(
            f"## Interface\n\n`{command}` must pass (run from the workspace root).\n"
        ), task.instruction[-300:]


@pytest.fixture(scope="module")
def extended(reconstructed: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tasks = tasks_of(reconstructed)
    ids = sorted(
        i
        for i, t in tasks.items()
        if t.family == "extend" and t.source.harness == "pi" and t.verifier.tests
    )
    out = pick(reconstructed, tmp_path_factory.mktemp("extended"), ids[:1])
    rows = run.run(out, local_context(QUICK))
    assert [r.status for r in rows] == ["accepted"], rows
    return out


def test_extend_instruction_names_class_methods_with_real_signatures(extended: Path) -> None:
    task_dir, task = _one(extended, "extend")
    real = _signatures((task_dir / "oracle" / "inventory.py").read_text())
    assert real["remove_item"] == "def remove_item(self, name, qty=1)"
    lines = task.instruction.splitlines()
    at = lines.index("- `inventory.py` (module `inventory`)")
    assert lines[at + 1 : at + 6] == [
        "  - `class Inventory`",
        f"    - `{real['__init__']}`",
        f"    - `{real['add_item']}`",
        f"    - `{real['remove_item']}`",
        "    - attribute `items`",
    ]
    _no_leak(task_dir, task)


def test_rewrite_keeps_the_cache_and_a_rejection_restores_the_request(extended: Path) -> None:
    task_dir, before = _one(extended, "extend")
    rows = run.run(extended, local_context(QUICK))
    assert [r.cached for r in rows] == [True]
    _, after = _one(extended, "extend")
    assert after.instruction == before.instruction and after.request == before.request
    rejected = before.model_copy(update={"validation": Validation(status="rejected")})
    restored = finalise(task_dir, rejected, MinedTeacher())
    assert restored.instruction == before.request and restored.request is None


def test_tests_that_load_no_module_still_go_to_the_writer(
    validated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hidden tests that run the file rather than import it (dark-factory's tests load a
    rewritten copy of `index.ts`) give no interface section; the writer still reads them, so the
    instruction states what they rely on instead of the bare request."""
    from tests.teacher.server import Cassettes, load, serve
    from trajforge.verifiers.teacher.teachers import make_teacher

    source, task = _one(validated, "build")
    task_dir = tmp_path / source.name
    shutil.copytree(source, task_dir)
    (name,) = task.verifier.tests
    (task_dir / "tests" / name).write_text(
        "import runpy\n\n\ndef test_mean():\n"
        '    assert runpy.run_path("stats.py")["mean"]([1, 2]) == 1.5\n'
    )
    state = Cassettes(load("stats_instruction_ok"))
    with serve(state) as url:
        monkeypatch.setenv("OPENAI_BASE_URL", url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        teacher = make_teacher("openai:gpt-4.1-mini", QUICK, tmp_path / "out")
        done = finalise(task_dir, task, teacher)
    (request,) = state.requests
    asked = request["messages"][-1]["content"]
    assert "## Interface contract" not in asked and 'run_path("stats.py")' in asked
    assert "State where the work goes" in asked
    info = done.validation.evidence.instruction
    assert info is not None and info.rewrite == "teacher" and info.interface == ()
    assert done.request == task.request and done.instruction != task.request
